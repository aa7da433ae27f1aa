"""Build ``xquad_slice.jsonl``: a parallel slice of XQuAD with synthetic predictions beside the golds.

Usage: ``python data/multilingual/make_slice.py XQUAD_DIR`` where XQUAD_DIR holds ``xquad.<lang>.json``
from google-deepmind/xquad (CC BY-SA 4.0). The same questions are taken in every language (every
STEP-th question of the file, whose order is the same in all languages), and each gets one synthetic
prediction made from its gold answer and context by a perturbation chosen by the item's position
(deterministic: the same input gives the same file):

- ``exact``: the gold itself;
- ``truncated``: the gold without its last word (its last third of characters in zh and th);
- ``extended``: the gold with the context's next words (next characters in zh and th) appended;
- ``other_span``: the gold answer of another question about the same paragraph (or the paragraph's
  first words when it has one question only);
- ``decorated``: the gold in quotes with a full stop, upper-cased, after an article of the language
  (where MLQA removes one), to exercise punctuation, case and article rules;
- ``shifted``: the context's span starting a few characters before the gold and ending before its end.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

LANGUAGES = ["zh", "ar", "de", "es", "hi", "vi", "th", "en"]
STEP = 30  # 1190 questions per language -> 40 each
CHARACTER_LANGUAGES = {"zh", "th"}
ARTICLE = {"en": "The ", "es": "El ", "de": "Die ", "ar": "ال", "vi": "Những "}
KINDS = ["exact", "truncated", "extended", "other_span", "decorated", "shifted"]


def questions(path: Path) -> list[tuple[str, dict]]:
    """(context, qa) for every question of an XQuAD file, in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    return [(p["context"], qa) for article in data for p in article["paragraphs"] for qa in p["qas"]]


def truncated(gold: str, language: str) -> str:
    words = gold.split()
    if language not in CHARACTER_LANGUAGES and len(words) > 1:
        return " ".join(words[:-1])
    keep = max(1, len(gold) - max(1, len(gold) // 3))
    return gold[:keep]


def extended(gold: str, start: int, context: str, language: str) -> str:
    after = context[start + len(gold) :]
    extra = after[:4] if language in CHARACTER_LANGUAGES else " ".join(after.split()[:2])
    sep = " " if language not in CHARACTER_LANGUAGES and after[:1].isspace() else ""
    return (gold + sep + extra).strip()


def other_span(qa: dict, siblings: list[dict], context: str) -> str:
    for other in siblings:
        text = other["answers"][0]["text"]
        if other["id"] != qa["id"] and text != qa["answers"][0]["text"]:
            return text
    return " ".join(context.split()[:3])


def shifted(gold: str, start: int, context: str) -> str:
    begin = max(0, start - 6)
    end = start + max(1, (2 * len(gold)) // 3)
    return context[begin:end].strip() or gold


def perturb(kind: str, qa: dict, context: str, siblings: list[dict], language: str) -> str:
    gold = qa["answers"][0]["text"]
    start = qa["answers"][0]["answer_start"]
    if kind == "truncated":
        return truncated(gold, language)
    if kind == "extended":
        return extended(gold, start, context, language)
    if kind == "other_span":
        return other_span(qa, siblings, context)
    if kind == "decorated":
        return f"{ARTICLE.get(language, '')}\u201c{gold.upper()}\u201d."
    if kind == "shifted":
        return shifted(gold, start, context)
    return gold


def build(xquad_dir: Path) -> list[dict]:
    """The slice's records, language by language."""
    records = []
    for language in LANGUAGES:
        items = questions(xquad_dir / f"xquad.{language}.json")
        by_context: dict[str, list[dict]] = {}
        for context, qa in items:
            by_context.setdefault(context, []).append(qa)
        for position, (context, qa) in enumerate(items[::STEP]):
            kind = KINDS[position % len(KINDS)]
            records.append(
                {
                    "id": f"{qa['id']}-{language}",
                    "language": language,
                    "question": qa["question"],
                    "golden_answers": [answer["text"] for answer in qa["answers"]],
                    "pred_answer": perturb(kind, qa, context, by_context[context], language),
                    "perturbation": kind,
                }
            )
    return records


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: python data/multilingual/make_slice.py XQUAD_DIR")
    records = build(Path(sys.argv[1]))
    out = Path(__file__).with_name("xquad_slice.jsonl")
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    print(f"{len(records)} records -> {out}")


if __name__ == "__main__":
    main()
