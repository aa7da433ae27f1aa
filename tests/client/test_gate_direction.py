"""A gate honours a metric's direction: ``toxicity`` is declared lower-is-better in the judge's registry, so
``max_drop`` bounds its rise and ``no_significant_drop`` refuses a significant rise. Real runs of the offline
toxicity judge over 16 answers (two sentences of tests/data/toxicity that the classifier flags, two it does not);
the expected values are counted here: baseline 8 of 16 toxic (0.5), a worse run 16 of 16 (1.0), a better run 0."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.client.test_gates import check_junit, gate_file, verdict_row
from tests.conftest import ROOT, run_ultra
from tests.judge.test_risk_judges import labelled_sentences
from tests.support.together import at_once

QUESTIONS = [json.loads(line) for line in (ROOT / "data/answers/mtrag_gpt4o_answers.jsonl").read_text().splitlines()]
N = 16


def answers_file(tmp_path: Path, name: str, toxic: list[bool]) -> Path:
    """N answers (ids q0 ...), the i-th offensive when ``toxic[i]``, as a JSONL file for benchmark.get_data."""
    rows = labelled_sentences()[18:22]  # offensive, offensive, neither, neither (tests/judge/test_risk_judges)
    records = [
        {"id": f"q{i}", "question": QUESTIONS[i]["question"], "answer": rows[i % 2 + (0 if bad else 2)]["text"]}
        for i, bad in enumerate(toxic)
    ]
    data = tmp_path / f"{name}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    return data


def toxicity_project(tmp_path: Path, name: str, data: Path) -> tuple[Path, Path]:
    """The pipeline get_data -> judge.toxicity (its aggregate as ``toxicity``) and a parameter file reading ``data``
    (the judge's files in a folder of the name's own, so that runs of several names may run at once)."""
    pipeline = tmp_path / "toxicity.yaml"
    servers = {"benchmark": str(ROOT / "servers/benchmark"), "judge": str(ROOT / "servers/judge")}
    steps = ["benchmark.get_data", {"judge.toxicity": {"output": {"aggregate": "toxicity"}}}]
    pipeline.write_text(yaml.safe_dump({"servers": servers, "pipeline": steps}))
    key_map = {"q_ls": "question", "pred_ls": "answer", "id_ls": "id"}
    params = {
        "benchmark": {"benchmark": {"name": name, "path": str(data), "format": "jsonl", "key_map": key_map}},
        "judge": {"save_path": str(tmp_path / "judge" / name), "judge_cache": ""},
    }
    (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(params))
    return pipeline, tmp_path / f"{name}.yaml"


def toxicity_run(tmp_path: Path, name: str, toxic: list[bool], *extra: str) -> Callable[[], tuple[object, Path]]:
    """``ultra run`` of get_data -> judge.toxicity over N answers, the i-th offensive when ``toxic[i]``: its files
    are written now, the run is the call returned (so that several may run at once)."""
    pipeline, params = toxicity_project(tmp_path, name, answers_file(tmp_path, name, toxic))
    args = ("--param", str(params), "--output-dir", str(tmp_path / name), *extra)

    def run() -> tuple[object, Path]:
        done = run_ultra("run", str(pipeline), *args, cwd=tmp_path, timeout=240)
        folders = [p for p in (tmp_path / name).iterdir() if p.is_dir()] if (tmp_path / name).is_dir() else []
        return done, folders[0] if folders else None

    return run


def test_toxicity_gated_against_a_baseline_fails_when_it_rises_and_passes_when_it_falls(tmp_path: Path) -> None:
    done, baseline = toxicity_run(tmp_path, "main", [i % 2 == 0 for i in range(N)])()
    assert done.returncode == 0, done.stderr
    assert json.loads((baseline / "memory.json").read_text())["toxicity"]["toxic"] == 0.5  # 8 of 16
    gate = gate_file(
        tmp_path,
        [
            {"metric": "toxicity.toxic", "baseline": str(baseline), "max_drop": 0.1},
            {"metric": "toxicity.toxic", "baseline": str(baseline), "no_significant_drop": True},
        ],
    )
    runs = {  # the worse run and the better one, at once
        "worse": toxicity_run(tmp_path, "worse", [True] * N, "--gate", str(gate), "--junit", str(tmp_path / "w.xml")),
        "better": toxicity_run(tmp_path, "better", [False] * N, "--gate", str(gate)),
    }
    (worse, _), (better, _) = at_once(runs).values()
    assert worse.returncode == 1, worse.stdout + worse.stderr
    row = verdict_row(worse.stdout, "toxicity.toxic <= baseline + 0.1")
    # 1.0 against 0.5: it rose 0.5, more than the 0.1 allowed
    assert row[:3] == ["1.0000", "0.5000", "FAIL"] and row[3].startswith("lower")
    assert "rose 0.5 from the baseline (at most 0.1; lower is better)" in row[3]
    row = verdict_row(worse.stdout, "toxicity.toxic: no significant rise vs baseline")
    # the 8 items that became toxic: +1 each, the other 8 unchanged; B - A = +0.5, significant
    assert row[2] == "FAIL" and "significant rise: this run - baseline = +0.5000 over 16 paired items" in row[3]
    cases = list(check_junit(tmp_path / "w.xml").iter("testcase"))
    assert [c.get("name") for c in cases] == [
        "toxicity.toxic <= baseline + 0.1",
        "toxicity.toxic: no significant rise vs baseline",
    ]
    assert all(c.find("failure") is not None and "lower is better" in c.find("failure").text for c in cases)

    # 0.0 against 0.5: a fall of 0.5 is better (as higher-is-better it would have failed both conditions)
    assert better.returncode == 0, better.stdout + better.stderr
    row = verdict_row(better.stdout, "toxicity.toxic <= baseline + 0.1")
    assert row[:3] == ["0.0000", "0.5000", "PASS"]
    row = verdict_row(better.stdout, "toxicity.toxic: no significant rise vs baseline")
    assert row[2] == "PASS" and "this run - baseline = -0.5000 over 16 items" in row[3]


def test_every_registered_metric_declares_or_inherits_a_direction() -> None:
    """Each registry entry has a boolean direction (declared, or the registry's default: higher); each server's
    SPEC publishes every one of them; no two built-in servers disagree on a name; the survey's lower-is-better
    metrics are declared so."""
    from servers.evaluation.answers.metrics import METRICS as ANSWER_METRICS
    from servers.evaluation.mtrag.metrics import METRICS as MTRAG_METRICS
    from servers.evaluation.server import SPEC as EVALUATION
    from servers.judge.answers.registry import JUDGES
    from servers.judge.hallucination.run import METRICS as HHEM_METRICS
    from servers.judge.server import SPEC as JUDGE
    from ultra_client.calls.locate import builtin_servers, locate_named_server
    from ultra_client.gates.direction import builtin_directions
    from ultra_kit.inprocess import load_spec

    judged = JUDGE.directions()
    for judge in JUDGES:
        assert set(judge.higher_is_better) == set(judge.metrics), judge.name
        for name, up in judge.higher_is_better.items():
            assert isinstance(up, bool) and judged[name] is up, (judge.name, name)
    assert {name: judged[name] for name in HHEM_METRICS} == HHEM_METRICS
    evaluated = EVALUATION.directions()
    for metric in [*ANSWER_METRICS.values(), *MTRAG_METRICS.values()]:
        assert isinstance(metric.higher_is_better, bool) and evaluated[metric.name] is metric.higher_is_better
    seen: dict[str, tuple[str, bool]] = {}
    for name in builtin_servers():
        spec = load_spec(locate_named_server(name).module, locate_named_server(name).root)
        for metric, up in (spec.directions() if spec else {}).items():
            first = seen.setdefault(metric, (name, up))
            assert first[1] is up, f"{metric}: {first[0]} says higher-is-better {first[1]}, {name} says {up}"
    lower = {metric for metric, (_, up) in seen.items() if not up}
    latency = {f"latency.{key}" for key in ("p50", "p90", "p95", "p99", "mean", "max")}  # target.ask's
    assert lower == {"toxicity", "toxic", "bias", "hallucinated", "num_excluded", *latency}
    assert builtin_directions() == {metric: up for metric, (_, up) in seen.items()}


def test_a_gate_metric_finds_its_registry_name() -> None:
    from ultra_client.gates.direction import higher_is_better, registry_names

    table = {"toxicity": False, "f1": True, "bias": False}
    assert registry_names("eval_res.avg_f1_HasAns") == ["eval_res.avg_f1_HasAns", "avg_f1_HasAns", "f1_HasAns", "f1"]
    latency = {"latency.p95": False, "p95": True}  # the full name is the most precise: it decides
    assert higher_is_better("latency.p95", latency) is False and higher_is_better("other.p95", latency) is True
    assert higher_is_better("eval_res.avg_f1_HasAns", table) is True
    assert higher_is_better("toxicity.toxicity", table) is False and higher_is_better("risk.bias", table) is False
    assert higher_is_better("failed_fraction", {}) is False  # the gate's own: failed judged items
    assert higher_is_better("aggregate.MRR", table) is True  # named by no registry: trec_eval's measures are higher


@pytest.mark.parametrize(("flag", "first"), [((), "clean"), (("--maximize",), "toxic"), (("--minimize",), "clean")])
def test_sweep_ranks_a_lower_is_better_metric_lowest_first(tmp_path: Path, flag: tuple, first: str) -> None:
    """``ultra sweep --metric toxicity.toxic`` ranks the cleaner trial first unless --maximize says otherwise."""
    files = {kind: answers_file(tmp_path, kind, [kind == "toxic"] * 4) for kind in ("clean", "toxic")}
    pipeline, params = toxicity_project(tmp_path, "sweep", files["clean"])
    grid = f"benchmark.benchmark.path=[{files['clean']}, {files['toxic']}]"
    args = ("--param", str(params), "--grid", grid, "--metric", "toxicity.toxic", "--output-dir", str(tmp_path / "sw"))
    done = run_ultra("sweep", str(pipeline), *args, *flag, cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads((tmp_path / "sw" / "sweep.json").read_text())
    ranked = sorted(document["rows"], key=lambda row: row["rank"])
    assert [row["toxicity.toxic"] for row in ranked] == ([0.0, 1.0] if first == "clean" else [1.0, 0.0])
    assert document["minimize"] is (first == "clean")
    assert ("lower-is-better (its server's registry)" in done.stdout) is (not flag)
