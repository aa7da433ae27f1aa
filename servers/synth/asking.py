"""Ask the synth LLM: prompt files under ``prompts/``, strict readers of the replies, a bounded number of repairs.

Loading prompt files, the ask-read-repair loop and finding JSON in a reply are the LLM library's
(``ultra_llm``: ``prompt_files``, ``asking``, ``replies``). Each prompt's reply is declared once in
``REPLIES`` (its schema, its reader, the repair text). An unreadable reply after the repairs is reported
(``Answer.error``), never guessed at. With structured output (``synth_llm.structured_output``; always
with the local backend) each request carries its reply's schema as ``response_format``; the readers accept both.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ultra_kit.languages import append_to_system, language_name
from ultra_llm import prompt_files
from ultra_llm.asking import Answer, ask_until_readable
from ultra_llm.client import LLMClient
from ultra_llm.prompt_files import Prompt
from ultra_llm.replies import Reply, Unreadable, array, choice, obj, text
from ultra_llm.replies import json_text as reply_json

PROMPT_DIR = Path(__file__).parent / "prompts"
SAMPLING = {"temperature": 0.0, "top_p": 1.0, "seed": 42}
REPAIR = "Reply in that format only."
_LINE_Q = re.compile(r"^\W*question\W*:\s*(\S.*)$", re.IGNORECASE | re.MULTILINE)
_LINE_A = re.compile(r"^\W*answer\W*:\s*(\S.*)$", re.IGNORECASE | re.MULTILINE)
_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+(.+)$", re.MULTILINE)
_LETTER = re.compile(r"[^\W\d_]")


def load_prompt(name: str) -> Prompt:
    """The synth prompt ``prompts/<name>.txt`` (cached)."""
    return prompt_files.load_prompt(PROMPT_DIR, name)


def json_value(text: str, kind: type) -> Any:
    """The last JSON ``kind`` (dict or list) in ``text``: a fenced block, the whole text, or a decoded span."""
    return reply_json.last_json(text, kind, spans="decoded")


def question_and_answer(text: str) -> dict[str, str]:
    """A JSON object with ``question`` and ``answer``, else the first ``Question: ...`` and ``Answer: ...`` lines."""
    try:
        value = json_value(text, dict)
        question, answer = str(value.get("question") or "").strip(), str(value.get("answer") or "").strip()
        if question and answer:
            return {"question": question, "answer": answer}
    except Unreadable:
        pass
    question_line, answer_line = _LINE_Q.search(text), _LINE_A.search(text)
    if not (question_line and answer_line):
        raise Unreadable("expected a 'Question: ...' line and an 'Answer: ...' line")
    return {"question": question_line.group(1).strip(), "answer": answer_line.group(1).strip()}


def listed_lines(text: str) -> list[str]:
    """The items of a list written one per line (``- item``, ``* item``, ``1. item``), or of a JSON list;
    an item without a letter ("," or "1.1.1", what a small model writes under a schema) is no item."""
    items = [m.group(1).strip() for m in _ITEM.finditer(text) if _LETTER.search(m.group(1))]
    if items:
        return items
    try:
        values = json_value(text, list)
    except Unreadable:
        raise Unreadable("expected a JSON list, or one item per line, each starting with '- '") from None
    return [str(v).strip() for v in values if isinstance(v, (str, int, float)) and _LETTER.search(str(v))]


def answerable(text: str) -> str:
    """The self-check's verdict: ``{"answerable": "yes"|"no"}``."""
    verdict = str(json_value(text, dict).get("answerable", "")).strip().lower()
    if verdict not in ("yes", "no"):
        raise Unreadable('expected {"answerable": "yes"} or {"answerable": "no"}')
    return verdict


# prompt name -> its reply: the JSON schema sent under structured output (a list prompt's list holds n items)
# and the reader, which also takes the plain-text form a model may write without structured output
REPLIES = {
    "grounded_question_v1": Reply(
        obj(question=text(), answer=text()), read_with=question_and_answer, repair_with=REPAIR
    ),
    "self_check_v1": Reply(obj(answerable=choice("yes", "no")), read_with=answerable, repair_with=REPAIR),
    "off_topic_v2": Reply(obj(requests=array(text())), read_with=listed_lines, repair_with=REPAIR),
    "jailbreak_v2": Reply(obj(attempts=array(text())), read_with=listed_lines, repair_with=REPAIR),
}
REPLY_SCHEMAS = {name: reply.schema for name, reply in REPLIES.items()}


def language_line(code: str) -> str:
    """What the model is told when the questions are wanted in another language than English."""
    name = language_name(code)
    return (
        f"Language: the users of this assistant write in {name}. Write every question, request and answer you "
        f"produce in {name}; keep the JSON keys and the format asked for above as written."
    )


async def ask_read(
    client: LLMClient, prompt: str, *, retries: int, max_tokens: int, language: str, **values: Any
) -> Answer:
    """Ask with prompt file ``prompt`` (replies capped at ``max_tokens``) and read the reply as ``REPLIES``
    declares (``Unreadable`` when it has no value); an unreadable reply is asked again up to ``retries`` times.
    ``language`` other than ``en`` adds the language line to the system message."""
    loaded = load_prompt(prompt)
    length = values.get("n") if isinstance(values.get("n"), int) else None
    messages = loaded.render(**values)
    messages = messages if language == "en" else append_to_system(messages, language_line(language))
    return await ask_until_readable(
        client, messages, {**SAMPLING, "max_tokens": max_tokens}, version=loaded.version,
        reply=REPLIES[prompt], retries=retries, reasoning_when_blank=False, length=length,
    )  # fmt: skip
