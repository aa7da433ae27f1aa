"""Build a report with parameter.yaml's settings and read back what it wrote."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

from servers.report.build import ReportFiles, write_report
from ultra_kit.settings import defaults


def build(paths: list[Path | str], out: Path, labels: dict[str, str] | None = None, **overrides: Any) -> ReportFiles:
    """``write_report`` into ``out`` with the report server's defaults, except ``overrides``."""
    settings = {k: v for k, v in defaults("report").items() if k not in ("result_paths", "labels", "groups")}
    settings.update(overrides)
    return write_report([str(p) for p in paths], labels=labels or {}, out_dir=out, **settings)


def summary_rows(files: ReportFiles) -> dict[tuple[str, str], dict[str, str]]:
    """summary.csv as {(run, metric): row}."""
    with files.summary_csv_path.open(newline="", encoding="utf-8") as handle:
        return {(row["run"], row["metric"]): row for row in csv.DictReader(handle)}


def table_rows(html: str, table_id: str) -> list[list[str]]:
    """The body rows of the table ``table_id`` as cell texts (the page's own markup, no parser needed)."""
    body = re.search(rf'<table id="{table_id}"[^>]*>.*?<tbody>(.*?)</tbody>', html, re.DOTALL)
    assert body, f"no table {table_id}"
    rows = re.findall(r"<tr>(.*?)</tr>", body.group(1), re.DOTALL)
    return [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.DOTALL) for row in rows]
