"""MT-RAG's full evaluation: IDK conditioning against the 477 stored records, the evaluated-record
layout, and examples/mtrag_full.yaml end to end through `ultra run` with the local OpenAI stub."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from servers.evaluation.mtrag import layout
from servers.evaluation.mtrag.scores import rb_agg, rouge_l_nostem
from tests.conftest import ROOT, run_ultra
from tests.evaluation.helpers import score_mtrag
from tests.support.openai_stub import OpenAIStub, content_of
from tests.support.summary_check import check_summary
from ultra_base.errors import InputError

CONFORMANCE = ROOT / "tests/data/mtrag/conformance_477.jsonl"
TASKS = ROOT / "data/mtrag/responses-10.jsonl"
PIPELINE = ROOT / "examples/mtrag_full.yaml"
PARAMS = ROOT / "examples/parameters/mtrag_full_parameter.yaml"
IBM_FIELDS = (
    "Recall", "RougeL_stemFalse", "BertscoreP", "BertscoreR", "BertKPrec", "Extractiveness_RougeL", "Length",
    "RB_agg", "idk_eval", "RL_F", "RB_llm", "RL_F_idk", "RB_llm_idk", "RB_agg_idk",
)  # fmt: skip


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def idk_from_stored(record: dict) -> float:
    """The IDK judgement implied by MT-RAG's stored ``conditional_idk`` (1 = behaved as it should)."""
    correct = record["expected"]["conditional_idk"]
    return correct if record["answerability"] in ("UNANSWERABLE", "CONVERSATIONAL") else 1 - correct


# --- conditioning against MT-RAG's stored values ------------------------------------------------------


def test_conditioning_reproduces_all_three_stored_idk_metrics_for_all_477() -> None:
    """RB_agg_idk, RB_llm_idk and RL_F_idk of every record follow from the raw values and the IDK rule.

    The raw RL_F / RB_llm are not stored; where the rule passes the raw value through, the stored
    conditioned value stands in for it, and elsewhere a decoy (0.37) must be overridden by the rule.
    """
    rows = load(CONFORMANCE)
    ids = [f"{r['task_id']}|{r['model_id']}" for r in rows]
    sources = {key: {"task_id": key} for key in ids}
    passes = [r["answerability"] in ("ANSWERABLE", "PARTIAL") and idk_from_stored(r) != 1 for r in rows]
    stored = [r["expected"] for r in rows]
    columns = {
        "RougeL_stemFalse": [s["RougeL_stemFalse"] for s in stored],
        "BertscoreR": [s["BertscoreR"] for s in stored],
        "RB_agg": [rb_agg(s["BertscoreR"], s["RougeL_stemFalse"], s["BertKPrec_max"]) for s in stored],
    }
    judged = {
        "idk_eval": [idk_from_stored(r) for r in rows],
        "RL_F": [s["RL_F_idk"] if p else 0.37 for s, p in zip(stored, passes, strict=True)],
        "RB_llm": [s["RB_llm_idk"] if p else 0.37 for s, p in zip(stored, passes, strict=True)],
    }
    labels = [r["answerability"] for r in rows]
    records = layout.evaluated_records(sources, ids, labels, columns, judged, "conformance")
    assert len(records) == 477 and sum(not p for p in passes) > 20
    for record, s in zip(records, stored, strict=True):
        metrics = record["metrics"]
        assert metrics["RB_agg_idk"] == [s["RB_agg_idk"]], record["task_id"]  # bit for bit
        assert metrics["RL_F_idk"] == [s["RL_F_idk"]], record["task_id"]
        assert metrics["RB_llm_idk"] == [s["RB_llm_idk"]], record["task_id"]


@pytest.mark.parametrize(
    ("value", "answerability", "idk", "expected"),
    [
        (None, "ANSWERABLE", 0.0, None),  # a failed judge stays unknown
        (None, "ANSWERABLE", 1.0, 0.0),  # an IDK answer scores 0 whatever the judge said
        (None, "UNANSWERABLE", 1.0, 1.0),
        (0.8, "PARTIAL", None, None),  # no IDK judgement: nothing to condition on
        (0.8, "PARTIAL", 0.5, 0.8),
        (0.8, "CONVERSATIONAL", 0.5, 0.0),
    ],
)
def test_conditioning_of_missing_values(value, answerability, idk, expected) -> None:
    assert layout.conditioned(value, answerability, idk) == expected


