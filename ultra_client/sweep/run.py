"""``ultra sweep``: check everything, start the servers once, run the trials, then rank, test, plot and print.

Order of work: the sweep's shape (keys, values, search, metric) is checked before any server
starts; the keys against the parameter file, and the metric's variable against the tools'
outputs, before any trial runs; the sweep's size (``max_trials``) before anything is enumerated.
A trial that fails (a NaN or infinite metric included) is recorded and the sweep goes on.
"""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from typing import Any

import anyio.lowlevel

from ultra_base.file_limits import require_regular_file
from ultra_client.building import build_parameters
from ultra_client.calls.described import described_servers
from ultra_client.calls.locate import pipeline_locations, tool_table
from ultra_client.calls.server_pool import parameter_references
from ultra_client.errors import UltraError, as_ultra_error, did_you_mean
from ultra_client.gates.direction import pipeline_directions
from ultra_client.pipeline.dataflow import check_dataflow, produced_variables
from ultra_client.pipeline.model import load_pipeline, require_file
from ultra_client.pipeline.params import parameter_path, read_parameter_file
from ultra_client.pipeline.setting_checks import check_setting_values, settings_to_send
from ultra_client.sweep.search import RANDOM_ATTEMPTS, make_search
from ultra_client.sweep.spec import (
    Range,
    SweepSpec,
    build_spec,
    check_keys,
    check_metric_variable,
    check_swept_limits,
    with_direction,
)
from ultra_client.sweep.trials import (
    TrialRunner,
    TrialStore,
    fingerprint,
    record_trial,
    say,
    skipped_folders,
    trial_settings,
)


def check_metric_key(spec: SweepSpec, produced: dict, raw: dict[str, dict[str, Any]], tools: dict) -> None:
    """When the tool's schema says how the metric's output keys follow from its settings (``x-outputs-from``,
    e.g. the measure names of a retrieval evaluation), check the key before any trial runs.

    Other keys, and those whose settings the sweep varies, are checked on the first finished trial
    (the sweep stops there if it is missing).
    """
    if spec.metric is None:
        return
    from ultra_base.errors import InputError
    from ultra_kit.inprocess import output_keys

    variable, _, key = spec.metric.partition(".")
    step, output = produced[variable]
    info = tools.get(step.server, {}).get(step.tool)
    swept = {k.split(".")[1] for k in spec.keys if k.split(".")[0] == step.server}
    if info is None:
        return
    settings = {**info.settings, **raw.get(step.server, {})}
    try:
        names = output_keys(info.outputs_from, output, {k: v for k, v in settings.items() if k not in swept})
    except (InputError, TypeError, ValueError):
        return  # the tool reports bad settings itself, on the first trial
    if names is not None and key not in names:
        raise UltraError(
            f"--metric {spec.metric}: '{variable}' ({step.name}) will hold {names}, not '{key}'"
            + did_you_mean(key, names)
        )


def check_first_result(spec: SweepSpec, record: dict[str, Any]) -> None:
    """The metric must be among the first finished trial's results; else stop before the other trials."""
    if spec.metric is None or spec.metric in record["results"]:
        return
    variable = spec.metric.split(".")[0]
    names = [name for name in record["results"] if name.split(".")[0] == variable]
    raise UltraError(
        f"--metric {spec.metric}: the first trial ({record['folder']}) produced no such scalar; "
        f"'{variable}' holds {names}" + did_you_mean(spec.metric, names) + " (the sweep stopped there)"
    )


def describe(values: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in values.items())


