"""Active selection with a fitted model of the judge's error: the model recovers a known dependence and declines
noise, each probability is set from earlier labels only, and on simulated data (fixed seed) the active estimate
keeps its coverage, is unbiased and is narrower than uniform selection's when the judge's error is predictable."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from servers.evaluation.judged.active import active_judged_mean
from tests.client.annotate.serving import Client, annotate_server
from ultra_client.annotate.error_model import fit_error, predict_error
from ultra_client.annotate.select import Sequential, active_probabilities, simulate
from ultra_kit.labels.store import sampling_probs


def population(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features (judge score, a flag, noise), judge scores and human labels: the judge errs only where the flag
    is set, which its score does not show."""
    flag = (rng.uniform(size=n) < 0.5).astype(float)
    judge = rng.uniform(0.1, 0.9, n)
    human = np.clip(judge + np.where(flag == 1, rng.normal(0, 0.35, n), rng.normal(0, 0.02, n)), 0, 1)
    return np.column_stack([judge, flag, rng.normal(size=n)]), judge, human


def test_error_model_recovers_a_known_dependence_and_declines_noise() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    error = 0.2 + 0.1 * x[:, 1] + rng.normal(0, 0.01, 200)
    model = fit_error(x, error)
    assert model is not None
    weights, intercept = model
    assert weights[1] == pytest.approx(0.1, abs=0.01) and abs(weights[0]) < 0.01 and abs(weights[2]) < 0.01
    assert intercept == pytest.approx(0.2, abs=0.01)
    assert predict_error(model, np.array([[0, 1, 0], [0, -9, 0]])) == pytest.approx([0.3, 0.0], abs=0.02)
    assert fit_error(x, rng.uniform(size=200)) is None  # no feature predicts it: no better than the mean
    assert fit_error(x, np.full(200, 0.3)) is None


def test_each_probability_comes_from_earlier_labels_only() -> None:
    rng = np.random.default_rng(1)
    features, judge, human = population(rng, 120)
    order, uniforms = rng.permutation(120), rng.uniform(size=120)
    selector = Sequential(judge=judge, features=features, heuristic=None, budget=40, uniform_share=0.5, fit_after=10)
    drawn, probs = simulate(selector, human, order, uniforms)
    assert (probs > 0).all() and (probs <= 1).all()
    assert drawn.sum() > 10 and len(np.unique(probs.round(12))) > 1  # the model took over: probabilities differ
    # replay by hand: after each label, refit on the labels so far and spread the budget's share over the items left
    labels: dict[int, float] = {}
    expected = np.zeros(120)
    for k, item in enumerate(order):
        if k == 0 or drawn[order[k - 1]]:
            fresh = Sequential(judge=judge, features=features, heuristic=None, budget=40, uniform_share=0.5,
                               fit_after=10)  # fmt: skip
            error, _ = fresh.expected(labels)
            rest = order[k:]
            budget = 40 * len(rest) / 120
            expected[rest] = budget / len(rest) if error is None else active_probabilities(error[rest], budget, 0.5)
        assert probs[item] == pytest.approx(expected[item])
        if drawn[item]:
            labels[int(item)] = float(human[item])
    # a label that changes later does not change the probabilities set before it
    late = order[-1]
    other = human.copy()
    other[late] = 1 - other[late]
    again = simulate(Sequential(judge=judge, features=features, heuristic=None, budget=40, uniform_share=0.5,
                                fit_after=10), other, order, uniforms)  # fmt: skip
    assert np.array_equal(again[1], probs)


def test_fitted_active_selection_covers_and_is_narrower_than_uniform() -> None:
    rng = np.random.default_rng(5)
    n, budget, reps, alpha = 300, 60, 150, 0.1
    hits, width, error = {"active": 0, "uniform": 0}, {"active": [], "uniform": []}, []
    for _ in range(reps):
        features, judge, human = population(rng, n)
        order, uniforms = rng.permutation(n), rng.uniform(size=n)
        for name, fit_after in (("active", 20), ("uniform", n + 1)):
            selector = Sequential(judge=judge, features=features, heuristic=None, budget=budget, uniform_share=0.5,
                                  fit_after=fit_after)  # fmt: skip
            drawn, probs = simulate(selector, human, order, uniforms)
            result = active_judged_mean(human[drawn], judge[drawn], probs[drawn], judge[~drawn], alpha)
            low, high = result["ci"]
            hits[name] += low <= human.mean() <= high
            width[name].append(high - low)
            if name == "active":
                error.append(result["aipw"]["estimate"] - human.mean())
    assert hits["active"] / reps >= 0.87 and hits["uniform"] / reps >= 0.87  # nominal 0.90
    assert abs(np.mean(error)) < 3 * np.std(error) / np.sqrt(reps)  # lambda = 1: unbiased
    assert np.mean(width["active"]) < 0.95 * np.mean(width["uniform"])


