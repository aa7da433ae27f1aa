"""What a sweep searches: its keys and values, from ``--grid`` options and/or a ``sweep:`` block, checked.

The defaults of the sweep options are written once, in ``ultra_client.sweep.DEFAULTS``; the command line's
options default to ``None`` so that a ``sweep:`` file's value is kept unless the option is given.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ultra_base.file_limits import ShapeError, load_yaml_value
from ultra_client.errors import UltraError, as_ultra_error, did_you_mean, located
from ultra_client.sweep import DEFAULTS
from ultra_kit.yaml_files.lines import load_yaml_with_lines, plain

SWEEP_KEYS = ("pipeline", "param", "grid", "random", "bayes", "seed", "metric", "minimize", "output_dir", "max_trials")
RANGE_KEYS = ("low", "high", "log")
CHOICE_KEY = "choices"


@dataclass(frozen=True)
class Range:
    """A numeric interval for --random/--bayes; integers when both ends are integers."""

    low: float
    high: float
    log: bool = False

    @property
    def integer(self) -> bool:
        return isinstance(self.low, int) and isinstance(self.high, int)


@dataclass
class Space:
    """One swept key: ``server.setting[.subkey...]`` and its values (a list) or a Range."""

    key: str
    values: list[Any] | Range
    where: str  # "--grid retriever.top_k" or "sweep.yaml:7", for messages

    @property
    def path(self) -> list[str]:
        return self.key.split(".")


@dataclass
class SweepSpec:
    """A checked sweep: the pipeline, its parameter file, the space, the search and the metric."""

    pipeline: Path
    param: Path | None
    spaces: list[Space]
    method: str  # grid | random | bayes
    trials: int | None  # N of --random / --bayes
    seed: int
    metric: str | None
    minimize: bool | None  # None until ``with_direction`` reads the metric's declared direction
    output_dir: Path
    max_trials: int = DEFAULTS["max_trials"]
    source: str = ""  # the sweep file, when there is one
    notes: list[str] = field(default_factory=list)

    @property
    def keys(self) -> list[str]:
        return [space.key for space in self.spaces]

    @property
    def total(self) -> int:
        """How many trials the sweep runs at most: N of --random/--bayes, or the grid's size (computed, not
        enumerated)."""
        return self.trials if self.trials is not None else grid_size(self.spaces)


def grid_size(spaces: list[Space]) -> int:
    """The number of combinations of the spaces' value lists: the product of their lengths."""
    return math.prod(len(space.values) for space in spaces if isinstance(space.values, list))


def read_sweep_file(path: Path) -> dict[str, Any] | None:
    """The ``sweep:`` block of ``path`` (with lines), or None when ``path`` is a plain pipeline."""
    with as_ultra_error():
        data = load_yaml_with_lines(path, "pipeline or sweep")
    if not isinstance(data, dict) or "sweep" not in data:
        return None
    others = [key for key in data if key != "sweep"]
    if others:
        raise located(path, data.line, f"a sweep file holds only a 'sweep:' block; remove {others}")
    block = data["sweep"]
    if not isinstance(block, dict):
        raise located(path, data.line, f"'sweep' must be a mapping with the keys {list(SWEEP_KEYS)}")
    for key in block:
        if key not in SWEEP_KEYS:
            line = getattr(key, "line", None) or block.line
            raise located(path, line, f"unknown sweep key '{key}'{did_you_mean(str(key), list(SWEEP_KEYS))}")
    if "pipeline" not in block:
        raise located(path, block.line, "the sweep block needs 'pipeline: <file>' (relative to this file)")
    return block


