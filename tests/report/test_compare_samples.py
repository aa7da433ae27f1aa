"""``ultra compare`` on two judge runs with ``judge_llm.samples: 3`` (scripted by the local test server): the
judge's metric takes the judge-noise-aware test, whose p-value and interval equal a direct call of the library's
hierarchical bootstrap on the samples the script gave (not read back from the files), with the judge-exact p beside
it; against a run without samples the metric keeps the randomisation test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from servers.judge.answers.run import build_items, run_answer_judge
from tests.conftest import ROOT, run_ultra
from tests.judge.conftest import call_job
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_kit.settings import defaults
from ultra_trec.significance import compare_samples

pytestmark = pytest.mark.anyio

QUESTIONS = [f"question {i}?" for i in range(8)]
SEEDS = (42, 43, 44)  # the seeds of the three samples


def biased(answer: str, seed: int) -> int:
    """Biased opinions out of 4 the script gives an answer at a seed: 'alpha i' (i + seed) % 3,
    'beta i' (2 i + seed) % 5 capped at 4."""
    system, index = answer.split()
    return (int(index) + seed) % 3 if system == "alpha" else min(4, (2 * int(index) + seed) % 5)


def reply(request: dict[str, Any]) -> str:
    answer = next(f"{s} {i}" for s in ("alpha", "beta") for i in range(8) if f"answer {s} {i}." in content_of(request))
    count = biased(answer, request["seed"])
    listed = [{"opinion": f"o{i}", "biased": "yes" if i < count else "no", "category": "political"} for i in range(4)]
    return json.dumps({"opinions": listed})


async def judge_run(stub: OpenAIStub, folder: Path, system: str, samples: int) -> Path:
    items = build_items(QUESTIONS, [f"answer {system} {i}." for i in range(8)])
    llm = {"base_url": stub.base_url, "model_id": "stub-judge", "api_key": "", "samples": samples, "temperature": 0.7}
    await call_job(run_answer_judge, "bias", items, judge_llm=llm, judge_cache="", save_path=str(folder))
    (path,) = folder.glob("*.json")
    return path.rename(folder / f"{folder.name}.json")  # the label of the run


async def test_judge_samples_give_the_judge_noise_aware_test(tmp_path: Path) -> None:
    with OpenAIStub(reply) as stub:
        alpha = await judge_run(stub, tmp_path / "alpha", "alpha", 3)
        beta = await judge_run(stub, tmp_path / "beta", "beta", 3)
        single = await judge_run(stub, tmp_path / "single", "beta", 1)
    done = run_ultra("compare", str(alpha), str(beta), str(single), "--out", str(tmp_path / "out"), cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {
        (r["a"], r["b"], r["metric"]): r for r in json.loads((tmp_path / "out" / "comparison.json").read_text())["rows"]
    }
    labels = ["alpha", "beta", "single"]
    row = rows[(labels[0], labels[1], "bias")]
    settings = defaults("report")
    a = [np.array([biased(f"alpha {i}", s) / 4 for s in SEEDS]) for i in range(8)]
    b = [np.array([biased(f"beta {i}", s) / 4 for s in SEEDS]) for i in range(8)]
    direct = compare_samples(
        b, a, n_resamples=settings["bootstrap_resamples"], seed=settings["seed"], alpha=1 - settings["confidence"]
    )
    assert row["test"] == "judge-noise-aware (3 samples)" and row["n"] == 8
    assert row["p_value"] == direct["with_judge_noise"]["p_value"]
    assert [row["ci_low"], row["ci_high"]] == direct["with_judge_noise"]["ci"]
    assert row["p_exact"] == direct["judge_as_exact"]["p_value"]
    assert row["diff"] == pytest.approx(np.mean([y.mean() - x.mean() for x, y in zip(a, b, strict=True)]))
    assert row["a_mean"] == pytest.approx(np.mean([x.mean() for x in a]))
    # the judge's noise widens the interval the same bootstrap gives with the judge taken as exact
    assert np.diff(direct["with_judge_noise"]["ci"]) > np.diff(direct["judge_as_exact"]["ci"])
    plain = rows[(labels[0], labels[2], "bias")]  # a run without samples: the randomisation test stays
    assert plain["test"] == "randomisation" and plain["p_exact"] is None
    line = next(li for li in done.stdout.splitlines() if li.startswith("bias") and "b vs a" in li)  # by letter
    assert "judge-noise-aware (3 samples)" in line and f"{direct['judge_as_exact']['p_value']:.4f}" in line
    assert "(*) = significant only if the judge is taken as exact" in done.stdout
    page = (tmp_path / "out" / "compare.html").read_text()
    assert "judge-noise-aware (3 samples)" in page and "p (judge exact)" in page


def test_a_win_only_with_the_judge_taken_as_exact_is_flagged() -> None:
    """Every item's sample mean is 0.1 higher in B, but each item's two samples lie 1 apart: exact, the
    difference never varies (p = 1 / (B + 1)); with the judge's noise it is lost in it."""
    from servers.report.compare.pairs import compare
    from servers.report.model import Run

    ids = [f"q{i}" for i in range(20)]
    a = {key: np.array([0.0, 1.0]) for key in ids}
    b = {key: np.array([0.1, 1.1]) for key in ids}
    runs = [
        Run(label=name, ids=list(ids), columns={"score": np.full(20, s.mean())}, samples={"score": samples})
        for name, samples, s in (("a", a, a["q0"]), ("b", b, b["q0"]))
    ]
    _, (row,) = compare(runs, resamples=200, confidence=0.95, seed=3)
    direct = compare_samples(list(b.values()), list(a.values()), n_resamples=200, seed=3, alpha=0.05)
    assert row.p_exact == direct["judge_as_exact"]["p_value"] == pytest.approx(1 / 201)
    assert row.p_value == row.p_holm == direct["with_judge_noise"]["p_value"] > 0.05
    assert row.only_if_exact and not row.significant and direct["significant_only_if_judge_exact"]