def test_the_server_fits_the_error_model_on_the_labels_so_far(tmp_path) -> None:
    """Through a real server: the judge is wrong exactly on the long answers; once --fit-after labels are in, the
    items still undecided get their probability from the fitted model, higher on long answers."""
    rows = [{"id": f"q{i}", "question": f"Question {i}?", "answer": "yes " * (60 if i % 2 else 1),
             "passages": ["p"], "judge": float(i % 3 == 0)} for i in range(80)]  # fmt: skip
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = (str(data), "--scale", "binary", "--annotator", "ann", "--budget", "40", "--fit-after", "8")
    given = {}
    with annotate_server(tmp_path, *args) as (base, _):
        client = Client(base)
        while (item := client.next()) is not None:
            i = int(item["id"][1:])
            given[item["id"]] = float(i % 3 == 0) if i % 2 == 0 else float(i % 3 != 0)  # wrong on long answers
            assert client.label(item["item_id"], given[item["id"]]).status_code == 200
        assert client.http.get("/api/progress").json()["done"]
    store = tmp_path / "output" / "labels.sqlite"
    with sqlite3.connect(store) as db:
        decided = db.execute("SELECT item_id, prob, drawn, source FROM items ORDER BY position").fetchall()
    assert all(drawn is not None and 0 < prob <= 1 for _, prob, drawn, _ in decided)  # every item decided
    assert {i for i, _, drawn, _ in decided if drawn} == set(given)
    sources = [source for *_, source in decided]
    assert sources[0] == "uniform" and any(s.startswith("fitted on ") for s in sources)
    fitted = [(int(i[1:]) % 2, p) for i, p, _, s in decided if s.startswith("fitted on ")]
    long_p = np.mean([p for odd, p in fitted if odd])
    short_p = np.mean([p for odd, p in fitted if not odd])
    assert long_p > 2 * short_p
    assert sampling_probs(store) == {"": pytest.approx({i: p for i, p, d, _ in decided if d})}


def test_people_stopping_early_scale_the_recorded_probabilities(tmp_path) -> None:
    """Active selection stopped after five labels, one drawn item still held: each labelled item's probability
    is its own times d / N (the share of items decided) times k / m (the labelled share of the drawn ones)."""
    from ultra_client.annotate.scales import read_scale
    from ultra_client.annotate.select import plan
    from ultra_client.annotate.source import Item
    from ultra_client.annotate.store import LabelStore

    items = [Item("", f"q{i}", f"Q{i}?", "yes " * (1 + i % 5), judge=(i % 7) / 6) for i in range(60)]
    store = LabelStore(tmp_path / "output" / "labels.sqlite", read_scale("binary"))
    queue, used = plan([i.judge for i in items], select="active", seed=3, overlap=0.0)
    meta = {"select": used, "seed": 3, "budget": 20, "uniform_share": 0.5, "fit_after": 20, "source": "x"}
    assert used == "active" and store.setup(items, queue, meta)
    store.follow_selection(items, low=0.0, high=1.0)
    for _ in range(5):
        key = store.next_key("ann")
        store.record("ann", key, "label", 1.0, None)
    held = store.next_key("ann")  # drawn, not labelled
    assert held is not None
    rows = store.connection.execute("SELECT key, prob, drawn, source FROM items").fetchall()
    store.close()
    decided = [r for r in rows if r["drawn"] is not None]
    drawn = [r for r in decided if r["drawn"]]
    assert len(drawn) == 6 and len(decided) < 60 and {r["source"] for r in decided} == {"judge's uncertainty"}
    share = len(decided) / 60 * 5 / 6
    expected = {r["key"]: r["prob"] * share for r in drawn if r["key"] != held}
    assert sampling_probs(tmp_path / "output" / "labels.sqlite") == {"": pytest.approx(expected)}


def test_a_uniform_share_of_zero_is_refused(tmp_path) -> None:
    """At 0 an item whose expected error is 0 could never be drawn: the estimate would be biased."""
    from tests.client.annotate.serving import write_dataset
    from tests.conftest import run_ultra

    data = write_dataset(tmp_path)
    done = run_ultra("annotate", str(data), "--scale", "binary", "--uniform-share", "0", cwd=tmp_path)
    assert done.returncode != 0 and "--uniform-share in (0, 1]" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "output" / "labels.sqlite").exists()


def test_sources_in_order_uncertainty_then_model_or_uniform() -> None:
    rng = np.random.default_rng(2)
    features, judge, human = population(rng, 200)
    uncertainty = np.sqrt(judge * (1 - judge))
    selector = Sequential(judge=judge, features=features, heuristic=uncertainty, budget=50, uniform_share=0.5,
                          fit_after=20)  # fmt: skip
    few = {i: float(human[i]) for i in range(19)}
    assert selector.expected(few)[1] == "judge's uncertainty" and selector.expected(few)[0] is uncertainty
    informative = {i: float(human[i]) for i in range(60)}
    error, source = selector.expected(informative)
    assert source == "fitted on 60 labels"
    assert error[features[:, 1] == 1].mean() > 5 * error[features[:, 1] == 0].mean()  # the flagged half errs
    noise = {i: float(np.clip(judge[i] + rng.normal(0, 0.2), 0, 1)) for i in range(60)}  # error unpredictable
    assert selector.expected(noise) == (None, "uniform (no model beats the mean error of 60 labels)")