def parse_grid_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUES`` of ``--grid``, VALUES parsed as YAML."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise UltraError(f"--grid '{text}': expected KEY=VALUES, e.g. --grid 'retriever.top_k=[1, 3, 5]'")
    try:
        return key, load_yaml_value(value)
    except ShapeError as exc:
        raise UltraError(f"--grid {key}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise UltraError(f"--grid {key}: the values are not valid YAML ({getattr(exc, 'problem', exc)})") from None


def check_values(key: str, raw: Any, where: str, method: str) -> list[Any] | Range:
    """A non-empty list, or (for --random/--bayes) a range ``{low, high[, log]}`` or ``{choices: [...]}``."""
    example = f"e.g. {key}=[1, 3, 5]" + ("" if method == "grid" else " or {low: 1, high: 50, log: true}")
    if isinstance(raw, dict) and CHOICE_KEY in raw:
        if len(raw) != 1:
            raise UltraError(f"{where}: {{choices: [...]}} takes no other key, got {sorted(map(str, raw))}")
        raw = raw[CHOICE_KEY]
        if not isinstance(raw, list):
            raise UltraError(f"{where}: 'choices' must be a list, {example}")
    if isinstance(raw, list):
        if not raw:
            raise UltraError(f"{where}: the list of values of {key} is empty; give at least one value, {example}")
        return plain(raw)
    if isinstance(raw, dict):
        for name in raw:
            if name not in RANGE_KEYS:
                hint = did_you_mean(str(name), [*RANGE_KEYS, CHOICE_KEY])
                raise UltraError(f"{where}: unknown range key '{name}' for {key}{hint}")
        if method == "grid":
            raise UltraError(
                f"{where}: {key} is a range, which a grid cannot enumerate; give a list of values, "
                f"or sample the range with --random N or --bayes N"
            )
        return _range(key, raw, where)
    kind = "nothing" if raw is None else type(raw).__name__
    raise UltraError(f"{where}: the values of {key} must be a list or a range, not {kind} ({raw!r}); {example}")


def _range(key: str, raw: dict[str, Any], where: str) -> Range:
    low, high, log = raw.get("low"), raw.get("high"), raw.get("log", False)
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (low, high))
    if not numbers:
        raise UltraError(f"{where}: the range of {key} needs numbers 'low' and 'high', got low={low!r}, high={high!r}")
    if not low < high:
        raise UltraError(f"{where}: the range of {key} needs low < high, got low={low}, high={high}")
    if not isinstance(log, bool):
        raise UltraError(f"{where}: 'log' of {key} must be true or false, got {log!r}")
    if log and low <= 0:
        raise UltraError(f"{where}: a log range of {key} needs low > 0, got {low}")
    return Range(low, high, log)


def _positive_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UltraError(f"{where} must be a positive whole number of trials, got {value!r}")
    return value


def build_spec(args: Any) -> SweepSpec:
    """The sweep of ``ultra sweep FILE`` with its options; every error names the option or file:line."""
    file = Path(args.pipeline)
    block = read_sweep_file(file)
    given: dict[str, Any] = {}
    lines: dict[str, str] = {}
    base = file.parent
    if block is not None:
        for key, value in block.items():
            given[str(key)] = value
            line = getattr(value, "line", None) or getattr(key, "line", None) or block.line
            lines[str(key)] = f"{file}:{line}"
        pipeline = base / str(given["pipeline"])
        if given.get("param") is not None:
            given["param"] = base / str(given["param"])
    else:
        pipeline = file
    grid: list[tuple[str, Any, str]] = []
    if isinstance(given.get("grid"), dict):
        for key, value in given["grid"].items():
            line = getattr(key, "line", None) or given["grid"].line
            grid.append((str(key), value, f"{file}:{line}"))
    elif "grid" in given:
        raise UltraError(f"{lines['grid']}: 'grid' maps each key to its values, e.g. retriever.top_k: [1, 3, 5]")
    for text in args.grid or []:
        key, value = parse_grid_option(text)
        grid = [entry for entry in grid if entry[0] != key] + [(key, value, f"--grid {key}")]
    options = {"random": args.random, "bayes": args.bayes, "seed": args.seed, "metric": args.metric}
    options |= {"minimize": args.minimize, "output_dir": args.output_dir, "param": args.param}
    options["max_trials"] = getattr(args, "max_trials", None)
    if options["random"] is not None or options["bayes"] is not None:
        given.pop("random", None), given.pop("bayes", None)
    where = {name: lines.get(name, f"--{name.replace('_', '-')}") for name in SWEEP_KEYS}
    for name, value in options.items():
        if value is not None:
            given[name] = Path(value) if name == "param" else value
            where[name] = f"--{name.replace('_', '-')}"
    return _checked(given, where, grid, pipeline, str(file) if block is not None else "")


