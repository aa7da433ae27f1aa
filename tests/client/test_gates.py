"""Gates: ``ultra run --gate`` / a pipeline's ``gate:`` block, ``ultra gate RUN``, exit statuses 0/1/2, JUnit XML,
and judged items that failed counted against ``failed_fraction``."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.openai_stub import OpenAIStub

JUNIT_XSD = Path(__file__).parent / "data" / "junit.xsd"


def eval_trec_project(tmp_path: Path, gate: str = "") -> Path:
    """A copy of examples/eval_trec.yaml (retrieval evaluation, no LLM) with an optional gate block."""
    for name in ("eval_trec.yaml", "parameters/eval_trec_parameter.yaml"):
        (tmp_path / "examples" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "examples" / name, tmp_path / "examples" / name)
    pipeline = tmp_path / "examples" / "eval_trec.yaml"
    pipeline.write_text(pipeline.read_text() + gate)
    params = tmp_path / "examples" / "parameters" / "eval_trec_parameter.yaml"
    settings = yaml.safe_load(params.read_text())
    for key in ("run_path", "qrels_path"):
        settings["evaluation"][key] = str(ROOT / settings["evaluation"][key])
    settings["evaluation"]["save_path"] = str(tmp_path / "evaluation")
    params.write_text(yaml.safe_dump(settings))
    return pipeline


def run_gated(tmp_path: Path, *extra: str, gate: str = "") -> tuple[object, Path | None]:
    pipeline = eval_trec_project(tmp_path, gate)
    done = run_ultra("run", str(pipeline), "--output-dir", str(tmp_path / "runs"), *extra, cwd=tmp_path, timeout=240)
    folders = sorted(p for p in (tmp_path / "runs").glob("*") if p.is_dir())
    return done, (folders[-1] if folders else None)


def gate_file(tmp_path: Path, conditions: list[dict]) -> Path:
    path = tmp_path / "gate.yaml"
    path.write_text(yaml.safe_dump({"gate": conditions}))
    return path


def verdict_row(stdout: str, condition: str) -> list[str]:
    """[value, baseline, verdict, "better" and the condition's note] from the table and the note under it."""
    lines = stdout.splitlines()
    (line,) = [line for line in lines if line.startswith(condition + " ")]
    first = next(i for i, shown in enumerate(lines) if shown.startswith("condition "))
    last = next(i for i, shown in enumerate(lines) if shown.startswith("gate: ") and i > first)
    assert all(len(shown) <= 100 for shown in lines[first : last + 1]), lines[first : last + 1]  # fits 100
    note: list[str] = []
    for index, shown in enumerate(lines):  # "  <condition>: note", continued on lines indented further
        if shown.startswith(f"  {condition}: "):
            note.append(shown[len(condition) + 4 :])
            for more in lines[index + 1 :]:
                if not more.startswith("      "):
                    break
                note.append(more.strip())
    value, baseline, status, better = line[len(condition) :].split(None, 3)
    return [value, baseline, status, " ".join([better.strip(), *note])]


def test_absolute_conditions_pass_and_fail_with_exit_0_and_1(tmp_path: Path) -> None:
    done, folder = run_gated(tmp_path)
    assert done.returncode == 0, done.stderr
    results = json.loads((folder / "memory.json").read_text())["eval_res"]
    gate_ok = gate_file(
        tmp_path,
        [{"metric": "eval_res.map", "min": results["map"] - 0.001}, {"metric": "eval_res.P@5", "max": 1}],
    )
    passed = run_ultra("gate", str(folder), "--gate", str(gate_ok), cwd=tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert verdict_row(passed.stdout, f"eval_res.map >= {results['map'] - 0.001:g}")[:2] == [
        f"{results['map']:.4f}",
        "-",
    ]
    assert "gate: 2 of 2 condition(s) passed; exit status 0" in passed.stdout
    gate_bad = gate_file(tmp_path, [{"metric": "eval_res.ndcg@10", "min": results["ndcg@10"] + 0.001}])
    failed = run_ultra("gate", str(folder), "--gate", str(gate_bad), cwd=tmp_path)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    row = verdict_row(failed.stdout, f"eval_res.ndcg@10 >= {results['ndcg@10'] + 0.001:g}")
    assert row[:3] == [f"{results['ndcg@10']:.4f}", "-", "FAIL"]


def test_a_pipeline_gate_block_fails_the_run(tmp_path: Path) -> None:
    done, folder = run_gated(tmp_path, gate="gate:\n  - {metric: eval_res.map, min: 0.9}\n")
    assert done.returncode == 1, done.stdout + done.stderr
    value = json.loads((folder / "memory.json").read_text())["eval_res"]["map"]
    assert value < 0.9 and verdict_row(done.stdout, "eval_res.map >= 0.9")[:3] == [f"{value:.4f}", "-", "FAIL"]


def test_unknown_metric_exits_2_with_did_you_mean_and_junit(tmp_path: Path) -> None:
    gate = gate_file(tmp_path, [{"metric": "eval_res.ndcg@100", "min": 0}, {"metric": "eval_res.ndgc@10", "min": 0}])
    junit = tmp_path / "reports" / "gate.xml"
    (tmp_path / "reports").mkdir()
    done, _ = run_gated(tmp_path, "--gate", str(gate), "--junit", str(junit))
    assert done.returncode == 2, done.stdout + done.stderr
    said = " ".join(done.stdout.split())  # the note wraps at 100 columns
    assert "the run has no scalar result eval_res.ndgc@10; did you mean 'eval_res.ndcg@10'?" in said
    suites = check_junit(junit)
    (suite,) = suites.findall("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["eval_res.ndcg@100 >= 0", "eval_res.ndgc@10 >= 0"]
    assert cases[0].find("failure") is None and cases[0].find("error") is None
    assert "did you mean 'eval_res.ndcg@10'" in cases[1].find("error").get("message")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "1")


def check_junit(path: Path) -> ET.Element:
    """The JUnit file's structure as CI readers expect it; validated against tests/client/data/junit.xsd too."""
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("errors")) == sum(1 for c in cases if c.find("error") is not None)
        for case in cases:
            assert case.get("name") and case.get("classname") and float(case.get("time")) >= 0
    etree = pytest.importorskip("lxml.etree")
    schema = etree.XMLSchema(etree.parse(str(JUNIT_XSD)))
    document = etree.parse(str(path))
    assert schema.validate(document), schema.error_log
    return root


def test_baseline_max_drop_and_a_missing_baseline(tmp_path: Path) -> None:
    done, folder = run_gated(tmp_path)
    assert done.returncode == 0, done.stderr
    value = json.loads((folder / "memory.json").read_text())["eval_res"]["map"]
    baseline = tmp_path / "baseline"
    shutil.copytree(folder, baseline)
    memory = json.loads((baseline / "memory.json").read_text())
    memory["eval_res"]["map"] = value + 0.02  # main was better by 0.02
    (baseline / "memory.json").write_text(json.dumps(memory))
    loose = gate_file(tmp_path, [{"metric": "eval_res.map", "baseline": str(baseline), "max_drop": 0.03}])
    assert run_ultra("gate", str(folder), "--gate", str(loose), cwd=tmp_path).returncode == 0
    tight = gate_file(tmp_path, [{"metric": "eval_res.map", "baseline": str(baseline), "max_drop": 0.01}])
    failed = run_ultra("gate", str(folder), "--gate", str(tight), cwd=tmp_path)
    assert failed.returncode == 1
    row = verdict_row(failed.stdout, "eval_res.map >= baseline - 0.01")
    assert row[:3] == [f"{value:.4f}", f"{value + 0.02:.4f}", "FAIL"] and "dropped 0.02 from the baseline" in row[3]
    nowhere = gate_file(tmp_path, [{"metric": "eval_res.map", "baseline": str(tmp_path / "none"), "max_drop": 0}])
    missing = run_ultra("gate", str(folder), "--gate", str(nowhere), cwd=tmp_path)
    said = " ".join(missing.stdout.split())  # the note wraps at 100 columns
    assert missing.returncode == 2 and "is not a finished run folder (it has no memory.json)" in said


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("{metric: eval_res.map, mni: 0.3}", "unknown gate key 'mni'; did you mean 'min'?"),
        ("{metric: 3, min: 0.3}", "'metric' names a scalar result as variable.key"),
        ("{metric: eval_res.map}", "needs 'min', 'max' or 'baseline'"),
        ("{metric: eval_res.map, baseline: runs/main}", "'baseline' needs 'max_drop: 0.01' or 'no_significant_drop"),
        ("{metric: eval_res.map, max_drop: 0.1}", "compare with a run: add baseline: <folder>"),
        ("{metric: eval_res.map, min: 0.5, max: 0.1}", "'min' (0.5) is above 'max' (0.1)"),
        ("{metric: eval_res.map, min: .nan}", "'min' must be a finite number"),
        ("{metric: eval_res.map, baseline: runs/main, no_significant_drop: yes please}", "is true or false"),
    ],
)
def test_ultra_build_reports_a_bad_gate_at_file_and_line(tmp_path: Path, condition: str, message: str) -> None:
    pipeline = eval_trec_project(tmp_path, f"gate:\n  - {{metric: eval_res.P@5, max: 1}}\n  - {condition}\n")
    line = pipeline.read_text().splitlines().index(f"  - {condition}") + 1
    done = run_ultra("build", str(pipeline), cwd=tmp_path)
    assert done.returncode == 1 and f"{pipeline}:{line}: " in done.stderr and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_judged_items_that_failed_count_against_failed_fraction(tmp_path: Path) -> None:
    marker = "Oral Argument - California Appellate Courts"  # the passages holding it get unreadable replies
    corpus = {
        r["docid"]: r["text"] for r in map(json.loads, (ROOT / "data/umbrela/corpus.jsonl").read_text().splitlines())
    }
    top = [line.split()[2] for line in (ROOT / "data/umbrela/run.bm25.trec").read_text().splitlines()]
    ranks = [line.split()[3] for line in (ROOT / "data/umbrela/run.bm25.trec").read_text().splitlines()]
    firsts = [doc for doc, rank in zip(top, ranks, strict=True) if rank == "1"]
    expected = sum(1 for doc in firsts if marker in corpus[doc])
    assert 0 < expected < len(firsts)
    (tmp_path / "judge.yaml").write_text(
        f"servers:\n  judge: {ROOT / 'servers/judge'}\npipeline:\n  - judge.umbrela_judge\n"
    )
    with OpenAIStub() as stub:
        stub.add_fault("reply", match=marker, text="I cannot grade this passage.")
        llm = {"backend": "openai", "base_url": stub.base_url, "model_id": "stub", "api_key": "", "max_retries": 0}
        settings = {
            "queries_path": str(ROOT / "data/umbrela/queries.jsonl"),
            "run_path": str(ROOT / "data/umbrela/run.bm25.trec"),
            "corpus_path": str(ROOT / "data/umbrela/corpus.jsonl"),
            "depth": 1,
            "judge_llm": llm,
            "judge_cache": "",
            "save_path": str(tmp_path / "judge"),
            "max_failed_fraction": 0.5,
        }
        (tmp_path / "params.yaml").write_text(yaml.safe_dump({"judge": settings}))
        gate = gate_file(tmp_path, [{"metric": "aggregate.P@5", "min": 0}])
        args = ("--param", "params.yaml", "--output-dir", "runs", "--gate", str(gate))
        done = run_ultra("run", "judge.yaml", *args, cwd=tmp_path, timeout=240)
    assert done.returncode == 1, done.stdout + done.stderr  # the implicit failed_fraction <= 0 failed
    fraction = expected / len(firsts)
    row = verdict_row(done.stdout, "failed_fraction <= 0")
    assert row[:3] == [f"{fraction:.4f}", "-", "FAIL"]
    assert f"{expected} of {len(firsts)} judged items failed" in row[3]
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]  # not the run index
    tolerant = gate_file(tmp_path, [{"metric": "aggregate.P@5", "min": 0}, {"metric": "failed_fraction", "max": 0.5}])
    assert run_ultra("gate", str(folder), "--gate", str(tolerant), cwd=tmp_path).returncode == 0
    strict = gate_file(tmp_path, [{"metric": "failed_fraction", "max": fraction - 0.001}])
    assert run_ultra("gate", str(folder), "--gate", str(strict), cwd=tmp_path).returncode == 1


def test_junit_without_a_gate_is_refused_before_the_run(tmp_path: Path) -> None:
    done, folder = run_gated(tmp_path, "--junit", str(tmp_path / "gate.xml"))
    assert done.returncode == 1 and "--junit writes the gate's verdicts: give --gate FILE" in done.stderr
    assert folder is None and not (tmp_path / "gate.xml").exists()
