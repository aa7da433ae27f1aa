"""Real result files of every kind the report reads, made once per session by the real tools.

``ultra run`` of the examples (eval_trec, eval_trec_pvalue, evaluate_results, trec_rag against the
OpenAI-compatible stub), ``ultra sweep`` of sweep_retrieval, evaluate_mtrag and judge_agreement
called in-process. Their results go under the session's temporary folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.judge.conftest import SECRET, llm_settings
from tests.judge.test_trec_rag_example import responder
from tests.support.openai_stub import OpenAIStub
from ultra_kit.inprocess import local_tools
from ultra_kit.settings import defaults

OUTSIDE = {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}


@dataclass
class Results:
    """Where each kind of result is."""

    eval_trec: Path  # run folders ...
    pvalue: Path
    evaluate: Path
    trec_rag: Path
    sweep: Path  # the sweep folder
    mtrag: Path  # result files ...
    judges: Path  # folder of the trec_rag run's judge files
    agreement: Path


def _params(name: str, folder: Path, **server_edits: dict) -> Path:
    params = yaml.safe_load((ROOT / "examples" / "parameters" / f"{name}_parameter.yaml").read_text())
    for server, values in params.items():
        if isinstance(values, dict) and "save_path" in values:
            values["save_path"] = str(folder / "results")
        values.update(server_edits.get(server, {}))
    target = folder / f"{name}_parameter.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(params), encoding="utf-8")
    return target


def example_args(name: str, folder: Path, **server_edits: dict) -> list[str]:
    """The ``ultra`` arguments of ``run examples/<name>.yaml`` into ``folder/runs`` (its parameter file written)."""
    param = _params(name, folder, **server_edits)
    return ["run", f"examples/{name}.yaml", "--param", str(param), "--output-dir", str(folder / "runs")]


def example_run(name: str, folder: Path) -> Path:
    """The run folder ``example_args``' run made."""
    (run,) = [p for p in (folder / "runs").iterdir() if p.name.startswith(f"{name}_2")]
    return run


def run_example(name: str, folder: Path, env: dict[str, str] | None = None, **server_edits: dict) -> Path:
    """``ultra run examples/<name>.yaml`` into ``folder/runs``; the run folder."""
    done = run_ultra(*example_args(name, folder, **server_edits), cwd=ROOT, env={**OUTSIDE, **(env or {})}, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return example_run(name, folder)


def run_together(commands: dict[str, list[str]], env: dict[str, dict[str, str]]) -> None:
    """Run ``python ultra.py ARGS`` of each command at once (independent runs, in the repository; ``env``: variables
    added to a command's environment, by its name) and check that each exits 0: the session's inputs take as long
    as the slowest, not the sum."""
    base = {**os.environ, "PYTHONPATH": str(ROOT), **OUTSIDE}
    processes = {
        name: subprocess.Popen(
            [sys.executable, str(ROOT / "ultra.py"), *args],
            cwd=ROOT,
            env={**base, **env.get(name, {})},
            text=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for name, args in commands.items()
    }
    try:
        for name, process in processes.items():
            _, stderr = process.communicate(timeout=300)
            assert process.returncode == 0, (name, stderr[-3000:])
    finally:  # a failure leaves nothing running
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.communicate()


@pytest.fixture(scope="session")
def results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    base = tmp_path_factory.mktemp("report_inputs")
    previous = os.environ.get("ULTRA_ALLOW_OUTSIDE_OUTPUT")
    os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"
    try:
        few = {"evaluation": {"ir_metrics": ["map", "ndcg@10", "P@5", "recall@100"], "ks": []}}  # fewer plots: faster
        commands = {name: example_args(name, base / name, **few) for name in ("eval_trec", "eval_trec_pvalue")}
        commands["evaluate_results"] = example_args("evaluate_results", base / "evaluate_results")
        sweep = base / "sweep"
        commands["sweep"] = ["sweep", "examples/sweep_retrieval.yaml", "--output-dir", str(sweep),
                             "--grid", "retriever.top_k=[3, 5]", "--grid", "retriever.bm25.k1=[1.2]"]  # fmt: skip
        with OpenAIStub(responder=responder()) as stub:
            judge = {"judge_llm": {**llm_settings(stub), "api_key": "${OPENAI_API_KEY}"}, "judge_cache": ""}
            commands["trec_rag"] = example_args("trec_rag", base / "trec_rag", judge=judge)
            run_together(commands, {"trec_rag": {"OPENAI_API_KEY": SECRET}})
        runs = {name: example_run(name, base / name) for name in commands if name != "sweep"}
        return Results(
            eval_trec=runs["eval_trec"],
            pvalue=runs["eval_trec_pvalue"],
            evaluate=runs["evaluate_results"],
            trec_rag=runs["trec_rag"],
            sweep=sweep,
            mtrag=_mtrag_file(base / "mtrag"),
            judges=base / "trec_rag" / "results",
            agreement=_agreement_file(base / "agreement"),
        )
    finally:
        if previous is None:
            os.environ.pop("ULTRA_ALLOW_OUTSIDE_OUTPUT", None)
        else:
            os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = previous


@pytest.fixture(scope="session")
def risk_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/risk_suite.yaml run against the scripted stub (tests/synth): off-topic questions refused,
    three jailbreaks leaked, grounded questions answered; its run folder."""
    from tests.synth.test_risk_suite import PIPELINE, params_for, reply

    base = tmp_path_factory.mktemp("risk_suite")
    with OpenAIStub(reply) as stub:
        params = params_for(base, stub.base_url)
        done = run_ultra(
            "run", str(PIPELINE), "--param", str(params), "--output-dir", str(base / "runs"), cwd=ROOT,
            env={**OUTSIDE, "ULTRA_READ_ROOTS": str(base)}, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (folder,) = [p for p in (base / "runs").iterdir() if p.is_dir()]
    return folder


def mtrag_records() -> list[dict]:
    return [json.loads(line) for line in (ROOT / "data" / "mtrag" / "mtrag_sample.jsonl").read_text().splitlines()]


def _mtrag_file(folder: Path) -> Path:
    """evaluate_mtrag (lexical metrics, no model) over the MT-RAG sample, with parameter.yaml's other settings."""
    from servers.evaluation.server import SPEC

    records = mtrag_records()
    tool = local_tools(SPEC)["evaluate_mtrag"]
    given = {
        "pred_ls": [r["prediction"] for r in records],
        "gt_ls": [r["target"] for r in records],
        "ctx_ls": [r["contexts"] for r in records],
        "id_ls": [r["task_id"] for r in records],
        "mtrag_metrics": ["Recall", "RougeL_stemFalse", "Extractiveness_RougeL", "Length"],
        "save_path": str(folder),
    }
    result = tool.function(**{**tool.settings, **given})
    return Path(result["result_path"])


def _agreement_file(folder: Path) -> Path:
    """judge_agreement of the human UMBRELA qrels with themselves, as the judge server writes it."""
    from servers.judge.relevance.run import run_agreement

    qrels = str(ROOT / "data" / "umbrela" / "qrels.human.txt")
    settings = defaults("judge")
    result = run_agreement(
        llm_qrels_path=qrels,
        human_qrels_path=qrels,
        run_paths=[],
        measure=settings["measure"],
        relevant_grade=settings["relevant_grade"],
        save_path=str(folder),
    )
    return Path(result["result_path"])
