"""Prompt files: loading from a folder, the version hash, filling placeholders once, and clear errors."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ultra_base.errors import InputError
from ultra_llm.prompt_files import load_prompt

ROOT = Path(__file__).resolve().parents[2]
SERVER_PROMPTS = [ROOT / "servers" / "judge" / "prompts", ROOT / "servers" / "synth" / "prompts"]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_sections_version_and_one_pass_filling(tmp_path: Path) -> None:
    text = "=== system ===\nYou grade {what}.\n=== user ===\nQ: {question}\n=== assistant ===\nOK\n"
    write(tmp_path, "grade_v1", text)
    prompt = load_prompt(tmp_path, "grade_v1")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert (prompt.sha256, prompt.version) == (digest, f"grade_v1@{digest[:12]}")
    assert prompt.describe() == {"name": "grade_v1", "sha256": digest, "version": f"grade_v1@{digest[:12]}"}
    assert prompt.fields == {"what", "question"}
    # a filled value that looks like a placeholder stays as it is; numbers are written as text
    messages = prompt.render(what="answers", question="What is {what}? Pick 1 of", extra=3)
    assert messages == [
        {"role": "system", "content": "You grade answers."},
        {"role": "user", "content": "Q: What is {what}? Pick 1 of"},
        {"role": "assistant", "content": "OK"},
    ]
    assert load_prompt(tmp_path, "grade_v1") is prompt  # loaded once


def test_a_missing_value_is_named(tmp_path: Path) -> None:
    write(tmp_path, "ask_v1", "=== user ===\n{question} in {passage}\n")
    with pytest.raises(InputError, match=r"prompt ask_v1 needs values for \['passage'\]"):
        load_prompt(tmp_path, "ask_v1").render(question="Why?")


def test_an_unknown_name_lists_the_known_ones(tmp_path: Path) -> None:
    write(tmp_path, "b_v1", "=== user ===\nb\n")
    write(tmp_path, "a_v1", "=== user ===\na\n")
    with pytest.raises(InputError, match=r"no prompt named 'c_v1'; known prompts: \['a_v1', 'b_v1'\]") as raised:
        load_prompt(tmp_path, "c_v1")
    assert str(tmp_path / "c_v1.txt") in str(raised.value)


def test_text_before_the_first_section_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "loose_v1", "Grade this.\n=== user ===\n{question}\n")
    with pytest.raises(InputError, match="must start with a '=== system ===' or '=== user ===' line") as raised:
        load_prompt(tmp_path, "loose_v1")
    assert str(raised.value).startswith(f"{path}:1: ")  # the file and the line


def test_a_file_without_sections_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "empty_v1", "\n\n")
    with pytest.raises(InputError, match="the prompt file has no sections"):
        load_prompt(tmp_path, "empty_v1")


@pytest.mark.parametrize("folder", SERVER_PROMPTS, ids=lambda folder: folder.parent.name)
def test_every_server_prompt_loads_with_the_hash_of_its_file(folder: Path) -> None:
    files = sorted(folder.glob("*.txt"))
    assert len(files) >= 4
    for path in files:
        prompt = load_prompt(folder, path.stem)
        assert prompt.version == f"{path.stem}@{hashlib.sha256(path.read_bytes()).hexdigest()[:12]}"
        roles = [role for role, _ in prompt.sections]
        assert roles and roles[-1] == "user" and set(roles) <= {"system", "user"}, path
        messages = prompt.render(**dict.fromkeys(prompt.fields, "VALUE"))
        assert not any("{" + name + "}" in m["content"] for m in messages for name in prompt.fields)
