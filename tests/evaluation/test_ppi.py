"""ppi: PPI++ and classical PPI against closed forms computed by hand on small data, the paired difference,
the input checks, result files as input, a seeded coverage simulation, and a call over `ultra call`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import anyio
import numpy as np
import pytest
from scipy.stats import norm

from servers.evaluation.judged.ppi import judged_mean, power_tuned_lambda
from servers.evaluation.server import SPEC
from tests.conftest import ROOT, run_ultra
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools

# Ten labelled items (human label y, judge score f) and ten judged-only items.
Y = [1, 0, 1, 1, 0, 1, 0, 1, 1, 0]
F_L = [1, 0, 1, 0, 0, 1, 0, 1, 1, 1]
F_U = [1, 1, 0, 0, 1, 0, 0, 1, 0, 1]
Z = norm.ppf(0.975)


def call(tool: str, **arguments):
    return anyio.run(call_local_tool, local_tools(SPEC)[tool], arguments)


def system(labels, judged_labelled, judged_other, prefix="i"):
    """({id: score}, {id: label}) of one system: labelled ids first, then the judged-only ones."""
    scores = {f"{prefix}{k}": s for k, s in enumerate(judged_labelled + judged_other)}
    return scores, {f"{prefix}{k}": y for k, y in enumerate(labels)}


def test_classical_ppi_mean_and_variance_by_hand() -> None:
    # mean(f_u) = 0.5, mean(y - f_l) = 0 -> 0.5; var(f_u) = 0.25, y - f_l = [0,0,0,1,0,0,0,0,0,-1]: var 0.2
    result = judged_mean(Y, F_L, F_U, 0.05)["classical"]
    assert result["estimate"] == pytest.approx(0.5)
    assert result["se"] == pytest.approx(math.sqrt(0.25 / 10 + 0.2 / 10))
    assert result["ci"] == pytest.approx([0.5 - Z * math.sqrt(0.045), 0.5 + Z * math.sqrt(0.045)])


def test_ppi_plus_plus_lambda_estimate_and_variance_by_hand() -> None:
    # cov(y, f_l) = 1.4 / 10 (divisor n); var of the 20 judge scores (11 ones) = 20 * .55 * .45 / 19;
    # lambda = 0.14 / ((1 + 10/10) * 4.95/19) = 133/495
    lam = 133 / 495
    assert power_tuned_lambda(np.array(Y, float), np.array(F_L, float), np.array(F_U, float)) == pytest.approx(lam)
    result = judged_mean(Y, F_L, F_U, 0.05)
    assert result["lambda"] == pytest.approx(lam)
    assert result["estimate"] == pytest.approx(lam * 0.5 + 0.6 - lam * 0.6)
    rect = [y - lam * f for y, f in zip(Y, F_L, strict=True)]  # five 1-lam, three 0, one 1, one -lam
    rect_var = (5 * (1 - lam) ** 2 + 1 + lam**2) / 10 - (0.6 * (1 - lam)) ** 2
    assert np.var(rect) == pytest.approx(rect_var)
    se = math.sqrt(lam**2 * 0.25 / 10 + rect_var / 10)
    assert result["se"] == pytest.approx(se)
    human_se = math.sqrt(0.24 / 10)
    assert result["human_only"]["estimate"] == pytest.approx(0.6)
    assert result["human_only"]["se"] == pytest.approx(human_se)
    assert result["human_only"]["ci"] == pytest.approx([0.6 - Z * human_se, 0.6 + Z * human_se])
    assert result["judge_only"]["estimate"] == pytest.approx(0.55)
    assert result["effective_n"] == pytest.approx(10 * human_se**2 / se**2)
    assert result["effective_n"] > 10  # a correlated judge is worth more than its labels alone


def test_paired_difference_is_ppi_on_the_differences(tmp_path: Path) -> None:
    # B scores 0.5 and is labelled 0.5 on every item: A - B is A shifted by -0.5, with the same lambda and se.
    scores_a, labels_a = system(Y, F_L, F_U)
    scores_b = {i: 0.5 for i in scores_a}
    labels_b = {i: 0.5 for i in labels_a}
    scores_b["i3"] = 1.0  # one judge score of B differs: A - B's judge score on i3 is 0 - 1 = -1
    result = call("ppi", judged={"A": scores_a, "B": scores_b}, human={"A": labels_a, "B": labels_b},
                  save_path=str(tmp_path / "ppi.json"))  # fmt: skip
    f_l = [f - 0.5 for f in F_L]
    f_l[3] = -1.0
    expected = judged_mean([y - 0.5 for y in Y], f_l, [f - 0.5 for f in F_U], 0.05)
    diff = result["ppi_diff"]["A - B"]
    for key in ("estimate", "se", "lambda", "ci"):
        assert diff[key] == pytest.approx(expected[key])
    assert diff["p_value"] == pytest.approx(2 * norm.sf(abs(expected["estimate"]) / expected["se"]))
    assert result["ppi_res"]["B"]["constant_judge"] is False
    saved = json.loads(Path(result["result_path"]).read_text())
    assert saved["ppi_diff"]["A - B"]["estimate"] == pytest.approx(diff["estimate"])


def test_a_constant_judge_falls_back_to_the_human_only_mean(tmp_path: Path) -> None:
    scores, labels = system(Y, [0.7] * 10, [0.7] * 10)
    result = call("ppi", judged={"A": scores}, human={"A": labels}, save_path=str(tmp_path / "p.json"))["ppi_res"]["A"]
    assert result["constant_judge"] is True and "constant judge" in result["note"]
    assert result["lambda"] == 0.0
    assert result["estimate"] == pytest.approx(0.6) and result["ci"] == result["human_only"]["ci"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s, h: h["A"].update(x99=1), "ids that were not judged"),
        (lambda s, h: h["A"].pop("i0"), "has 9 human labels"),
        (lambda s, h: h.update(C={"i0": 1}), "systems that were not judged"),
        (lambda s, h: s["A"].update(i0=float("inf")), "must be a finite number"),
    ],
)
def test_bad_inputs_are_refused(tmp_path: Path, change, message: str) -> None:
    scores, labels = system(Y, F_L, F_U)
    judged, human = {"A": scores}, {"A": labels}
    change(judged, human)
    with pytest.raises(ToolFailure, match=message):
        call("ppi", judged=judged, human=human, save_path=str(tmp_path / "p.json"))
    assert not (tmp_path / "p.json").exists()


def judge_file(path: Path, scores: dict[str, float], failed: set[str]) -> str:
    """An answer judge's result file (the layout servers/judge/answers/run.py writes)."""
    items = [{"id": i, "status": "error", "error": "timeout"} if i in failed else
             {"id": i, "status": "ok", "faithfulness": s} for i, s in scores.items()]  # fmt: skip
    document = {"tool": "faithfulness_judge", "aggregate": {"faithfulness": 0.5, "num_faithfulness": 1}, "items": items}
    path.write_text(json.dumps(document))
    return str(path)