def _checked(given: dict[str, Any], where: dict[str, str], grid: list, pipeline: Path, source: str) -> SweepSpec:
    if given.get("random") is not None and given.get("bayes") is not None:
        raise UltraError(f"{where['random']} and {where['bayes']}: choose one search, random or Bayesian")
    method = "random" if given.get("random") is not None else "bayes" if given.get("bayes") is not None else "grid"
    trials = _positive_int(given[method], where[method]) if method != "grid" else None
    if not grid:
        raise UltraError(
            "the sweep has no keys (an empty grid): give --grid KEY=VALUES, e.g. --grid 'retriever.top_k=[1, 3, 5]'"
            + (f", or a 'grid:' mapping in {source}" if source else "")
        )
    metric = given.get("metric")
    if metric is not None and (not isinstance(metric, str) or "." not in metric):
        raise UltraError(
            f"{where['metric']}: the metric is variable.key, e.g. eval_res.ndcg@10 or answer_scores.avg_f1; "
            f"got {metric!r}"
        )
    if method == "bayes" and metric is None:
        raise UltraError(
            f"{where['bayes']}: Bayesian search optimises a metric; name it with --metric, e.g. eval_res.map"
        )
    seed = given.get("seed", DEFAULTS["seed"])
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UltraError(f"{where['seed']}: the seed must be a whole number >= 0, got {seed!r}")
    minimize = given.get("minimize", DEFAULTS["minimize"])
    if minimize is not None and not isinstance(minimize, bool):
        raise UltraError(f"{where['minimize']}: minimize is true or false, got {minimize!r}")
    spaces = []
    for key, value, at in grid:
        if len(key.split(".")) < 2 or not all(key.split(".")):
            raise UltraError(f"{at}: '{key}' is not server.setting (or server.setting.subkey), e.g. retriever.top_k")
        spaces.append(Space(key, check_values(key, value, at, method), at))
    max_trials = given.get("max_trials", DEFAULTS["max_trials"])
    _positive_int(max_trials, f"{where['max_trials']}: max_trials")
    _check_size(method, trials, spaces, max_trials, where)
    output = given.get("output_dir") or DEFAULTS["output_dir"].format(stem=pipeline.stem)
    return SweepSpec(
        pipeline=pipeline,
        param=given.get("param"),
        spaces=spaces,
        method=method,
        trials=trials,
        seed=seed,
        metric=metric,
        minimize=minimize,
        output_dir=Path(str(output)),
        max_trials=max_trials,
        source=source,
    )


def _check_size(method: str, trials: int | None, spaces: list[Space], max_trials: int, where: dict[str, str]) -> None:
    """Refuse a sweep of more than ``max_trials`` trials before anything is enumerated, with its count."""
    raise_it = "raise it with --max-trials N (or 'max_trials: N' in a sweep file) if you mean it"
    if trials is not None:
        if trials > max_trials:
            raise UltraError(
                f"{where[method]}: {trials:,} trials is more than max_trials ({max_trials:,}); ask for fewer, or "
                + raise_it
            )
        return
    size = grid_size(spaces)
    if size > max_trials:
        lengths = " x ".join(f"{len(space.values):,} ({space.key})" for space in spaces)  # type: ignore[arg-type]
        raise UltraError(
            f"the grid holds {size:,} trials ({lengths}), more than max_trials ({max_trials:,}); "
            f"give fewer values, sample the space with --random N, or {raise_it}"
        )


