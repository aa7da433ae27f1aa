"""Benchmark: does active selection (``ultra annotate --select active``) give narrower intervals than uniform
selection at the same label budget, with coverage kept? MT-RAG, 159 tasks x 3 systems, real judgments.

Data: ``data/mtrag/judged_human_477.jsonl`` (see ``bench/ppi_coverage.py``): the human label of an answer is its
annotators' mean faithfulness rated 1-4, rescaled to 0-1; the truth of a system is the mean of its 159 labels.
The judge is MT-RAG's ``RB_llm_idk``. People are simulated with the stored ratings: a label asked for is
the stored one. Per budget B (expected labels per system) and draw:

- ``uniform``: each item labelled with probability B / 159; the active estimator with those probabilities
  (the ``ppi`` tool with ``sampling_probs``), and PPI++ on exactly B uniformly drawn items (``ppi`` without
  ``sampling_probs``), the two baselines;
- ``active``: probabilities from the judge's expected error (``ultra_client.annotate.select``), two fixed
  sources: ``jury`` the disagreement of MT-RAG's two judges (``RB_llm_idk`` and ``RL_F_idk`` as a jury of two
  samples), ``score`` sqrt(p (1 - p)) of the judge's score; mixed with ``--uniform-share`` of the uniform rule;
- ``active fitted``: what ``ultra annotate --select active`` does: items decided one by one in a random order,
  each probability from a ridge model of |judge - human| fitted on the labels drawn so far (once ``FIT_AFTER``
  are in; uniform when it does not beat their mean; before, the jury), on the item features this data has: the
  judge's score, its sqrt(p (1 - p)), the jury's spread, the other judge's score and the conversation's turn.

Reported per method and B: coverage at alpha = 0.05 over systems and draws, the mean interval width, and its
ratio to uniform's (the same estimator, probabilities B / 159). Also the correlation between each expected-error
source and the judge's real error |judge - human| (the fitted model's: fitted on all 159 labels of the system,
so an upper bound on what it learns from fewer), and the share of the fitted method's decisions the model made:
active selection can only help where the correlation is positive.

    python bench/active_ppi.py [--reps 1000] [--seed 0] [--uniform-share 0.5] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.tools import call  # noqa: E402
from ultra_client.annotate import FIT_AFTER, UNIFORM_SHARE  # noqa: E402
from ultra_client.annotate.error_model import fit_error, predict_error  # noqa: E402
from ultra_client.annotate.select import Sequential, active_probabilities, expected_error  # noqa: E402

DATA = ROOT / "data" / "mtrag" / "judged_human_477.jsonl"
FOLDER = tempfile.mkdtemp(prefix="active-ppi-")  # the ppi tool's result files (removed at the end)
JUDGE, OTHER = "RB_llm_idk", "RL_F_idk"
BUDGETS = [20, 40, 80]


def load() -> dict[str, dict[str, np.ndarray]]:
    """Per system: human labels y, judge scores f and the two judges' scores as samples, tasks in one order."""
    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    tasks = sorted({r["task_id"] for r in rows})
    where = {(r["model_id"], r["task_id"]): r for r in rows}
    out = {}
    for system in dict.fromkeys(r["model_id"] for r in rows):
        picked = [where[system, t] for t in tasks]
        out[system] = {
            "y": np.array([(np.mean(r["faithfulness"]) - 1) / 3 for r in picked]),
            "f": np.array([float(r[JUDGE]) for r in picked]),
            "samples": [[float(r[JUDGE]), float(r[OTHER])] for r in picked],
        }
        f, other = out[system]["f"], np.array([float(r[OTHER]) for r in picked])
        turn = np.array([float(r["task_id"].rsplit("<::>", 1)[-1]) for r in picked])
        out[system]["features"] = np.column_stack([f, np.sqrt(f * (1 - f)), np.abs(f - other) / 2, other, turn])
    return out