async def run_sweep(args: Any, warm_here: bool) -> tuple[SweepSpec, list[dict[str, Any]], list[str]]:
    """Check, then run every trial; the spec, one row per distinct trial, and notes for the table. ``warm_here``: a
    worker that reports imports the report's libraries while it waits for the others (False: a report process
    imports them, ``processes/reporter.py``)."""
    spec = build_spec(args)
    pipeline = load_pipeline(require_file(spec.pipeline))
    if spec.minimize is None:
        with_direction(spec, pipeline_directions(pipeline) if spec.metric else {})
    handle = join_shared(args, spec, pipeline)  # a shared study: refused before any server starts if its sweep differs
    target, raw = swept_settings(spec, pipeline)
    search = make_search(spec)
    locations = pipeline_locations(pipeline, bool(getattr(args, "stdio", False)))
    try:
        spec.output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UltraError(f"--output-dir {spec.output_dir}: cannot create it ({exc.strerror or exc})") from None
    runner = TrialRunner(pipeline, locations, spec.output_dir / "logs", getattr(args, "timeout", None))
    say(f"sweep folder: {spec.output_dir}")
    try:
        described = described_servers(locations)  # stdio servers: checked on their SPECs, before any starts
        if described is not None:
            raw = start_checks(spec, pipeline, described, raw, target)
        pool = await runner.start(parameter_references(target))
        if described is None:
            raw = start_checks(spec, pipeline, pool, raw, target)
        if handle is None:
            rows = await _trials(spec, search, runner, raw, target)
        else:
            from ultra_client.sweep.report import warm
            from ultra_client.sweep.status import rows_of
            from ultra_client.sweep.worker import run_worker

            reports = not getattr(args, "no_report", False)
            warms = reports and warm_here  # this worker imports the report's libraries itself
            if warms and (getattr(args, "workers", None) or 1) > 1:
                warm()  # the report's imports while the other workers take the first trials, not after the last
            await run_worker(spec, handle, runner, raw, target, idle=warm if warms else None)
            rows = rows_of(handle.study) if reports else []
    finally:
        await runner.close()
    return spec, rows, spec.notes


def swept_settings(spec: SweepSpec, pipeline: Any) -> tuple[Path, dict | None]:
    """The sweep's parameter file and its settings (None: not built yet), whose keys hold every swept key: checked
    before any server starts (and by ``--workers N`` before it starts the other workers, so that a mistake is
    reported once)."""
    target = spec.param or parameter_path(pipeline.path)
    if spec.param is not None:
        with as_ultra_error():
            require_regular_file(target, "parameter")
    raw = read_parameter_file(target, list(pipeline.servers)) if target.exists() else None
    if raw is not None:
        check_keys(spec, raw, target)
    return target, raw


def start_checks(spec: SweepSpec, pipeline: Any, servers: Any, raw: dict | None, target: Path) -> dict:
    """What a sweep checks before its first trial, on the started pool or the servers' description
    (``ultra_client.calls.described``): the parameter file (built first if ``raw`` is None) and its keys, its
    dataflow and setting values, the swept limits, the ``${VAR}`` a trial sends, the metric. The parameter file's
    settings."""
    tools = tool_table(servers)
    if raw is None:
        build_parameters(pipeline, servers, target)
        say(f"built {target}")
        raw = read_parameter_file(target)
        check_keys(spec, raw, target)
    else:
        check_dataflow(pipeline, tools, raw)
        check_setting_values(servers.servers, target)  # as ultra run: a bad setting fails here, not every trial
    check_swept_limits(spec, raw, servers.servers)
    check_sent_variables(spec, pipeline, servers, raw, target)
    produced = produced_variables(pipeline, tools)
    check_metric_variable(spec, list(produced))
    check_metric_key(spec, produced, raw, tools)
    return raw


def check_sent_variables(spec: SweepSpec, pipeline: Any, servers: Any, raw: dict, target: Path) -> None:
    """Each ``${VAR}`` a trial sends is set (and one a typed setting reads holds its type), as ``ultra run`` checks
    its parameter file (``settings_to_send``), so a sweep is refused with ``ultra run``'s message before its first
    trial instead of failing every trial: the parameter file's settings that no key of the sweep replaces (named by
    the file), then each swept value holding a ``${VAR}`` (named by its ``--grid`` or sweep-file line)."""
    from ultra_kit.settings import env_references

    kept = copy.deepcopy(raw)
    for space in spec.spaces:
        *outer, last = space.path
        node = kept
        for part in outer:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(last, None)  # replaced in every trial: its own value is never sent
    settings_to_send(kept, target, pipeline, servers)
    for space in spec.spaces:
        alias, setting = space.path[:2]
        for value in [] if isinstance(space.values, Range) else space.values:
            if env_references(value):
                section = {setting: kept[alias][setting]} if setting in kept.get(alias, {}) else {}
                settings_to_send(trial_settings({alias: section}, {space.key: value}), space.where, pipeline, servers)


