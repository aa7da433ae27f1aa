"""``qa_boxed`` and ``qa_rag_boxed``: one prompt per question, with or without its retrieved passages."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from ultra_base.errors import InputError
from ultra_kit.factory import tool_hints

TemplateDirs = Annotated[list[str], Field(description="your template folders, searched before the built-in ones")]


class PromptInfo(TypedDict):
    template: str
    template_path: str
    prompts: int


class PromptResult(TypedDict):
    prompt_ls: list[str]
    prompt_info: PromptInfo


def _info(template, count: int) -> PromptInfo:
    return {"template": template.version, "template_path": str(template.path), "prompts": count}


@tool_hints(read_only=True, idempotent=True)
def qa_boxed(
    q_ls: Annotated[list[str], Field(description="the questions")],
    *,
    qa_template: Annotated[str, Field(description="template name or .jinja path; gets `question`")],
    template_dirs: TemplateDirs,
) -> PromptResult:
    """One prompt per question (no passages), asking for the answer inside \\boxed{}."""
    from servers.prompt.rendering import load_template  # jinja2 on first use: listing the tools needs none

    template = load_template(qa_template, template_dirs=template_dirs)
    prompts = [template.render(question=question) for question in q_ls]
    return {"prompt_ls": prompts, "prompt_info": _info(template, len(prompts))}


@tool_hints(read_only=True, idempotent=True)
def qa_rag_boxed(
    q_ls: Annotated[list[str], Field(description="the questions")],
    ret_psg: Annotated[list[list[str]], Field(description="the retrieved passages of each question, best first")],
    *,
    rag_template: Annotated[str, Field(description="template name or .jinja path; gets `question` and `passages`")],
    template_dirs: TemplateDirs,
    max_passage_words: Annotated[int, Field(description="cut each passage to this many words; 0 = whole", ge=0)],
) -> PromptResult:
    """One prompt per question with its retrieved passages, asking for the answer inside \\boxed{}."""
    from servers.prompt.rendering import load_template, shorten

    if len(ret_psg) != len(q_ls):
        raise InputError(f"ret_psg has {len(ret_psg)} passage lists for {len(q_ls)} questions; they must be aligned")
    template = load_template(rag_template, template_dirs=template_dirs)
    prompts = [
        template.render(question=question, passages=[shorten(p, max_passage_words) for p in passages])
        for question, passages in zip(q_ls, ret_psg, strict=True)
    ]
    return {"prompt_ls": prompts, "prompt_info": _info(template, len(prompts))}


TOOLS = [qa_boxed, qa_rag_boxed]
