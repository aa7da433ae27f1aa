"""Turn the paths a user gives (result files, ``ultra run`` folders, sweep folders) into labelled runs.

A run folder (``memory.json`` + ``files/``) is one run: its result files are joined on ids, and its
questions and answers (``q_ls``, ``pred_ls``, ``id_ls`` in ``memory.json``), ``parameters.yaml`` and
``timings.json`` come along. A file that holds several runs (``evaluate_trec_pvalue``, ``nuggetize``,
``trec_rag_table``) gives one run each. A label store of ``ultra annotate`` (``.sqlite``) gives the section on what
people and the judge disagree on (``ultra_kit.labels.agreement``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servers.report.kinds import KINDS, expected_shapes, kind_of
from servers.report.model import Found, Run, unique_ids
from ultra_base.errors import InputError, readable_path
from ultra_base.file_limits import read_limited_text
from ultra_kit.labels.agreement import disagreement_report
from ultra_kit.labels.store import is_label_store
from ultra_kit.limits.json_files import MAX_BYTES, MAX_RECORD_BYTES, load_json_file, load_jsonl_file, loads_limited


@dataclass
class Collected:
    """Everything the sources hold, ready to summarise and render."""

    runs: list[Run] = field(default_factory=list)
    significance: list[dict[str, Any]] = field(default_factory=list)
    scalars: dict[str, dict[str, float]] = field(default_factory=dict)
    sweeps: list[dict[str, Any]] = field(default_factory=list)
    risks: list[dict[str, Any]] = field(default_factory=list)  # risk tables: label, path, rows, examples, note
    judged: list[dict[str, Any]] = field(default_factory=list)  # ppi / compare_judged / fill_qrels: label, tool ...
    labels: list[dict[str, Any]] = field(default_factory=list)  # label stores: label, path, report (agreement)
    notes: list[str] = field(default_factory=list)


def collect(paths: Sequence[str], labels: Mapping[str, str]) -> Collected:
    """Read every path, and every path of ``labels`` ({display name: path}) not among them."""
    keys = {_key(path) for path in paths}
    paths = [*paths, *dict.fromkeys(path for path in labels.values() if _key(path) not in keys)]
    if not paths:
        raise InputError("no result file or run folder given: pass at least one path")
    by_path = {_key(path): name for name, path in labels.items()}
    collected = Collected()
    for path in paths:
        _add_source(collected, Path(path), by_path.get(_key(path)))
    if not (collected.runs or collected.scalars or collected.risks or collected.judged or collected.labels):
        raise InputError(f"none of {list(paths)} holds per-query values or results to report")
    _unique_labels(collected.runs)
    collected.notes += list(dict.fromkeys(note for run in collected.runs for note in run.notes))
    return collected


def _key(path: str | Path) -> str:
    return str(Path(path).expanduser().resolve())


def _add_source(collected: Collected, path: Path, label: str | None) -> None:
    readable_path(path, setting="result_paths")
    if not path.exists():
        raise InputError("no such file or folder; give a result file (.json) or a run folder", path=str(path))
    if path.is_dir():
        if (path / "sweep.json").is_file():
            path = path / "sweep.json"
        elif (path / "memory.json").is_file():
            collected.runs += read_run_folder(path, label, collected)
            return
        else:
            raise InputError(
                "this folder has neither memory.json (an `ultra run` folder) nor sweep.json (an `ultra sweep` "
                "folder); give a run folder or a result file",
                path=str(path),
            )
    if is_label_store(path):  # ultra annotate's labels.sqlite: what people and the judge disagree on
        collected.labels.append({"label": label or path.name, "path": str(path), "report": disagreement_report(path)})
        return
    if path.name == "memory.json":
        collected.runs += read_run_folder(path.parent, label, collected)
        return
    found = read_result_file(path)
    _take(collected, found, label, path)


def _take(collected: Collected, found: Found, label: str | None, path: Path) -> None:
    collected.significance += found.significance
    collected.notes += found.notes
    if found.scalars:
        collected.scalars[label or f"{found.kind}: {path.name}"] = found.scalars
    if found.sweep is not None:
        collected.sweeps.append({**found.sweep, "path": str(path)})
    if found.risk is not None:
        collected.risks.append({**found.risk, "label": label or path.name})
    if found.judged is not None:
        collected.judged.append({**found.judged, "label": label or path.name})
    for trial_label, folder in found.folders:
        folder_path = Path(folder)
        if not folder_path.is_absolute() and not folder_path.exists():
            folder_path = path.parent / "trials" / folder_path.name
        if not (folder_path / "memory.json").is_file():
            collected.notes.append(f"{trial_label}: its folder {folder} has no memory.json (skipped)")
            continue
        collected.runs += read_run_folder(folder_path, f"{label}: {trial_label}" if label else trial_label, collected)
    for run in found.runs:
        if label:
            run.label = label if len(found.runs) == 1 else f"{label}: {run.label}"
        collected.runs.append(run)


JSON_LINES_KINDS = ("target.ask",)  # the kinds whose result is JSON Lines (other .jsonl files accompany a result)


def read_result_file(path: Path) -> Found:
    """The runs of one result file, or an InputError naming the file and the shapes the report reads."""
    try:
        document = _document(path)
    except InputError as exc:  # missing, too large, too deep (each said with its limit), or not JSON
        if "invalid JSON" not in str(exc):
            raise
        raise InputError(f"not JSON ({_problem(exc)}); expected one of: {expected_shapes()}", path=str(path)) from None
    kind = kind_of(document)
    if kind is None:
        raise InputError(f"not a result file the report knows; expected one of: {expected_shapes()}", path=str(path))
    return kind.read(document, str(path))


def read_run_folder(folder: Path, label: str | None, collected: Collected) -> list[Run]:
    """The runs of an ``ultra run`` folder: its single-run result files joined on ids into one run, and
    one run per run of a multi-run file; each with the folder's texts, parameters and timings."""
    found: list[Found] = []
    skipped: list[str] = []
    files = folder / "files"  # the final variables' files, then those of earlier steps (files/<step>/)
    found_files = [*sorted(files.glob("*.json")), *sorted(files.glob("*.jsonl"))]
    for file in found_files + sorted(files.glob("*/*.json")) + sorted(files.glob("*/*.jsonl")):
        name = file.relative_to(files).as_posix()
        if file.suffix == ".jsonl" and not _lines_of_a_result(file):
            continue  # a tool's records beside its result (nuggetize's assignments ...): not a result of its own
        try:
            document = _document(file)
        except InputError as exc:  # too large, too deep, not JSON: the reason, with its limit
            skipped.append(f"{name} is not readable JSON ({_problem(exc)})")
            continue
        kind = kind_of(document)
        if kind is None or kind.name == "sweep":
            skipped.append(f"{name} is not a result file the report knows")
            continue
        found.append(kind.read(document, str(file)))
    collected.notes += [f"{folder.name}: {reason} (skipped)" for reason in skipped]
    superseded = {
        name for kind in KINDS.values() if any(f.kind == kind.name for f in found) for name in kind.supersedes
    }
    nuggets = {}  # what a left-out nuggetize file knew: each run's supported vital nuggets
    for item in found:
        if item.kind in superseded:
            collected.notes.append(f"{folder.name}: {item.kind} is left out; trec_rag_table joins its values")
            nuggets.update({run.label: run.nuggets for run in item.runs if run.nuggets})
    memory = _json(folder / "memory.json")
    texts = texts_from_memory(memory, folder / "memory.json")
    own = Run(label=label or folder.name)
    own.groups, own.group_by = groups_from_memory(memory, folder / "memory.json")
    others: list[Run] = []
    scalars = False
    for item in (f for f in found if f.kind not in superseded):
        collected.significance += item.significance
        collected.notes += item.notes
        if item.scalars:
            collected.scalars[f"{label or folder.name}: {item.kind}"] = item.scalars
            scalars = True
        if item.risk is not None:
            collected.risks.append({**item.risk, "label": label or folder.name})
            scalars = True
        if item.judged is not None:
            named = f"{label or folder.name}: {Path(item.judged['path']).name}"
            collected.judged.append({**item.judged, "label": named})
            scalars = True
        if len(item.runs) == 1 and not item.significance:
            own.merge(item.runs[0])
            continue
        for run in item.runs:
            for key in run.ids:  # a multi-run file's query ids name answers as <qid>/<run> (trec_rag_table)
                if f"{key}/{run.label}" in texts:
                    run.texts.setdefault(key, texts[f"{key}/{run.label}"])
            run.nuggets = run.nuggets or nuggets.get(run.label, {})
            run.label = f"{label}: {run.label}" if label else run.label
            others.append(run)
    runs = ([own] if own.columns else []) + others
    if not runs and not scalars:
        why = f"; skipped: {'; '.join(skipped)}" if skipped else ""
        raise InputError(
            f"this run folder has no result file with per-query values under files/{why}", path=str(folder)
        )
    timings = _json(folder / "timings.json") if (folder / "timings.json").is_file() else None
    parameters = folder / "parameters.yaml"
    for run in runs:
        for key, text in texts.items():
            run.texts.setdefault(key, text)
        run.timings = run.timings or timings
        if parameters.is_file():
            run.parameters.setdefault("parameters.yaml", _parameters_text(parameters))
    return runs


