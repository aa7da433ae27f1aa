"""A NeMo job's mistakes and unsupported parts are errors naming the file and the JSON path, at build time."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.compat.nemo_support import copy_examples, edited_job, ultra
from tests.conftest import ROOT


def build_error(job: Path, tmp_path: Path, **env: str) -> str:
    result = ultra("build", str(job), tmp_path=tmp_path, **env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert not (job.parent / "compiled").exists()  # nothing compiled, no derived file written
    return result.stderr


def test_hf_dataset_is_refused_with_how_to_use_a_local_copy(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path)
    job = edited_job(
        folder, "beir_standard", "hub", lambda _, t: t["dataset"].update(files_url="hf://datasets/nvidia/nfcorpus")
    )
    error = build_error(job, tmp_path)
    assert f"{job}: $.tasks.my-beir-task.dataset.files_url" in error
    assert "never downloads datasets" in error and 'point files_url at the local copy: "file://DIR"' in error


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [("recal_5", "recall_5"), ("ndcg_10", "ndcg_cut_10"), ("faithfullness", "faithfulness"),
     ("answer_similiarity", "answer_similarity")],
)  # fmt: skip
def test_unknown_metric_gets_did_you_mean(typo: str, suggestion: str, tmp_path: Path) -> None:
    folder = copy_examples(tmp_path)
    job = edited_job(folder, "ragas_answers", "typo", lambda _, t: t["metrics"].update(mine={"type": typo}))
    error = build_error(job, tmp_path)
    assert f"$.tasks.my-ragas-task.metrics.mine.type: unknown metric '{typo}'; did you mean {suggestion}?" in error
    assert "recall_<k>, ndcg_cut_<k>, faithfulness" in error  # the known names, from the table


@pytest.mark.parametrize(
    ("edit", "where", "words"),
    [
        (lambda j, t: t["params"].update(top_k=5), "$.tasks.my-beir-task.params.top_k", "'top_k' is not supported"),
        (lambda j, t: j.update(project="x"), "$.project", "'project' is not supported"),
        (lambda j, t: t["params"]["judge_llm"]["api_endpoint"].update(form="nim"),
         "$.tasks.my-beir-task.params.judge_llm.api_endpoint.form", "did you mean 'format'?"),
        (lambda j, t: t["params"]["judge_llm"]["api_endpoint"].update(format="llama_stack"),
         "$.tasks.my-beir-task.params.judge_llm.api_endpoint.format", "['nim', 'openai'] (OpenAI-compatible"),
        (lambda j, t: t["metrics"]["recall_5"].update(params={"k": 5}),
         "$.tasks.my-beir-task.metrics.recall_5.params", "'params' is not supported"),
        (lambda j, t: j.update(type="retriever"), "$.type", "only NeMo's 'rag' evaluation type"),
        (lambda j, t: t["params"].update(judge_timout=t["params"].pop("judge_timeout")),
         "$.tasks.my-beir-task.params.judge_timout", "did you mean 'judge_timeout'?"),
        (lambda j, t: j["tasks"].update(other=t), "$.tasks", "one task per job"),
        (lambda j, t: t.update(type="mteb"), "$.tasks.my-beir-task.type", "known: ['beir', 'squad', 'ragas']"),
        (lambda j, t: t["metrics"].update(c={"type": "context_recall"}), "$.tasks.my-beir-task.metrics.c",
         "context_recall needs reference answers, which a beir task's dataset does not give"),
        (lambda j, t: t["params"]["judge_embeddings"]["api_endpoint"].update(url="http://elsewhere:9/v1/embeddings"),
         "$.tasks.my-beir-task.metrics.answer_relevancy", "judge_embeddings must be served there too"),
    ],
)  # fmt: skip
def test_unsupported_fields_are_errors_naming_them(edit, where: str, words: str, tmp_path: Path) -> None:
    folder = copy_examples(tmp_path)
    error = build_error(edited_job(folder, "beir_standard", "bad", edit), tmp_path)
    assert f"bad.json: {where}: " in error and words in error


def test_retrieval_metric_on_a_ragas_task_says_what_gives_qrels(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path)
    job = edited_job(folder, "ragas_answers", "ragas_recall", lambda _, t: t["metrics"].update(r={"type": "recall_5"}))
    error = build_error(job, tmp_path)
    assert "metrics.r: recall_5 needs judged documents (qrels)" in error and "need a beir or squad task" in error


def test_dataset_outside_the_read_roots_is_refused(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path / "inside")
    job = edited_job(folder, "beir_standard", "outside", lambda _, t: t["dataset"].update(files_url="file:///etc/"))
    error = build_error(job, tmp_path)
    assert "$.tasks.my-beir-task.dataset.files_url resolves to /etc, outside the folders tools may read" in error


def test_beir_qrels_without_nemos_header_is_an_error_at_its_file(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path)
    qrels = folder / "data/beir/qrels/test.tsv"
    qrels.write_text("\n".join(qrels.read_text().splitlines()[1:]) + "\n")
    error = build_error(folder / "beir_standard.json", tmp_path)
    assert f"{qrels}" in error and "expected the header row query-id<TAB>corpus-id<TAB>score" in error


JUDGE_CAPS = yaml.safe_load((ROOT / "servers/judge/parameter.yaml").read_text(encoding="utf-8"))["caps"]


def _over(name: str, value: int) -> str:
    cap = JUDGE_CAPS[name]
    return f"judge_llm.{name} {value:,} is more than the cap caps.{name} = {cap:,} of the judge server; it multiplies"


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("judge_max_workers", 1e9, _over("max_workers", 10**9)),
        ("judge_max_workers", JUDGE_CAPS["max_workers"] + 1, _over("max_workers", JUDGE_CAPS["max_workers"] + 1)),
        ("judge_max_workers", 1.5, "judge_llm.max_workers must be a whole number >= 1, got 1.5"),
        ("judge_max_workers", "8", "judge_llm.max_workers must be a whole number >= 1, got '8'"),
        ("judge_max_workers", 0, "judge_llm.max_workers must be >= 1, got 0"),
        ("judge_max_retries", JUDGE_CAPS["max_retries"] + 1, _over("max_retries", JUDGE_CAPS["max_retries"] + 1)),
        ("judge_timeout", 0, "expected a finite number of seconds > 0, got 0"),
    ],
    ids=lambda v: repr(v)[:20],
)
def test_judge_limits_the_judge_would_refuse_are_refused_at_build(key: str, value, words: str, tmp_path: Path) -> None:
    folder = copy_examples(tmp_path)
    job = edited_job(folder, "beir_standard", "limits", lambda _, t: t["params"].update({key: value}))
    error = build_error(job, tmp_path)
    assert f"limits.json: $.tasks.my-beir-task.params.{key}: {words}" in error


def test_the_build_refuses_max_workers_with_the_judges_own_message_and_takes_the_cap(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path)
    job = edited_job(folder, "beir_standard", "big", lambda _, t: t["params"].update(judge_max_workers=1e9))
    message = build_error(job, tmp_path).split("params.judge_max_workers: ", 1)[1].strip()
    rubric = "rubrics=[{name: polite, criteria: Is it polite, scale: [0, 1], inputs: [answer]}]"
    called = ultra("call", "judge.rubric_judge", rubric, 'pred_ls=["Hi."]', "judge_llm.max_workers=1000000000",
                   tmp_path=tmp_path, OPENAI_API_KEY="sk-not-used")  # fmt: skip
    assert called.returncode == 1 and called.stderr.strip().endswith(message)  # the judge's words at run time
    cap = JUDGE_CAPS["max_workers"]
    job = edited_job(folder, "beir_standard", "at_cap", lambda _, t: t["params"].update(judge_max_workers=float(cap)))
    assert ultra("build", str(job), tmp_path=tmp_path).returncode == 0
    params = yaml.safe_load((folder / "compiled/parameters/at_cap_parameter.yaml").read_text(encoding="utf-8"))
    assert params["judge"]["judge_llm"]["max_workers"] == cap
