"""The items that changed most between the first run (A) and each other run (B), per metric: the largest
regressions (worse: lower, or higher for a lower-is-better metric) and improvements with the question, both
answers and both judges' verdicts and reasons; and,
where nuggetize ran, the vital nuggets each run's answer gained or lost per query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from servers.report.compare.pairs import Pair, higher_is_better, shared_metrics
from servers.report.model import Run

TEXT_CHARS = 300


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"


def _said(run: Run, key: str) -> str:
    return " | ".join(
        f"{judge}: {verdict}{' — ' + why if why else ''}" for judge, verdict, why in run.rationales.get(key, [])
    )


def changes(runs: Sequence[Run], pairs: Sequence[Pair], *, per_metric: int) -> list[dict[str, Any]]:
    """Per (first run, other run) and metric: the ``per_metric`` largest regressions and improvements."""
    found = []
    for pair in (p for p in pairs if p.a == 0):
        a, b = runs[pair.a], runs[pair.b]
        for name in shared_metrics(runs, pair):
            x = a.columns[name][pair.a_positions]
            y = b.columns[name][pair.b_positions]
            up = higher_is_better(runs, pair, name)
            d = (y - x) if up else (x - y)  # > 0: B is better
            valid = np.flatnonzero(np.isfinite(d) & (d != 0))
            if not len(valid):
                continue
            order = valid[np.argsort(d[valid], kind="stable")]
            sides = {"regressions": order[:per_metric], "improvements": order[::-1][:per_metric]}
            entry: dict[str, Any] = {"metric": name, "a": a.label, "b": b.label, "higher_is_better": up}
            for side, picked in sides.items():
                picked = [i for i in picked if (d[i] < 0) == (side == "regressions")]
                entry[side] = [_item(a, b, pair.ids[i], float(x[i]), float(y[i])) for i in picked]
            found.append(entry)
    return found


def _item(a: Run, b: Run, key: str, x: float, y: float) -> dict[str, str]:
    text_a, text_b = a.texts.get(key, {}), b.texts.get(key, {})
    return {
        "id": key,
        "question": _cut(text_a.get("question") or text_b.get("question") or ""),
        "a_value": f"{x:.4f}",
        "b_value": f"{y:.4f}",
        "diff": f"{y - x:+.4f}",
        "a_answer": _cut(text_a.get("answer", "")),
        "b_answer": _cut(text_b.get("answer", "")),
        "a_said": _cut(_said(a, key)),
        "b_said": _cut(_said(b, key)),
    }


def nugget_changes(runs: Sequence[Run], pairs: Sequence[Pair], *, limit: int) -> list[dict[str, Any]]:
    """Per (first run, other run) and query: the vital nuggets B's answer supports that A's does not (gained),
    and the reverse (lost); only where nuggetize recorded each run's supported vital nuggets."""
    found = []
    for pair in (p for p in pairs if p.a == 0):
        a, b = runs[pair.a], runs[pair.b]
        for key in pair.ids:
            mine, theirs = a.nuggets.get(key), b.nuggets.get(key)
            if mine is None or theirs is None:
                continue
            gained, lost = sorted(theirs - mine), sorted(mine - theirs)
            if gained or lost:
                found.append({"a": a.label, "b": b.label, "id": key, "gained": gained, "lost": lost})
            if len(found) >= limit:
                return found
    return found