def groups_from_memory(memory: Any, path: Path) -> tuple[dict[str, str], str]:
    """({id: group}, the attribute) from a run's ``group_ls`` (benchmark.group_by) aligned with ``id_ls``."""
    groups = memory.get("group_ls") if isinstance(memory, dict) else None
    if not isinstance(groups, list):
        return {}, ""
    ids = memory.get("id_ls")
    if not isinstance(ids, list) or len(ids) != len(groups):
        raise InputError(f"group_ls has {len(groups)} values but id_ls is not a list of as many ids", path=str(path))
    info = memory.get("data_info")
    group_by = info.get("group_by", "") if isinstance(info, dict) else ""
    keys = unique_ids([str(key) for key in ids])
    return {key: "" if g is None else str(g) for key, g in zip(keys, groups, strict=True)}, str(group_by or "")


def texts_from_memory(memory: Any, path: Path) -> dict[str, dict[str, str]]:
    """{id: {"question", "answer"}} from a run's q_ls / pred_ls, joined on id_ls (or on positions, as
    ``evaluate`` numbers items without ids)."""
    if not isinstance(memory, dict):
        return {}
    questions, answers = memory.get("q_ls"), memory.get("pred_ls")
    lists = {k: v for k, v in (("q_ls", questions), ("pred_ls", answers)) if isinstance(v, list)}
    if not lists:
        return {}
    ids = memory.get("id_ls")
    size = len(next(iter(lists.values())))
    ids = [str(i) for i in ids] if isinstance(ids, list) else [str(i) for i in range(size)]
    return texts_by_id(ids, lists.get("q_ls"), lists.get("pred_ls"), where=str(path))