def check_keys(spec: SweepSpec, settings: dict[str, dict[str, Any]], param_file: Path) -> None:
    """Every swept key names a setting of the parameter file (a subkey: a key of that mapping)."""
    for space in spec.spaces:
        node: Any = settings
        trail: list[str] = []
        for part in space.path:
            if not isinstance(node, dict):
                raise UltraError(
                    f"{space.where}: {'.'.join(trail)} is a {type(node).__name__}, not a mapping, "
                    f"so '{space.key}' cannot be set"
                )
            if part not in node:
                what = "server" if not trail else "setting" if len(trail) == 1 else "key"
                inside = f" of {'.'.join(trail)}" if trail else " of the pipeline"
                raise UltraError(
                    f"{space.where}: unknown {what} '{part}'{inside} in '{space.key}' (settings from {param_file})"
                    + did_you_mean(part, [str(k) for k in node])
                )
            trail.append(part)
            node = node[part]
        if isinstance(node, dict) and not isinstance(space.values, Range):
            bad = [v for v in space.values if not isinstance(v, dict)]
            if bad:
                raise UltraError(f"{space.where}: {space.key} is a mapping; {bad[0]!r} cannot replace it")


def check_swept_limits(spec: SweepSpec, settings: dict[str, dict[str, Any]], servers: dict[str, Any]) -> None:
    """Every swept value (a Range: both ends) of a capped limit (``judge.judge_llm.max_workers``, or a whole
    ``judge.judge_llm``) within the server's caps, checked before the first trial as ``ultra run`` checks a parameter
    file (``ultra_client.pipeline.setting_checks.check_section_limits``): UltraError naming the sweep's key."""
    from ultra_client.pipeline.setting_checks import capped_settings_of, check_section_limits

    for space in spec.spaces:
        server = servers.get(space.path[0])  # (a key is server.setting at least: build_spec)
        if server is None or space.path[1] not in capped_settings_of(server.location.package_dir)[0]:
            continue  # a key no cap bounds: the rest of its section was checked with the parameter file
        values = [space.values.low, space.values.high] if isinstance(space.values, Range) else space.values
        for value in values:
            trial = copy.deepcopy(settings.get(space.path[0]) or {})
            with_value({space.path[0]: trial}, space.key, value)
            try:
                check_section_limits(space.path[0], trial, server.location.package_dir, None)
            except UltraError as exc:
                raise UltraError(f"{space.where}: {exc}") from None


def with_direction(spec: SweepSpec, directions: dict[str, bool]) -> None:
    """Rank in the metric's declared direction (``ultra_client.gates.direction``: ``{metric: higher_is_better}`` of
    the pipeline's servers) unless ``--minimize`` / ``--maximize`` or the sweep file chose one."""
    from ultra_client.gates.direction import higher_is_better

    if spec.minimize is not None:
        return
    spec.minimize = spec.metric is not None and not higher_is_better(spec.metric, directions)
    if spec.minimize:
        spec.notes.append(
            f"ranked lowest first: {spec.metric} is lower-is-better (its server's registry); --maximize ranks highest"
        )


def check_metric_variable(spec: SweepSpec, produced: list[str]) -> None:
    """The metric's variable is one that a step of the pipeline produces."""
    if spec.metric is None:
        return
    variable = spec.metric.split(".")[0]
    if variable not in produced:
        raise UltraError(
            f"--metric {spec.metric}: the pipeline {spec.pipeline} produces no variable '{variable}'"
            + did_you_mean(variable, produced)
        )


def with_value(settings: dict[str, dict[str, Any]], key: str, value: Any) -> None:
    """Set ``server.setting[.subkey...]`` in ``settings`` (already a private copy)."""
    parts = key.split(".")
    node = settings
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