def test_judge_files_and_a_labels_file_with_a_failed_judgment(tmp_path: Path) -> None:
    scores, labels = system(Y + [1], F_L + [1], F_U)  # 11 labels; i10's judgment failed
    path = judge_file(tmp_path / "judge.json", scores, failed={"i10"})
    rows = [{"system": "A", "item_id": i, "label": y} for i, y in labels.items()]
    (tmp_path / "human.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = call("ppi", judged={"A": path}, human=str(tmp_path / "human.jsonl"), save_path=str(tmp_path / "o.json"))
    a = result["ppi_res"]["A"]
    assert a["labels_without_judgment"] == 1 and a["judge_failed"] == 1 and a["n_human"] == 10
    assert a["estimate"] == pytest.approx(judged_mean(Y, F_L, F_U[:9] + [F_U[9]], 0.05)["estimate"])
    rows.append(rows[0])
    (tmp_path / "human.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ToolFailure, match=r"human.jsonl:12: a second label"):
        call("ppi", judged={"A": path}, human=str(tmp_path / "human.jsonl"), save_path=str(tmp_path / "o.json"))


def test_seeded_coverage_simulation() -> None:
    """300 draws from a known population: PPI++ and classical PPI cover the true mean about 95% of the time,
    and PPI++ is narrower than the human-only interval on average."""
    rng = np.random.default_rng(7)
    covered = {"ppi": 0, "classical": 0, "human": 0}
    widths = {"ppi": 0.0, "human": 0.0}
    true_mean, reps = 0.6, 300
    for _ in range(reps):
        y = (rng.random(40) < true_mean).astype(float)
        f_l = np.clip(0.2 + 0.6 * y + rng.normal(0, 0.15, 40), 0, 1)  # a biased, correlated judge
        y_u = (rng.random(400) < true_mean).astype(float)
        f_u = np.clip(0.2 + 0.6 * y_u + rng.normal(0, 0.15, 400), 0, 1)
        result = judged_mean(y, f_l, f_u, 0.05)
        for name, part in (("ppi", result), ("classical", result["classical"]), ("human", result["human_only"])):
            covered[name] += part["ci"][0] <= true_mean <= part["ci"][1]
        widths["ppi"] += result["ci"][1] - result["ci"][0]
        widths["human"] += result["human_only"]["ci"][1] - result["human_only"]["ci"][0]
    assert covered["ppi"] / reps >= 0.91 and covered["classical"] / reps >= 0.91
    assert widths["ppi"] < 0.8 * widths["human"]


@pytest.mark.parametrize("transport", [[], ["--stdio"]])
def test_ppi_over_ultra_call_on_mtrag(tmp_path: Path, transport: list[str]) -> None:
    """MT-RAG's RB_llm_idk judge with 40 human faithfulness labels per system, through `ultra call` (in process and
    over MCP stdio)."""
    rows = [json.loads(line) for line in (ROOT / "data/mtrag/judged_human_477.jsonl").read_text().splitlines()]
    judged: dict[str, dict[str, float]] = {}
    labels = []
    for row in rows:
        judged.setdefault(row["model_id"], {})[row["task_id"]] = row["RB_llm_idk"]
    tasks = sorted({row["task_id"] for row in rows})[:40]
    for row in rows:
        if row["task_id"] in tasks:
            label = (sum(row["faithfulness"]) / len(row["faithfulness"]) - 1) / 3
            labels.append({"system": row["model_id"], "item_id": row["task_id"], "label": label})
    (tmp_path / "judged.json").write_text(json.dumps({"judged": judged}))
    (tmp_path / "human.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    out = tmp_path / "ppi.json"
    done = run_ultra("call", *transport, "evaluation.ppi", "--args-file", str(tmp_path / "judged.json"),
                     f"human_path={tmp_path / 'human.jsonl'}", f"save_path={out}", cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    saved = json.loads(out.read_text())
    assert set(saved["ppi_res"]) == {"reference", "gpt-4o", "llama-3.1-405b-instruct"}
    a, b, c = judged  # pairs in the order the systems were given
    assert list(saved["ppi_diff"]) == [f"{a} - {b}", f"{a} - {c}", f"{b} - {c}"]
    for result in saved["ppi_res"].values():
        assert result["n_human"] == 40 and result["n_unlabelled"] == 119
        assert result["se"] <= result["human_only"]["se"] * 1.01


@pytest.mark.parametrize("layout", ["rows", "mapping"])
def test_a_json_labels_file_as_rows_or_a_mapping(tmp_path: Path, layout: str) -> None:
    scores, labels = system(Y, F_L, F_U)
    rows = [{"system": "A", "item_id": i, "label": y} for i, y in labels.items()]
    (tmp_path / "human.json").write_text(json.dumps(rows if layout == "rows" else {"A": labels}))
    (tmp_path / "scores.json").write_text(json.dumps(scores))  # a plain {item_id: score} file
    result = call("ppi", judged={"A": str(tmp_path / "scores.json")}, human=str(tmp_path / "human.json"),
                  save_path=str(tmp_path / "o.json"))  # fmt: skip
    assert result["ppi_res"]["A"]["estimate"] == pytest.approx(judged_mean(Y, F_L, F_U, 0.05)["estimate"])