def given_texts(
    ids: Sequence[Any] | None, questions: Sequence[Any] | None, answers: Sequence[Any] | None
) -> dict[str, dict[str, str]] | None:
    """The ``report`` tool's q_ls / pred_ls by id (positions when id_ls is None); None when neither is given."""
    if questions is None and answers is None:
        return None
    size = len(questions if questions is not None else answers or [])
    return texts_by_id(ids if ids is not None else list(range(size)), questions, answers,
                       where="q_ls / pred_ls / id_ls")  # fmt: skip


def texts_by_id(
    ids: Sequence[Any], questions: Sequence[Any] | None, answers: Sequence[Any] | None, *, where: str
) -> dict[str, dict[str, str]]:
    """{id: {"question", "answer"}}; lists of other lengths than ``ids`` are refused (misaligned)."""
    for name, values in (("q_ls", questions), ("pred_ls", answers)):
        if values is not None and len(values) != len(ids):
            raise InputError(
                f"{name} has {len(values)} items but id_ls has {len(ids)}: questions and answers cannot be "
                "joined on ids; give one id per item",
                path=where,
            )
    return {
        key: {
            "question": "" if questions is None else str(questions[i] or ""),
            "answer": "" if answers is None else str(answers[i] or ""),
        }
        for i, key in enumerate(unique_ids([str(k) for k in ids]))
    }


def _problem(exc: InputError) -> str:
    """An InputError's message without the file it starts with (``line N: ...`` when it names a line)."""
    if exc.path is None:
        return str(exc)
    if exc.line is None:
        return str(exc).removeprefix(f"{exc.path}: ")
    return f"line {exc.line}: " + str(exc).removeprefix(f"{exc.path}:{exc.line}: ")


def _confined(path: Path) -> Path:
    """A file of a run folder or a result file, read only inside the read roots (a link in a folder may point out)."""
    return readable_path(path, setting="result_paths")


def _parameters_text(path: Path) -> str:
    """A run's ``parameters.yaml`` as text, within the size of the files people write."""
    return read_limited_text(_confined(path), "parameter")


def _document(path: Path) -> Any:
    """A JSON file's document; a JSON Lines file (``.jsonl``) as the list of its records. Within the size and depth
    limits of the records a run writes (``ultra_kit.limits.json_files``); InputError naming the file otherwise."""
    if path.suffix == ".jsonl":
        return load_jsonl_file(_confined(path), kind="result", max_bytes=MAX_RECORD_BYTES)
    return load_json_file(_confined(path), kind="result", max_bytes=MAX_RECORD_BYTES)


def _lines_of_a_result(path: Path) -> bool:
    """A JSON Lines file whose first record is one of a kind written as JSON Lines (``JSON_LINES_KINDS``)."""
    try:
        with _confined(path).open(encoding="utf-8") as handle:
            first = loads_limited(handle.readline(MAX_BYTES), path=str(path), line=1)
    except (OSError, UnicodeDecodeError, InputError):
        return False
    kind = kind_of([first])
    return kind is not None and kind.name in JSON_LINES_KINDS


def _json(path: Path) -> Any:
    return load_json_file(_confined(path), kind=path.name, max_bytes=MAX_RECORD_BYTES)


def _unique_labels(runs: list[Run]) -> None:
    seen: dict[str, int] = {}
    for run in runs:
        count = seen.get(run.label, 0)
        seen[run.label] = count + 1
        if count:
            run.label = f"{run.label} #{count + 1}"
