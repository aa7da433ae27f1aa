"""The risk table (``synth.risk_table``'s JSON) on the page: its rows as written, and per row up to
``EXAMPLES`` failing questions with the answer and the judge's verdict and reason.

A failing question is one whose judged item (``guardrail_judge`` for safe rows, ``faithfulness`` for
grounded rows) is ok but not safe / not grounded, or failed (error, parse_error). The examples come from
the run folder the table was written into (``<run>/files/risk_table_*.json``): its judge files, its
``memory.json`` (questions and answers) and its query set (``queries.jsonl``: kind and category per id).
A table read on its own, outside a run folder, has no examples (the page says so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servers.report.model import Found
from ultra_base.errors import InputError, readable_path
from ultra_kit.limits.json_files import MAX_RECORD_BYTES, load_json_file, load_jsonl_file

EXAMPLES = 3  # failing examples shown per row
FAILED = ("error", "parse_error")
JUDGE_OF = {"safe": "guardrail_judge", "grounded": "faithfulness_judge"}  # the rate's judge, by measure
RATE_COLUMNS = ("rate", "toxicity_rate", "bias")  # shown with their interval when they have one


def read_risk_table(document: dict[str, Any], path: str) -> Found:
    """A ``risk_table`` file: its rows, and failing examples from the run folder around it."""
    rows = document.get("rows")
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "kind" in r and "n" in r for r in rows):
        raise InputError("risk_table: 'rows' must be a list of objects with kind, category, n ...", path=path)
    examples, note = failing_examples(rows, Path(path), document.get("settings") or {})
    found = Found("risk_table")
    found.risk = {"path": path, "rows": rows, "examples": examples, "note": note}
    return found


def failing_examples(
    rows: list[dict[str, Any]], path: Path, settings: dict[str, Any]
) -> tuple[list[list[dict[str, str]]], str]:
    """Per row, up to ``EXAMPLES`` failing questions; and a note when they cannot be found."""
    folder = path.parent
    memory = folder.parent / "memory.json"
    if folder.name != "files" or not memory.is_file():
        return [[] for _ in rows], "this risk table is not inside a run folder: no failing examples to show"
    groups = _groups(folder, settings)
    texts = _texts(_read(memory))
    items = _judged_items(folder)
    examples = []
    for row in rows:
        judge = JUDGE_OF.get(str(row.get("measure")), "")
        chosen = []
        for qid in groups.get((str(row.get("kind")), str(row.get("category"))), []):
            item = items.get(judge, {}).get(qid)
            if item is None or not _fails(item, str(row.get("measure"))):
                continue
            said, reason = verdict(item)
            text = texts.get(qid, {})
            chosen.append({"id": qid, "question": text.get("question", ""), "answer": text.get("answer", ""),
                           "verdict": said, "reason": reason})  # fmt: skip
            if len(chosen) == EXAMPLES:
                break
        examples.append(chosen)
    note = "" if groups else "the run folder holds no queries.jsonl: no failing examples to show"
    return examples, note


def _fails(item: dict[str, Any], measure: str) -> bool:
    status = item.get("status")
    if status in FAILED:
        return True
    if status != "ok":
        return False  # nothing to judge (e.g. no_statements): neither a hit nor a failure
    return not item.get("safe") if measure == "safe" else item.get("faithfulness") != 1.0


def verdict(item: dict[str, Any], metrics: tuple[str, ...] = ()) -> tuple[str, str]:
    """What a judge said of one item and why, in a line each (the page's rationale per item)."""
    if item.get("status") != "ok":
        return str(item.get("status")), str(item.get("error") or "")
    if "label" in item:
        return str(item["label"]), str(item.get("rationale") or "")
    if "faithfulness" in item:
        verdicts = item.get("verdicts") or []
        unsupported = [s for s, v in zip(item.get("statements") or [], verdicts, strict=False) if not v]
        reason = "unsupported: " + "; ".join(map(str, unsupported)) if unsupported else ""
        return f"faithfulness {float(item['faithfulness']):.2f}", reason
    said = ", ".join(f"{name} {item[name]:.4g}" for name in metrics if isinstance(item.get(name), int | float))
    return said, str(item.get("rationale") or item.get("reason") or "")


def _groups(folder: Path, settings: dict[str, Any]) -> dict[tuple[str, str], list[str]]:
    """(kind, category) -> ids, from the query set copied into the run folder or the table's dataset_dir."""
    candidates = [folder / "queries.jsonl"]
    if settings.get("dataset_dir"):
        candidates.append(Path(str(settings["dataset_dir"])) / "queries.jsonl")
    source = next((p for p in candidates if p.is_file()), None)
    groups: dict[tuple[str, str], list[str]] = {}
    try:
        rows = load_jsonl_file(readable_path(source, setting="result_paths"), kind="queries") if source else []
    except InputError:  # outside the folders the report may read, too large, too deep or malformed: no groups
        return groups
    for row in rows:
        if isinstance(row, dict):
            groups.setdefault((str(row.get("kind")), str(row.get("category"))), []).append(str(row.get("id")))
    return groups


def _judged_items(folder: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """judge tool -> id -> item, from the answer judge files of the run folder."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for tool in JUDGE_OF.values():
        for file in sorted(folder.glob(f"{tool}_*.json")):
            document = _read(file)
            for item in document.get("items", []) if isinstance(document, dict) else []:
                if isinstance(item, dict) and "id" in item:
                    found.setdefault(tool, {})[str(item["id"])] = item
    return found


def _texts(memory: Any) -> dict[str, dict[str, str]]:
    if not isinstance(memory, dict) or not isinstance(memory.get("id_ls"), list):
        return {}
    questions, answers = memory.get("q_ls") or [], memory.get("pred_ls") or []
    return {
        str(qid): {
            "question": str(questions[i]) if i < len(questions) else "",
            "answer": str(answers[i]) if i < len(answers) and answers[i] is not None else "",  # None: failed
        }
        for i, qid in enumerate(memory["id_ls"])
    }


def _read(path: Path) -> Any:
    try:
        return load_json_file(readable_path(path, setting="result_paths"), kind="result", max_bytes=MAX_RECORD_BYTES)
    except InputError:  # outside the read roots, too large, too deep or malformed
        return None


def toxicity_interval(row: dict[str, Any]) -> tuple[float | None, float | None]:
    """The 95% Wilson interval of the toxicity rate (toxic answers of ``toxicity_judged``)."""
    from servers.report.charts import wilson

    rate, judged = row.get("toxicity_rate"), row.get("toxicity_judged")
    if rate is None or not judged:
        return None, None
    return wilson(round(rate * judged), int(judged))


def _interval(low: Any, high: Any) -> str:
    from servers.report.cells import number

    return "" if low is None or high is None else f"[{number(low)}, {number(high)}]"


def view(risk: dict[str, Any], label: str, image: str | None) -> dict[str, Any]:
    """The risk table as the page shows it: every cell as text, rates with their interval."""
    from servers.report.cells import number

    rows = []
    for row, examples in zip(risk["rows"], risk["examples"], strict=True):
        rows.append(
            {
                "kind": str(row.get("kind")),
                "category": str(row.get("category")),
                "n": number(row.get("n")),
                "measure": str(row.get("measure")),
                "rate": number(row.get("rate")),
                "ci": _interval(row.get("ci_low"), row.get("ci_high")),
                "judged": number(row.get("judged")),
                "toxicity_rate": number(row.get("toxicity_rate")),
                "toxicity_ci": _interval(*toxicity_interval(row)),
                "bias": number(row.get("bias")),
                "failures": number(row.get("failures")),
                "examples": examples,
            }
        )
    return {"label": label, "path": risk["path"], "rows": rows, "note": risk["note"], "image": image}
