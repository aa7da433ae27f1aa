"""Whether higher or lower is better for a metric, as the servers' registries declare it.

Each metric's direction is written once, in its server's registry (an answer judge's ``lower_is_better``, an
answer metric's ``higher_is_better`` ...); the server publishes the registry's ``{metric: higher_is_better}``
through its ``SPEC.metric_directions`` (``ServerSpec.directions``), and the client learns it only from there,
never by importing a server. A gate's ``max_drop`` and ``no_significant_drop`` and ``ultra sweep``'s default
ranking read it; the report server's ``compare`` reads the same declaration from the result files.

A gate or sweep metric is ``variable.key`` (or a plain variable); its registry name is ``variable.key`` itself
(``latency.p95``: the target server declares its latency lower-is-better), else the key (the variable), or
without evaluate's ``avg_`` and SQuAD's ``_HasAns`` / ``_NoAns``. A metric no registry names is
higher-is-better (trec_eval's measures, a custom server's results); ``failed_fraction`` is lower-is-better.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ultra_client.gates import FAILED_FRACTION


def spec_directions(specs: Iterable[Any]) -> dict[str, bool]:
    """``{metric: higher_is_better}`` declared by the SPECs (None, a server without one, is skipped); the first
    server to name a metric decides it (the built-in servers never disagree: tests/client/test_gate_direction.py)."""
    table: dict[str, bool] = {}
    for spec in specs:
        for name, up in (spec.directions() if spec is not None else {}).items():
            table.setdefault(name, up)
    return table


def pipeline_directions(pipeline: Any) -> dict[str, bool]:
    """The directions declared by the servers of ``pipeline`` (a ``Pipeline``), read from their SPECs."""
    from ultra_client.calls.locate import pipeline_locations
    from ultra_kit.inprocess import load_spec

    return spec_directions(load_spec(at.module, at.root) for at in pipeline_locations(pipeline))


def builtin_directions() -> dict[str, bool]:
    """The directions declared by every built-in server (``ultra gate RUN``: the run's pipeline is not at hand)."""
    from ultra_client.calls.locate import builtin_servers, locate_named_server
    from ultra_kit.inprocess import load_spec

    locations = [locate_named_server(name) for name in builtin_servers()]
    return spec_directions(load_spec(at.module, at.root) for at in locations)


def registry_names(metric: str) -> list[str]:
    """The names a registry may give the metric ``variable.key`` (or a plain variable), most precise first."""
    _, _, key = metric.partition(".")
    name = key or metric
    bare = name.removeprefix("avg_")
    return list(dict.fromkeys([metric, name, bare, bare.removesuffix("_HasAns").removesuffix("_NoAns")]))


def higher_is_better(metric: str, table: dict[str, bool]) -> bool:
    """The direction of ``metric`` in ``table`` (``spec_directions``); True when no registry names it."""
    if metric == FAILED_FRACTION:
        return False
    return next((table[name] for name in registry_names(metric) if name in table), True)


def word(up: bool) -> str:
    """``higher`` or ``lower``: which way is better, as tables and messages say it."""
    return "higher" if up else "lower"
