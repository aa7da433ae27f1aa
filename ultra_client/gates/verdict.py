"""A gate's conditions judged against a run folder (and a baseline run folder): one verdict per condition.

A run's scalar results are those ``ultra sweep`` ranks by (``ultra_client.sweep.trials.flatten`` of
``memory.json``), plus ``failed_fraction``: the judged items that failed (request errors, unreadable
replies), summed over the run's result files, divided by all judged items. When some judged item failed
and no condition names ``failed_fraction``, the gate adds ``failed_fraction <= 0``: a failed item never
passes silently (a gate that tolerates some says so, e.g. ``{metric: failed_fraction, max: 0.02}``).

A baseline condition reads the metric's direction (``ultra_client.gates.direction``): ``max_drop`` bounds how
much worse it may get, ``no_significant_drop`` refuses a significant change for the worse; the verdict table's
``better`` column says which direction was used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_client.errors import did_you_mean
from ultra_client.gates import ERROR, EXIT_CODES, FAIL, FAILED_FRACTION, PASS
from ultra_client.gates.direction import builtin_directions, higher_is_better, word
from ultra_client.gates.spec import Condition
from ultra_client.summary.lines import align, cell
from ultra_client.summary.tables import cut
from ultra_client.sweep.trials import flatten


@dataclass
class RunResults:
    """A run folder's scalar results and its judged items' failures (``{result file: (failed, total)}``)."""

    folder: Path
    scalars: dict[str, float]
    failures: dict[str, tuple[int, int]]

    @property
    def failed(self) -> tuple[int, int]:
        return sum(c for c, _ in self.failures.values()), sum(t for _, t in self.failures.values())

    def value(self, metric: str) -> float | None:
        if metric == FAILED_FRACTION:
            count, total = self.failed
            return count / total if total else 0.0
        return self.scalars.get(metric)

    def names(self) -> list[str]:
        return [*self.scalars, FAILED_FRACTION]


@dataclass
class Verdict:
    """One condition's outcome: ``pass``, ``fail`` or ``error`` (it could not be evaluated), and why."""

    condition: Condition
    status: str
    value: float | None = None
    baseline: float | None = None
    message: str = ""
    higher_is_better: bool = True  # the metric's direction, as its registry declares it

    def describe(self) -> str:
        """The condition in the metric's direction (``toxicity.toxic <= baseline + 0.01``)."""
        return self.condition.describe(self.higher_is_better)


def read_run(folder: str | Path) -> RunResults:
    """The scalar results and failure counts of a run folder (its ``memory.json`` and result files)."""
    from ultra_client.runs.records import UnreadableRecord, read_memory

    folder = Path(folder)
    try:
        memory = read_memory(folder)
    except UnreadableRecord as exc:
        raise FileNotFoundError(str(exc)) from None
    if memory is None:
        raise FileNotFoundError(f"{folder} is not a finished run folder (it has no memory.json)")
    return RunResults(folder, flatten(memory), failure_counts(folder, memory))


