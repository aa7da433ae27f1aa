"""A sweep for people: the table printed on the terminal and one PNG plot per swept key."""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Any

from ultra_client.errors import UltraError

MAX_CELL = 24  # characters of a value in the terminal table
LATENCY = ("latency.p50", "latency.p95")  # target.ask's latency, shown beside the metric when trials have it


def terminal_table(flat: list[dict[str, Any]], keys: list[str], metric: str | None) -> str:
    """Rank, trial, swept values, the metric, the Holm-adjusted p-value, the latency (``target.ask``'s p50 and
    p95 seconds, when trials have them), seconds and status; best marked *."""
    latency = [name for name in LATENCY if name != metric and any(name in row for row in flat)]
    headers = ["rank", "trial", *keys]
    if metric:
        headers += [metric, "p (Holm)"]
    headers += [*latency, "seconds", "status"]
    lines = []
    for row in flat:
        cells = [f"{row['rank']}{'*' if row['best'] else ''}" if row["rank"] else "-", str(row["trial"])]
        cells += [_short(row.get(key)) for key in keys]
        if metric:
            cells += [_number(row.get(metric)), _number(row.get("p_value_holm"))]
        cells += [_number(row.get(name)) for name in latency]
        cells += [f"{row['wall_seconds']:.2f}", row["status"] if row["status"] == "ok" else _short(row["error"])]
        lines.append(cells)
    widths = [max(len(headers[i]), *(len(line[i]) for line in lines)) for i in range(len(headers))]
    text = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    text += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    return "\n".join(text)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-"
    return f"{value:.4g}"


def plot_name(key: str) -> str:
    return "plot_" + re.sub(r"[^A-Za-z0-9_.@-]+", "_", key) + ".png"


def warm() -> None:
    """Import what the report needs (matplotlib, the paired tests) while this worker waits for the others' last
    trials, so that the table and plots follow their end sooner."""
    import importlib.util

    import ultra_trec.significance  # noqa: F401 - imported for its side effect: loaded once, used by the report

    if importlib.util.find_spec("matplotlib") is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401


def write_plots(
    folder: Path, flat: list[dict[str, Any]], keys: list[str], metric: str, minimize: bool, processes: int
) -> list[Path]:
    """``plot_<key>.png`` per swept key: the metric of each finished trial against the key's value. With
    ``processes`` > 1 (``--workers N``) the keys are shared among that many processes forked from this one, where
    forking is safe; a key whose process failed is drawn here again, so that its error is this process's."""
    from ultra_client.sweep.processes.forked import Forked, can_fork

    rows = [r for r in flat if isinstance(r.get(metric), (int, float)) and math.isfinite(r[metric])]
    shares = [keys[n::processes] for n in range(min(processes, len(keys)))] if can_fork() else [keys]
    others = [Forked(functools.partial(_draw, folder, rows, share, metric, minimize)) for share in shares[1:]]
    _draw(folder, rows, shares[0] if shares else [], metric, minimize)
    for process, share in zip(others, shares[1:], strict=True):
        if process.wait() != 0:
            _draw(folder, rows, share, metric, minimize)
    return [folder / plot_name(key) for key in keys]


def _draw(folder: Path, rows: list[dict[str, Any]], keys: list[str], metric: str, minimize: bool) -> int:
    """Draw each of ``keys``' plots into ``folder``; 0 (the exit code of a forked process)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for key in keys:
        values = [r.get(key) for r in rows]
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        labels = sorted({json.dumps(v, sort_keys=True) for v in values}) if not numeric else []
        xs = values if numeric else [labels.index(json.dumps(v, sort_keys=True)) for v in values]
        ys = [r[metric] for r in rows]
        figure, axes = plt.subplots(figsize=(6, 4), dpi=100)
        axes.scatter(xs, ys, color="tab:blue", label="trial")
        best = [(x, y) for x, y, r in zip(xs, ys, rows, strict=True) if r["best"]]
        if best:
            axes.scatter(*zip(*best, strict=True), color="tab:red", marker="*", s=200, label="best")
        if not numeric:
            axes.set_xticks(range(len(labels)), [_short(json.loads(t)) for t in labels], rotation=20)
        axes.set_xlabel(key)
        axes.set_ylabel(f"{metric} ({'lower' if minimize else 'higher'} is better)")
        axes.set_title(f"{metric} against {key}")
        axes.grid(alpha=0.3)
        axes.legend()
        figure.tight_layout()
        _save_atomic(figure, folder / plot_name(key))
        plt.close(figure)
    return 0


def _save_atomic(figure: Any, path: Path) -> None:
    """Render the PNG (fast compression, as the report server's plots), then write it atomically."""
    import io

    from ultra_kit.files import atomic_write_bytes

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", pil_kwargs={"compress_level": 1})
    try:
        atomic_write_bytes(path, buffer.getvalue())
    except OSError as exc:
        raise UltraError(f"{path}: cannot write the plot: {exc.strerror or exc}") from None