def sources(data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The expected-error sources active selection may use on this data."""
    return {
        "jury": expected_error(list(data["f"]), data["samples"], 0.0, 1.0),
        "score": expected_error(list(data["f"]), [[] for _ in data["f"]], 0.0, 1.0),
    }


def estimate(f: np.ndarray, y: np.ndarray, labelled: np.ndarray, pi: np.ndarray | None, alpha: float) -> dict | None:
    """The ``ppi`` tool on one system: judge scores on every item, labels on the ``labelled`` ones, with the
    probabilities ``pi`` they were drawn with (the active estimator) or without (PPI++); None when the tool
    refuses the draw (fewer than 10 labels)."""
    from ultra_kit.inprocess import ToolFailure

    items = [f"t{i}" for i in range(len(f))]
    arguments = {"judged": {"s": dict(zip(items, f.tolist(), strict=True))}, "alpha": alpha, "save_path": FOLDER,
                 "human": {"s": {t: float(v) for t, v, c in zip(items, y, labelled, strict=True) if c}}}  # fmt: skip
    if pi is not None:
        arguments["sampling_probs"] = {"s": dict(zip(items, pi.tolist(), strict=True))}
    try:
        return call("evaluation", "ppi", **arguments)["ppi_res"]["s"]
    except ToolFailure:
        return None


def run(reps: int, seed: int, uniform_share: float, alpha: float = 0.05) -> dict:
    """Coverage and width per method and budget (see the module's docstring)."""
    systems = load()
    rng = np.random.default_rng(seed)
    methods = ["uniform (IPW, B/N)", "uniform PPI++ (exactly B)", "active jury", "active score", "active fitted"]
    table, correlation, fitted_share = [], {}, {}
    for system, data in systems.items():
        error = np.abs(data["f"] - data["y"])
        correlation[system] = {k: float(np.corrcoef(u, error)[0, 1]) for k, u in sources(data).items()}
        model = fit_error(data["features"], error)
        correlation[system]["fitted_all"] = \
            float(np.corrcoef(predict_error(model, data["features"]), error)[0, 1]) if model else 0.0  # fmt: skip
        quiet = sources(data)["jury"] == 0  # the two judges agree: active selection's lowest probability
        correlation[system]["jury_zero_share"] = float(quiet.mean())
        correlation[system]["error_where_jury_agrees"] = float(error[quiet].mean())
        correlation[system]["error_elsewhere"] = float(error[~quiet].mean())
    for budget in BUDGETS:
        hits = {m: 0 for m in methods}
        width = {m: [] for m in methods}
        labelled = {m: [] for m in methods}
        by_model = []
        for data in systems.values():
            y, f, truth, n = data["y"], data["f"], float(data["y"].mean()), len(data["y"])
            probs = {"uniform (IPW, B/N)": np.full(n, budget / n)}
            for name, error in sources(data).items():
                probs[f"active {name}"] = active_probabilities(error, budget, uniform_share)
            for _ in range(reps):
                for method, pi in probs.items():
                    xi = rng.uniform(size=n) < pi
                    result = estimate(f, y, xi, pi, alpha) if xi.sum() >= 2 else None
                    if result is None:
                        continue
                    _record(result["ci"], truth, method, hits, width)
                    labelled[method].append(int(xi.sum()))
                selector = Sequential(judge=f, features=data["features"], heuristic=sources(data)["jury"],
                                      budget=budget, uniform_share=uniform_share, fit_after=FIT_AFTER)  # fmt: skip
                order = rng.permutation(n)
                xi, pi = _simulate(selector, y, order, rng.uniform(size=n), by_model)
                result = estimate(f, y, xi, pi, alpha) if xi.sum() >= 2 else None
                if result is not None:
                    _record(result["ci"], truth, methods[4], hits, width)
                    labelled[methods[4]].append(int(xi.sum()))
                chosen = np.zeros(n, bool)
                chosen[rng.choice(n, budget, replace=False)] = True
                _record(estimate(f, y, chosen, None, alpha)["ci"], truth, methods[1], hits, width)
                labelled[methods[1]].append(budget)
        fitted_share[budget] = float(np.mean(by_model))
        base = float(np.mean(width[methods[0]]))
        for method in methods:
            table.append({
                "budget": budget, "method": method, "coverage": hits[method] / len(width[method]),
                "mean_width": float(np.mean(width[method])), "width_vs_uniform": float(np.mean(width[method])) / base,
                "mean_labels": float(np.mean(labelled[method])), "draws": len(width[method]),
            })  # fmt: skip
    return {"rows": table, "error_correlation": correlation, "judge": JUDGE, "uniform_share": uniform_share,
            "reps": reps, "seed": seed, "fitted_decisions_share": fitted_share, "fit_after": FIT_AFTER}  # fmt: skip


def _simulate(selector: Sequential, y: np.ndarray, order: np.ndarray, uniforms: np.ndarray,
              by_model: list[float]) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``select.simulate``, also noting the share of decisions the fitted model made."""
    drawn, probs, labels, fitted = np.zeros(len(y), bool), np.zeros(len(y)), {}, 0
    for k, item in enumerate(order):
        probs[item], source = selector.probability(int(item), order[k:], labels)
        fitted += source.startswith("fitted")
        if uniforms[k] < probs[item]:
            drawn[item] = True
            labels[int(item)] = float(y[item])
    by_model.append(fitted / len(y))
    return drawn, probs


def _record(ci: list[float], truth: float, method: str, hits: dict, width: dict) -> None:
    lo, hi = ci
    hits[method] += lo <= truth <= hi
    width[method].append(hi - lo)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--uniform-share", type=float, default=UNIFORM_SHARE)
    parser.add_argument("--out")
    args = parser.parse_args()
    start = time.perf_counter()
    os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # the tool's result files go to a temporary folder
    try:
        result = run(args.reps, args.seed, args.uniform_share)
    finally:
        shutil.rmtree(FOLDER, ignore_errors=True)
    print(f"judge {JUDGE}; uniform share {args.uniform_share}; fitted model after {FIT_AFTER} labels, deciding "
          + ", ".join(f"{v:.0%} at B={b}" for b, v in result["fitted_decisions_share"].items()))  # fmt: skip
    for system, figures in result["error_correlation"].items():
        print(f"  {system}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()))
    print(f"{'B':>3}  {'method':<26} {'coverage':>8} {'width':>7} {'vs uniform':>10} {'labels':>7}")
    for row in result["rows"]:
        print(f"{row['budget']:>3}  {row['method']:<26} {row['coverage']:>8.3f} {row['mean_width']:>7.4f} "
              f"{row['width_vs_uniform']:>10.3f} {row['mean_labels']:>7.1f}")  # fmt: skip
    print(f"{time.perf_counter() - start:.1f} s")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
