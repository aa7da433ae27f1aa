"""Parameter files: rebuilding keeps the user's values, adds new keys, drops unused ones."""

from __future__ import annotations

from pathlib import Path

from ultra_client.pipeline.params import merge_settings, parameter_path, read_parameter_file, write_parameter_file


def test_merge_keeps_edits_adds_and_drops() -> None:
    defaults = {"bench": {"benchmark": {"path": "a", "key_map": {"q_ls": "question", "gt_ls": "golden"}}, "seed": 42}}
    defaults["gen"] = {"model": "m"}
    user_benchmark = {"path": "mine.jsonl", "key_map": {"q_ls": "query", "pred_ls": "answer"}}
    existing = {"bench": {"benchmark": user_benchmark, "old": 1}, "judge": {"x": 1}}
    merged, report = merge_settings(defaults, existing)
    # A setting's value is the user's whole: key_map gains no default key and loses none of its own.
    assert merged == {"bench": {"benchmark": user_benchmark, "seed": 42}, "gen": {"model": "m"}}
    assert sorted(report.added) == ["bench.seed", "gen.model"]
    assert sorted(report.dropped) == ["bench.old", "judge"]


def test_write_keeps_env_references_unexpanded(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-never-be-written")
    target = parameter_path(tmp_path / "examples" / "x.yaml")
    assert target == tmp_path / "examples" / "parameters" / "x_parameter.yaml"
    write_parameter_file(target, "x.yaml", {"judge": {"llm": {"api_key": "${OPENAI_API_KEY}"}}})
    text = target.read_text(encoding="utf-8")
    assert "${OPENAI_API_KEY}" in text and "sk-should" not in text
    assert read_parameter_file(target) == {"judge": {"llm": {"api_key": "${OPENAI_API_KEY}"}}}