def test_evaluate_mtrag_takes_answerability_alone_and_refuses_idk_alone() -> None:
    """mtrag_full passes answerability_ls to step 1 without IDK values: nothing is conditioned there."""
    scored = score_mtrag(["a b"], ["a b c"], answerability_ls=["ANSWERABLE"], mtrag_metrics=["RougeL_stemFalse"])
    assert scored["RougeL_stemFalse"] == [pytest.approx(0.8)]
    with pytest.raises(InputError, match="needs answerability_ls as well as idk_ls"):
        score_mtrag(["a b"], ["a b c"], idk_ls=[1], mtrag_metrics=["RougeL_stemFalse"])


# --- judge inputs and input errors --------------------------------------------------------------------


def test_judge_inputs_are_built_as_mtrag_builds_them() -> None:
    task = load(TASKS)[2]
    inputs = layout.judge_inputs([task["input"]], [task["targets"]], [task["contexts"]])
    turns = task["input"]
    assert inputs["inquiry_ls"][0].splitlines()[0] == f"user: {turns[0]['text']}".splitlines()[0]
    assert inputs["inquiry_ls"][0].endswith(f"user: {turns[-1]['text']}")
    assert inputs["inquiry_ls"][0].count("agent: ") == sum(t["speaker"] == "agent" for t in turns)
    assert inputs["reference_ls"] == [task["targets"][0]["text"]]
    assert inputs["passage_ls"] == [[c["text"] for c in task["contexts"]]]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: layout.judge_inputs([[{"text": "hi"}]], ["a"], [[]]), "no 'speaker' field"),
        (lambda: layout.judge_inputs([7], ["a"], [[]]), "q_ls[0]: expected MT-RAG's input turns"),
        (lambda: layout.judge_inputs(["q"], [[]], [[]]), "gt_ls[0]: expected MT-RAG targets"),
        (lambda: layout.judge_inputs(["q"], ["a"], [[{"document_id": "d"}]]), "ctx_ls[0]: expected"),
        (lambda: layout.judge_inputs(["q", "r"], ["a"], [[]]), "gt_ls has 1"),
        (lambda: layout.judged_values([{"id": "b", "status": "ok"}], "idk", ["a"], "idk_judge"), "for id 'b'"),
        (lambda: layout.judged_values([], "idk", ["a"], "idk_judge"), "judged 0 items but there are 1"),
        (lambda: layout.algorithmic_columns({"Recall": [1.0]}, 1), "no RB_agg"),
        (lambda: layout.records_by_id([{"task_id": "a"}, {"task_id": "a"}], "f.jsonl"), "f.jsonl:2: task_id 'a'"),
    ],
)
def test_bad_inputs_are_input_errors(call, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        call()


# --- the pipeline end to end ---------------------------------------------------------------------------

IDK_REPLIES = {0: "yes", 8: "yes", 5: "partial"}  # by record; the others "no"
UNREADABLE_RATING = 3  # record whose RAD-Bench reply has no rating


def scripted_judge(tasks: list[dict]):
    """Replies keyed on the answer (or on statements naming the record): fixed values per record."""
    by_answer = {t["predictions"][0]["text"]: i for i, t in enumerate(tasks)}

    def record_of(text: str, before: str) -> int:
        answer = text.rsplit("Answer: ", 1)[1].rsplit(before, 1)[0].strip()
        return by_answer[answer]

    def reply(request: dict) -> str:
        text = content_of(request)
        if "classify how they respond" in text:
            i = record_of(text, "Your JSON object:")
            return json.dumps({"attempted": "yes", "idk": IDK_REPLIES.get(i, "no")})
        if "self-contained statements" in text:
            i = record_of(text, "Your JSON object:")
            return json.dumps({"statements": [f"claim {k} of record {i}" for k in range(i % 3 + 1)]})
        if "check statements against" in text:
            i = int(re.findall(r"of record (\d+)", text)[0])
            n = i % 3 + 1
            return json.dumps([1] * (i % 2) + [0] * (n - i % 2))
        if "grade the answers of a retrieval-augmented" in text:
            i = record_of(text, "Your single line")
            return "I would rather not say." if i == UNREADABLE_RATING else f"##final score: {i % 10 + 1}"
        raise AssertionError(f"unexpected prompt: {text[:200]}")

    return reply


def params_for(tmp_path: Path, base_url: str) -> Path:
    params = yaml.safe_load(PARAMS.read_text())
    params["judge"]["judge_llm"].update(base_url=base_url, model_id="stub", api_key="", max_retries=1)
    params["judge"].update(judge_cache="", save_path=str(tmp_path / "judge"))
    params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    return path


def test_mtrag_full_end_to_end_with_scripted_judges(tmp_path: Path) -> None:
    tasks = load(TASKS)
    with OpenAIStub(scripted_judge(tasks)) as stub:
        params = params_for(tmp_path, stub.base_url)
        env = {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}
        result = run_ultra(
            "run", str(PIPELINE), "--param", str(params), "--output-dir", str(tmp_path / "runs"),
            cwd=ROOT, env=env, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        check_summary(result, ROOT)
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    memory = json.loads((folder / "memory.json").read_text())
    path = Path(memory["result_path"])
    path = path if path.is_absolute() else folder / path
    records = load(path)
    assert [r["task_id"] for r in records] == [t["task_id"] for t in tasks]
    algorithmic = memory["algorithmic_res"]
    assert "RB_agg" in algorithmic and "RB_agg_idk" not in algorithmic  # step 1 had no IDK values yet
    for i, (record, task) in enumerate(zip(records, tasks, strict=True)):
        metrics = record["metrics"]
        assert {k: v for k, v in record.items() if k != "metrics"} == layout.without_nan(task)  # fields kept
        has_passages = bool(task["contexts"])
        assert set(metrics) == set(IBM_FIELDS) - (set() if has_passages else set(layout.PER_PASSAGE_FIELDS))
        prediction = task["predictions"][0]["text"]
        assert metrics["Length"] == [len(prediction)]
        assert metrics["RougeL_stemFalse"] == [rouge_l_nostem(task["targets"][0]["text"], prediction)]
        assert metrics["BertscoreR"] == [algorithmic["BertscoreR"][i]]
        kprec = max(metrics["BertKPrec"]) if has_passages else None
        assert len(metrics.get("BertKPrec", [])) == len(task["contexts"])
        assert metrics["RB_agg"] == [rb_agg(metrics["BertscoreR"][0], metrics["RougeL_stemFalse"][0], kprec)]
        idk = {"yes": 1.0, "partial": 0.5, "no": 0.0}[IDK_REPLIES.get(i, "no")]
        rl_f = (i % 2) / (i % 3 + 1)
        rb_llm = None if i == UNREADABLE_RATING else (i % 10 + 1) / 10
        assert metrics["idk_eval"] == [idk] and metrics["RL_F"] == [rl_f] and metrics["RB_llm"] == [rb_llm]
        label = task["answerability"][0]
        if label in ("UNANSWERABLE", "CONVERSATIONAL"):
            expected = dict.fromkeys(("RL_F_idk", "RB_llm_idk", "RB_agg_idk"), 1.0 if idk == 1 else 0.0)
        elif idk == 1:
            expected = dict.fromkeys(("RL_F_idk", "RB_llm_idk", "RB_agg_idk"), 0.0)
        else:
            expected = {"RL_F_idk": rl_f, "RB_llm_idk": rb_llm, "RB_agg_idk": metrics["RB_agg"][0]}
        assert {k: metrics[k][0] for k in expected} == expected, task["task_id"]
    assert tasks[0]["answerability"] == ["UNANSWERABLE"] and records[0]["metrics"]["RB_agg_idk"] == [1.0]
    summary = memory["eval_res"]
    assert summary["n_records"] == 10 and summary["missing_RB_llm"] == 1 and summary["missing_RB_llm_idk"] == 1
    rb_llm_idk = [r["metrics"]["RB_llm_idk"][0] for r in records if r["metrics"]["RB_llm_idk"][0] is not None]
    assert summary["avg_RB_llm_idk"] == pytest.approx(sum(rb_llm_idk) / 9)
    assert memory["rag_aggregate"]["num_items"] == 10


def test_a_record_missing_from_the_task_file_is_an_error_and_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    from servers.evaluation.tools.mtrag import mtrag_evaluated_records

    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    source = tmp_path / "tasks.jsonl"
    source.write_text(json.dumps({"task_id": "a", "answerability": ["ANSWERABLE"]}) + "\n")
    item = {"id": "b", "status": "ok", "idk": 0.0, "faithfulness": 1.0, "rag_score": 0.5}
    with pytest.raises(InputError, match="no record with task_id 'b'; map id_ls to task_id"):
        mtrag_evaluated_records(
            id_ls=["b"], answerability_ls=["ANSWERABLE"], algorithmic_res={"RB_agg": [0.5]},
            idk_items=[item], faithfulness_items=[item], rag_items=[item],
            data_info={"path": str(source)}, save_path=str(tmp_path / "out"),
        )  # fmt: skip
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
