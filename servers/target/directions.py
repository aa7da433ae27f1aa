"""Which way is better for what ``target.ask`` measures: its latency, lower (gates, compare and ``ultra sweep``
read it through ``SPEC.metric_directions``; a gate names it ``latency.p95``)."""

from __future__ import annotations

from servers.target.records.results import LATENCY_KEYS


def higher_is_better() -> dict[str, bool]:
    """``{"latency.p50": False, ...}``: every latency figure of the tool's ``latency`` output is lower-is-better."""
    return {f"latency.{key}": False for key in LATENCY_KEYS}
