"""The sweep's searches stream their trials, its size is computed before anything is enumerated, and a
non-finite result is told apart (in-process units; ``tests/hostile/test_sweep_bounds.py`` runs the CLI)."""

from __future__ import annotations

import itertools
import random
import time
from pathlib import Path

import pytest

from ultra_client.calls.local_server import ToolRefused
from ultra_client.calls.server_pool import call_tool_checked
from ultra_client.cli import parser
from ultra_client.errors import UltraError
from ultra_client.sweep import DEFAULTS
from ultra_client.sweep.search import RANDOM_ATTEMPTS, GridSearch, RandomSearch, canonical, make_search
from ultra_client.sweep.spec import build_spec
from ultra_client.sweep.trials import flatten, split_non_finite


def spec_of(tmp_path: Path, *options: str):
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text("servers:\n  evaluation: servers/evaluation\npipeline:\n  - evaluation.evaluate_trec\n")
    return build_spec(parser().parse_args(["sweep", str(pipeline), *options]))


def asked(search, limit: int = 10**9) -> list[dict]:
    trials = []
    while len(trials) < limit and (values := search.ask()) is not None:
        trials.append(values)
    return trials


def test_a_grid_above_max_trials_is_refused_with_its_count_without_enumerating(tmp_path: Path) -> None:
    values = str(list(range(1000)))
    options = ["--grid", f"x.a={values}", "--grid", f"x.b={values}", "--grid", f"x.c={values}"]
    started = time.perf_counter()
    with pytest.raises(UltraError) as refused:
        spec_of(tmp_path, *options)
    assert time.perf_counter() - started < 5
    message = str(refused.value)
    assert "the grid holds 1,000,000,000 trials (1,000 (x.a) x 1,000 (x.b) x 1,000 (x.c))" in message
    assert f"more than max_trials ({DEFAULTS['max_trials']:,})" in message and "--max-trials" in message


def test_a_billion_trial_grid_allowed_streams_its_first_trials_at_once(tmp_path: Path) -> None:
    values = str(list(range(1000)))
    options = ["--grid", f"x.a={values}", "--grid", f"x.b={values}", "--grid", f"x.c={values}"]
    spec = spec_of(tmp_path, *options, "--max-trials", str(10**9))
    assert spec.total == 10**9 and spec.max_trials == 10**9
    started = time.perf_counter()
    first = asked(make_search(spec), limit=3)
    assert time.perf_counter() - started < 1
    assert first == [{"x.a": 0, "x.b": 0, "x.c": 0}, {"x.a": 0, "x.b": 0, "x.c": 1}, {"x.a": 0, "x.b": 0, "x.c": 2}]


def test_the_grid_order_is_the_product_first_key_slowest(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, "--grid", "x.a=[1, 2]", "--grid", "x.b=[p, q, r]")
    assert isinstance(make_search(spec), GridSearch) and spec.total == 6
    assert asked(make_search(spec)) == [{"x.a": a, "x.b": b} for a, b in itertools.product([1, 2], "pqr")]


def test_random_n_and_max_trials_are_checked(tmp_path: Path) -> None:
    with pytest.raises(UltraError, match=r"--random: 20,000 trials is more than max_trials \(10,000\)"):
        spec_of(tmp_path, "--grid", "x.a={low: 0, high: 1}", "--random", "20000")
    with pytest.raises(UltraError, match="max_trials must be a positive whole number"):
        spec_of(tmp_path, "--grid", "x.a=[1]", "--max-trials", "0")
    assert spec_of(tmp_path, "--grid", "x.a={low: 0, high: 1}", "--random", "7").total == 7


def old_random_trials(spec) -> list[dict]:
    """The random search as it was (every draw made up front), to check streaming kept the trials."""
    from ultra_client.sweep.search import _draw

    rng, seen, trials = random.Random(spec.seed), set(), []
    for _ in range(spec.trials * RANDOM_ATTEMPTS):
        if len(trials) == spec.trials:
            break
        draw = {space.key: _draw(rng, space.values) for space in spec.spaces}
        if canonical(draw) not in seen:
            seen.add(canonical(draw))
            trials.append(draw)
    return trials


def test_random_search_streams_the_same_seeded_trials(tmp_path: Path) -> None:
    spec = spec_of(
        tmp_path, "--grid", "x.a={low: 1, high: 1000, log: true}", "--grid", "x.b=[[5], [10]]", "--random", "9"
    )
    search = make_search(spec)
    assert isinstance(search, RandomSearch) and search.seen == set()  # nothing drawn before it is asked
    trials = asked(search)
    assert trials == old_random_trials(spec) and len(trials) == 9 and not spec.notes


def test_random_search_over_a_small_space_runs_what_it_holds_with_a_note(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, "--grid", "x.a=[1, 2]", "--grid", "x.b=[p, q]", "--random", "10")
    started = time.perf_counter()
    trials = asked(make_search(spec))
    assert time.perf_counter() - started < 5
    assert sorted(canonical(t) for t in trials) == sorted(
        canonical({"x.a": a, "x.b": b}) for a, b in itertools.product([1, 2], "pq")
    )
    assert spec.notes == ["--random 10: the space holds only 4 distinct combinations; running those"]


def test_non_finite_results_are_split_out() -> None:
    memory = {"scores": {"main": float("nan"), "other": 1.0, "top": float("-inf")}, "n": float("inf"), "k": 3}
    finite, non_finite = split_non_finite(flatten(memory))
    assert finite == {"scores.other": 1.0, "k": 3}
    assert non_finite == {"scores.main": "nan", "scores.top": "-inf", "n": "inf"}


class _SchemaClient:
    """A client whose call fails as the MCP SDK's does when a result does not match the output schema."""

    def __init__(self, instance: object, schema: dict) -> None:
        self.instance, self.schema = instance, schema

    async def call_tool(self, *args: object, **kwargs: object) -> None:
        import jsonschema

        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(self.schema).iter_errors({"scores": {"main": self.instance}})
        )
        raise RuntimeError(f"Invalid structured content returned by tool score: {error}") from error


SCHEMA = {"type": "object", "properties": {"scores": {"type": "object", "additionalProperties": {"type": "number"}}}}


@pytest.mark.anyio
async def test_a_null_number_over_mcp_is_a_refusal_naming_its_key() -> None:
    with pytest.raises(ToolRefused, match=r"^output scores\.main is NaN or infinite, not a finite number"):
        await call_tool_checked(_SchemaClient(None, SCHEMA), "score", {}, None, None)
    with pytest.raises(ToolRefused, match=r"^output scores\.main does not match the tool's output schema: 'x'"):
        await call_tool_checked(_SchemaClient("x", SCHEMA), "score", {}, None, None)


@pytest.mark.anyio
async def test_other_runtime_errors_still_propagate() -> None:
    class Dead:
        async def call_tool(self, *args: object, **kwargs: object) -> None:
            raise RuntimeError("Connection closed")

    with pytest.raises(RuntimeError, match="Connection closed"):
        await call_tool_checked(Dead(), "score", {}, None, None)
