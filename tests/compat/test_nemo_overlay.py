"""`--param` with a NeMo job lays settings over the compiled ones (in process): the shipped offline.yaml, the
keys of judge_llm merged one by one, sections of unused servers skipped, and what api_key becomes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.compat.nemo_support import EXAMPLES, copy_examples, edited_job
from ultra_client.compat.nemo import compile_if_job
from ultra_client.errors import UltraError


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ULTRA_READ_ROOTS", str(tmp_path))
    return copy_examples(tmp_path)


def compiled_settings(job: Path, overlay: Path | None = None) -> dict:
    run = compile_if_job(job, overlay)
    assert run is not None
    return yaml.safe_load(run.parameters.read_text())


def test_offline_overlay_switches_the_judge_and_the_embeddings_to_local_models(folder: Path) -> None:
    params = compiled_settings(folder / "ragas_answers.json", EXAMPLES / "offline.yaml")
    judge = params["judge"]["judge_llm"]
    assert (judge["backend"], judge["model_id"], judge["api_key"], judge["embedding_model"]) == (
        "local",
        "smollm2",
        "",
        "",
    )
    assert (judge["timeout"], judge["max_workers"]) == (300, 16)  # the job's limits stay
    embeddings = params["evaluation"]["similarity_embeddings"]
    assert (embeddings["backend"], embeddings["base_url"], embeddings["api_key"]) == ("local", "", "")


def test_overlay_section_of_an_unused_server_is_skipped_with_a_note(folder: Path, capsys) -> None:
    job = edited_job(folder, "beir_standard", "retrieval", lambda _, t: t.update(metrics={"r": {"type": "recall_5"}}))
    params = compiled_settings(job, EXAMPLES / "offline.yaml")
    assert (
        "judge" not in params
        and "judge" not in yaml.safe_load((folder / "compiled/retrieval.yaml").read_text())["servers"]
    )
    assert "uses no judge server; section skipped" in capsys.readouterr().err


def test_overlay_with_an_unknown_setting_is_refused(folder: Path, tmp_path: Path) -> None:
    overlay = tmp_path / "bad.yaml"
    overlay.write_text("judge:\n  judge_lm: {backend: local}\n")
    with pytest.raises(UltraError, match="has no setting 'judge_lm'; did you mean judge_llm"):
        compile_if_job(folder / "ragas_answers.json", overlay)


@pytest.mark.parametrize(
    ("key", "written", "secret"),
    [("${MY_KEY}", "${MY_KEY}", None), (None, "", None), ("", "", None),
     ("nvapi-literal-key-123", "${NEMO_JUDGE_LLM_API_KEY}", "nvapi-literal-key-123"),
     # Not one reference, as the settings read it (ultra_base.variable_counts.reference): the compiler's own
     # pattern, anchored with `$`, took a trailing newline for part of one, and the run would have sent MY_KEY's
     # value with a newline after it; it is a literal key, kept out of the files like any other
     ("${MY_KEY}\n", "${NEMO_JUDGE_LLM_API_KEY}", "${MY_KEY}\n"),
     ("${A}${B}", "${NEMO_JUDGE_LLM_API_KEY}", "${A}${B}")],
)  # fmt: skip
def test_api_key_is_a_reference_never_a_literal(
    folder: Path, key: str | None, written: str, secret: str | None
) -> None:
    def set_key(_, task):
        endpoint = task["params"]["judge_llm"]["api_endpoint"]
        endpoint.pop("api_key")
        if key is not None:
            endpoint["api_key"] = key

    job = edited_job(folder, "ragas_answers", "keyed", set_key)
    run = compile_if_job(job)
    assert yaml.safe_load(run.parameters.read_text())["judge"]["judge_llm"]["api_key"] == written
    assert run.compiled.secrets.get("NEMO_JUDGE_LLM_API_KEY") == secret
    assert "literal" not in run.parameters.read_text() + run.pipeline.read_text()


@pytest.mark.parametrize(
    ("url", "base"),
    [("http://h:8000/v1/chat/completions", "http://h:8000/v1"), ("http://h:8000/v1/completions", "http://h:8000/v1"),
     ("http://h:8000/v1/", "http://h:8000/v1"), ("http://h:8000/v1/chat/completions/", "http://h:8000/v1")],
)  # fmt: skip
def test_judge_url_route_is_stripped_to_a_base_url(folder: Path, url: str, base: str) -> None:
    def set_url(_, task):
        task["params"]["judge_llm"]["api_endpoint"]["url"] = url
        task["params"].pop("judge_embeddings")
        task["metrics"] = {"f": {"type": "faithfulness"}}

    assert (
        compiled_settings(edited_job(folder, "ragas_answers", "url", set_url))["judge"]["judge_llm"]["base_url"] == base
    )


def test_the_compiled_folder_becomes_a_read_root(folder: Path) -> None:
    import os

    compile_if_job(folder / "beir_standard.json")
    roots = os.environ["ULTRA_READ_ROOTS"].split(os.pathsep)
    assert str((folder / "compiled").resolve()) in roots  # the tools read the derived qrels there