def failure_counts(folder: Path, memory: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """``{name: (failed, total)}`` of every judged step: its ``failed`` summary (``ultra_kit.failures``) from
    ``usage.json``; for a run folder without one, its result files' summaries, else a ``failed`` variable."""
    from ultra_client.summary.costs import run_usage

    usage = run_usage(folder)  # each step's own summary, recorded as the run went (usage.json)
    steps = [step for step in usage["steps"] if isinstance(step.get("failed"), dict)] if usage else []
    if steps:
        return {f"step {s['step']}": (s["failed"]["count"], s["failed"]["total"] or 0) for s in steps}
    counts: dict[str, tuple[int, int]] = {}
    files = folder / "files"
    for path in sorted(files.rglob("*.json")) if files.is_dir() else []:
        summary = _file_summary(path)
        if summary is not None:
            counts[str(path.relative_to(folder))] = summary
    if counts:
        return counts
    for name, value in memory.items():
        summary = _summary(value)
        if summary is not None:
            counts[name] = summary
    return counts


def _file_summary(path: Path) -> tuple[int, int] | None:
    from ultra_client.runs.records import optional_json_record

    document = optional_json_record(path, "result")  # larger than MAX_RECORD_BYTES, too deep: not counted
    return _summary(document.get("failed")) if isinstance(document, dict) else None


def _summary(value: Any) -> tuple[int, int] | None:
    """(count, total) of a ``failed`` summary ``{"count": 2, "total": 40, "reasons": {...}}``, else None."""
    if not isinstance(value, dict) or not isinstance(value.get("reasons"), dict):
        return None
    count, total = value.get("count"), value.get("total")
    if isinstance(count, int) and isinstance(total, int) and 0 <= count <= total:
        return count, total
    return None


def with_implicit(conditions: list[Condition], run: RunResults) -> list[Condition]:
    """The conditions, plus ``failed_fraction <= 0`` when judged items failed and no condition names it."""
    if not conditions or run.failed[0] == 0 or any(c.metric == FAILED_FRACTION for c in conditions):
        return list(conditions)
    return [*conditions, Condition(FAILED_FRACTION, max=0.0, where="implicit: failed judged items never pass")]


def judge(conditions: list[Condition], run: RunResults, directions: dict[str, bool] | None = None) -> list[Verdict]:
    """One verdict per condition (the implicit one included), in order. ``directions``: ``{metric:
    higher_is_better}`` of the run's servers (``gates.direction``; by default every built-in server's)."""
    table = builtin_directions() if directions is None else directions
    baselines: dict[str, RunResults | str] = {}
    paired: dict[str, dict[str, Any] | str] = {}  # compare's result per baseline: one Holm family each
    verdicts = []
    for condition in with_implicit(conditions, run):
        baseline = None
        if condition.baseline is not None:
            if condition.baseline not in baselines:
                try:
                    baselines[condition.baseline] = read_run(condition.baseline)
                except FileNotFoundError as exc:
                    baselines[condition.baseline] = f"baseline {exc}"
            baseline = baselines[condition.baseline]
        verdict = _verdict(condition, run, baseline, higher_is_better(condition.metric, table))
        if condition.no_significant_drop and verdict.status != ERROR and isinstance(baseline, RunResults):
            if condition.baseline not in paired:
                from ultra_client.gates.significance import compare_rows

                paired[condition.baseline] = compare_rows(run.folder, baseline.folder)
            verdict = _paired_verdict(verdict, paired[condition.baseline])
        verdicts.append(verdict)
    return verdicts


def _paired_verdict(verdict: Verdict, rows: dict[str, Any] | str) -> Verdict:
    """The verdict with the paired test's outcome added: a significant drop fails, no paired values is an error."""
    from ultra_client.gates.significance import dropped, find_row, note

    up = verdict.higher_is_better
    row = find_row(rows, verdict.condition.metric) if isinstance(rows, dict) else rows
    if isinstance(row, str):
        return Verdict(verdict.condition, ERROR, verdict.value, verdict.baseline, row, up)
    drop = dropped(row, up)
    message = "; ".join(part for part in (verdict.message, drop or note(row)) if part)
    status = FAIL if drop or verdict.status == FAIL else PASS
    return Verdict(verdict.condition, status, verdict.value, verdict.baseline, message, up)


def _verdict(condition: Condition, run: RunResults, baseline: RunResults | str | None, up: bool) -> Verdict:
    value = run.value(condition.metric)
    if value is None:
        hint = did_you_mean(condition.metric, run.names())
        return Verdict(
            condition, ERROR, message=f"the run has no scalar result {condition.metric}{hint}", higher_is_better=up
        )
    if isinstance(baseline, str):
        return Verdict(condition, ERROR, value, message=baseline, higher_is_better=up)
    reference = None
    if baseline is not None:
        reference = baseline.value(condition.metric)
        if reference is None:
            missing = f"baseline {baseline.folder} has no {condition.metric}"
            return Verdict(condition, ERROR, value, message=missing, higher_is_better=up)
    for source, number in (("the run's", value), ("the baseline's", reference)):
        if number is not None and not math.isfinite(number):  # NaN passes no comparison: it is no verdict either
            message = f"{source} {condition.metric} is {number}, not a finite number: it cannot be evaluated"
            return Verdict(condition, ERROR, value, reference, message, up)
    broken = []
    worsened = None if reference is None else (reference - value if up else value - reference)
    if worsened is not None and condition.max_drop is not None and worsened > condition.max_drop + 1e-12:
        moved = "dropped" if up else "rose"
        broken.append(
            f"{moved} {worsened:.4g} from the baseline (at most {condition.max_drop:g}; {word(up)} is better)"
        )
    if condition.min is not None and value < condition.min:
        broken.append(f"below {condition.min:g}")
    if condition.max is not None and value > condition.max:
        broken.append(f"above {condition.max:g}")
    if condition.metric == FAILED_FRACTION:
        count, total = run.failed
        note = f"{count} of {total} judged items failed"
        return Verdict(condition, FAIL if broken else PASS, value, reference, "; ".join([*broken, note]), up)
    return Verdict(condition, FAIL if broken else PASS, value, reference, "; ".join(broken), up)


def exit_code(verdicts: list[Verdict]) -> int:
    """2 if some condition could not be evaluated, else 1 if some failed, else 0."""
    return max((EXIT_CODES[v.status] for v in verdicts), default=0)


def verdict_lines(verdicts: list[Verdict]) -> list[str]:
    """The verdict table (condition, value, baseline, verdict, which way is better), then each condition's
    note (why it failed, or what it counted) on lines of its own, wrapped to fit 100 columns."""
    import textwrap

    rows = [["condition", "value", "baseline", "verdict", "better"]]
    for v in verdicts:
        rows.append([v.describe(), cell(v.value), cell(v.baseline), v.status.upper(), word(v.higher_is_better)])
    rest = sum(max(len(row[i]) for row in rows) + 2 for i in range(1, 5))  # the other columns and their gaps
    for row in rows[1:]:  # a long metric name is cut in the middle; its note below names it whole
        row[0] = cut(row[0], max(24, NOTE_WIDTH - rest))
    lines = align(rows, [False, True, True, False, False])
    lines.insert(1, "-" * max(len(line) for line in lines))
    for v in verdicts:
        if v.message:
            lines += textwrap.wrap(f"  {v.describe()}: {v.message}", NOTE_WIDTH, subsequent_indent="      ",
                                   break_long_words=False, break_on_hyphens=False)  # fmt: skip
    passed = sum(1 for v in verdicts if v.status == PASS)
    lines.append(f"gate: {passed} of {len(verdicts)} condition(s) passed; exit status {exit_code(verdicts)}")
    return lines


NOTE_WIDTH = 100
