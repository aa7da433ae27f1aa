"""ppi with sampling_probs: the active inference estimate (Zrnic & Candes 2024) against a direct computation of
the paper's estimator on fixed data, its lambda, the tool's inputs (per item, per system, a file) and refusals,
and a seeded coverage check."""

from __future__ import annotations

import json
import math

import anyio
import numpy as np
import pytest
from scipy.stats import norm

from servers.evaluation.judged.active import active_judged_mean, active_lambda
from servers.evaluation.server import SPEC
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools

Z = norm.ppf(0.975)
# 12 items: judge score f, human label y (known only where labelled), sampling probability pi, labelled or not
F = [0.9, 0.2, 0.5, 0.5, 0.8, 0.1, 0.6, 0.4, 0.7, 0.3, 0.5, 0.95]
Y = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]
PI = [0.2, 0.2, 0.9, 0.9, 0.4, 0.2, 0.8, 0.8, 0.5, 0.5, 0.9, 0.2]
XI = [1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1]


def direct(lam: float) -> tuple[float, float]:
    """The paper's estimator written out item by item: (mean of Z_i, std(Z) / sqrt(N))."""
    z = []
    for f, y, p, xi in zip(F, Y, PI, XI, strict=True):
        z.append(lam * f + ((y - lam * f) * xi / p if xi else 0.0))
    mean = sum(z) / len(z)
    var = sum((v - mean) ** 2 for v in z) / len(z)
    return mean, math.sqrt(var / len(z))


def direct_lambda() -> float:
    """cov(y xi / pi, f (xi / pi - 1)) / var(f (xi / pi - 1)), divisor N, written out."""
    a = [y * xi / p for y, p, xi in zip(Y, PI, XI, strict=True)]
    b = [f * (xi / p - 1) for f, p, xi in zip(F, PI, XI, strict=True)]
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((u - ma) * (v - mb) for u, v in zip(a, b, strict=True)) / len(a)
    return cov / (sum((v - mb) ** 2 for v in b) / len(b))


def split():
    lab = [i for i in range(len(F)) if XI[i]]
    unl = [i for i in range(len(F)) if not XI[i]]
    take = lambda xs, ids: np.array([xs[i] for i in ids], float)  # noqa: E731
    return take(Y, lab), take(F, lab), take(PI, lab), take(F, unl)


def test_active_estimate_matches_the_papers_estimator_written_out() -> None:
    y_l, f_l, pi_l, f_u = split()
    lam = direct_lambda()
    assert active_lambda(y_l, f_l, pi_l, f_u) == pytest.approx(lam)
    assert not 0 <= lam <= 0  # a real value, not the constant-judge fallback
    result = active_judged_mean(y_l, f_l, pi_l, f_u, 0.05)
    estimate, se = direct(lam)
    assert result["lambda"] == pytest.approx(lam)
    assert result["estimate"] == pytest.approx(estimate)
    assert result["se"] == pytest.approx(se)
    assert result["ci"] == pytest.approx([estimate - Z * se, estimate + Z * se])
    assert result["aipw"]["estimate"] == pytest.approx(direct(1.0)[0])
    assert result["human_only"]["estimate"] == pytest.approx(direct(0.0)[0])
    assert result["human_only"]["se"] == pytest.approx(direct(0.0)[1])
    assert result["n_human"] == 8 and result["n_unlabelled"] == 4


def test_power_tuned_lambda_gives_the_smallest_standard_error() -> None:
    y_l, f_l, pi_l, f_u = split()
    tuned = active_judged_mean(y_l, f_l, pi_l, f_u, 0.05)["se"]
    assert all(tuned <= direct(lam)[1] + 1e-12 for lam in np.linspace(-1, 2, 61))


def call(**arguments):
    return anyio.run(call_local_tool, local_tools(SPEC)["ppi"], arguments)


def judged_and_labels():
    scores = {f"i{k}": f for k, f in enumerate(F)}
    labels = {f"i{k}": y for k, y in enumerate(Y) if XI[k]}
    probs = {f"i{k}": p for k, p in enumerate(PI) if XI[k]}
    return scores, labels, probs


def test_ppi_tool_takes_sampling_probs_per_item_per_system_or_file(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    scores, labels, probs = judged_and_labels()
    judged = {"A": scores, "B": {k: 1 - v for k, v in scores.items()}}
    human = {"A": labels, "B": {k: 1 - v for k, v in labels.items()}}
    # 8 labels: below the tool's 10-label minimum, so label two more items with probability 1
    for system in ("A", "B"):
        human[system] |= {"i1": float(system == "B"), "i5": float(system == "B")}
    probs = probs | {"i1": 1.0, "i5": 1.0}
    result = call(judged=judged, human=human, sampling_probs=probs, alpha=0.05)
    a = result["ppi_res"]["A"]
    assert a["method"].startswith("active")
    xi = [1 if f"i{k}" in probs else 0 for k in range(len(F))]
    pis = [probs.get(f"i{k}", 1.0) for k in range(len(F))]
    ys = [human["A"].get(f"i{k}", 0.0) for k in range(len(F))]
    z_a = [a["lambda"] * f + ((y - a["lambda"] * f) * x / p if x else 0.0)
           for f, y, p, x in zip(F, ys, pis, xi, strict=True)]  # fmt: skip
    assert a["estimate"] == pytest.approx(sum(z_a) / len(z_a))
    per_system = call(judged=judged, human=human, sampling_probs={"A": probs, "B": probs}, alpha=0.05)
    assert per_system["ppi_res"]["A"]["estimate"] == pytest.approx(a["estimate"])
    assert per_system["ppi_diff"]["A - B"]["method"].startswith("active")
    (tmp_path / "probs.json").write_text(json.dumps(probs))
    from_file = call(judged=judged, human=human, sampling_probs=str(tmp_path / "probs.json"), alpha=0.05)
    assert from_file["ppi_res"]["B"]["estimate"] == pytest.approx(per_system["ppi_res"]["B"]["estimate"])
    plain = call(judged=judged, human=human, alpha=0.05)
    assert "method" not in plain["ppi_res"]["A"]  # without probabilities: today's PPI++
    with pytest.raises(ToolFailure, match="no probability for 1 labelled items"):
        call(judged=judged, human=human, sampling_probs={k: v for k, v in probs.items() if k != "i0"}, alpha=0.05)
    with pytest.raises(ToolFailure, match=r"probability in \(0, 1\]"):
        call(judged=judged, human=human, sampling_probs=probs | {"i0": 0}, alpha=0.05)


def test_active_intervals_cover_a_known_mean_in_a_seeded_simulation() -> None:
    rng = np.random.default_rng(3)
    n, hits, reps = 400, 0, 300
    for _ in range(reps):
        f = rng.uniform(0, 1, n)
        y = (rng.uniform(0, 1, n) < np.clip(f + rng.normal(0, 0.2, n), 0, 1)).astype(float)
        u = np.sqrt(f * (1 - f))
        pi = np.clip(60 * u / u.sum(), 0.02, 1)
        xi = rng.uniform(0, 1, n) < pi
        result = active_judged_mean(y[xi], f[xi], pi[xi], f[~xi], 0.1)
        lo, hi = result["ci"]
        hits += lo <= y.mean() <= hi
    assert hits / reps >= 0.85  # nominal 0.90, against the finite population's own mean