def join_shared(args: Any, spec: SweepSpec, pipeline: Any) -> Any:
    """The shared study of ``--storage URL --study NAME`` (None without ``--storage``), joined or created."""
    if not getattr(args, "storage", None):
        return None
    from ultra_client.sweep import DEFAULTS
    from ultra_client.sweep.storage import identity_of, join_study, open_storage

    if spec.metric is None:
        raise UltraError("--storage: a shared study optimises a metric; name it with --metric, e.g. eval_res.map")
    handle = open_storage(args.storage, args.heartbeat or DEFAULTS["heartbeat"])
    identity = identity_of(spec, pipeline.path.read_text(encoding="utf-8"))
    return join_study(handle, args.study or pipeline.path.stem, identity)


async def _trials(spec: SweepSpec, search: Any, runner: TrialRunner, raw: dict, target: Path) -> list[dict[str, Any]]:
    store = TrialStore(spec.output_dir)
    skip = skipped_folders(spec.output_dir)
    total = spec.total  # computed, never enumerated
    rows: list[dict[str, Any]] = []
    seen: dict[str, dict[str, Any]] = {}
    asks = 0
    while spec.trials is None or len(rows) < spec.trials:
        await anyio.lowlevel.checkpoint()  # a SIGTERM between trials (or between repeated asks) stops here
        values = search.ask()
        asks += 1
        if values is None or asks > total * RANDOM_ATTEMPTS:
            break
        settings = trial_settings(raw, values)
        fp = fingerprint(runner.pipeline_text, settings, skip)
        if fp in seen:  # the sampler proposed a trial again: tell it the known result, run nothing
            search.tell(seen[fp]["results"].get(spec.metric) if spec.metric and seen[fp]["status"] == "ok" else None)
            continue
        number = len(rows) + 1
        record = store.finished(fp)
        if record is not None:
            say(f"trial {number}/{total}: {describe(values)}: finished before, not run again")
        else:
            folder = store.fresh(fp)
            record = await runner.run(folder, settings, target)
            record.update(fingerprint=fp, values=values, folder=str(folder))
            _fail_on_non_finite(spec, record, number)
            record_trial(folder, record)
            if record["status"] == "ok" and not any(r["status"] == "ok" for r in rows):
                check_first_result(spec, record)
            say(f"trial {number}/{total}: {describe(values)}: {_outcome(spec, record)}")
        row = {**record, "trial": number, "values": values, "fingerprint": fp}
        row.setdefault("results", {})
        rows.append(row)
        seen[fp] = row
        search.tell(row["results"].get(spec.metric) if spec.metric and row["status"] == "ok" else None)
    if spec.trials is not None and len(rows) < spec.trials and spec.method == "bayes":
        spec.notes.append(f"--bayes {spec.trials}: the sampler found only {len(rows)} distinct trials")
    return rows


def _fail_on_non_finite(spec: SweepSpec, record: dict[str, Any], number: int) -> None:
    """A trial whose metric came back NaN or infinite failed, with the value, its key and the trial."""
    value = record.get("non_finite", {}).get(spec.metric) if spec.metric else None
    if record["status"] == "ok" and value is not None:
        record.update(status="failed", error=f"trial {number}: {spec.metric} = {value}, not a finite number")


def _outcome(spec: SweepSpec, record: dict[str, Any]) -> str:
    if record["status"] != "ok":
        first = (record.get("error") or "").strip().splitlines()
        return f"FAILED ({first[0] if first else 'no message'})"
    value = record["results"].get(spec.metric) if spec.metric else None
    shown = f"{spec.metric} = {value:.4g}, " if isinstance(value, (int, float)) else ""
    return f"{shown}{record['wall_seconds']:.2f} s"


def finish(spec: SweepSpec, rows: list[dict[str, Any]], notes: list[str], processes: int) -> tuple[str, list[Path]]:
    """Rank, test, write sweep.csv/json and the plots (drawn by ``processes`` processes); the terminal table and
    the files written."""
    from ultra_client.sweep.report import terminal_table, write_plots
    from ultra_client.sweep.results import rank, significance, write_tables

    rank(rows, spec.metric, spec.minimize)
    note = significance(rows, spec.metric)
    if note:
        notes.append(note)
    flat = write_tables(spec.output_dir, spec, rows, notes)
    files = [spec.output_dir / "sweep.csv", spec.output_dir / "sweep.json"]
    if spec.metric and any(r["rank"] for r in rows):
        if importlib.util.find_spec("matplotlib") is None:
            notes.append("no plots: they need matplotlib (pip install -e '.[sweep]')")
        else:
            files += write_plots(spec.output_dir, flat, spec.keys, spec.metric, spec.minimize, processes)
    return terminal_table(flat, spec.keys, spec.metric), files
