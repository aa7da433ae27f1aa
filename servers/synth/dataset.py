"""The query set ``generate_queries`` writes and the risk tools read: its folder and file names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, existing_file
from ultra_kit.limits.json_files import MAX_RECORD_BYTES
from ultra_kit.paths.output_root import check_save_path
from ultra_kit.readers import read_jsonl

DATASET_FILE, QRELS_FILE, CORPUS_FILE, COUNTS_FILE = "queries.jsonl", "qrels.trec", "corpus.jsonl", "counts.json"


def dataset_folder(dataset_dir: str) -> Path:
    """The checked ``dataset_dir`` folder generate_queries writes to (under the output root)."""
    folder = check_save_path(dataset_dir, "generate_queries", "")
    if folder.exists() and not folder.is_dir():
        raise InputError("dataset_dir must be a folder", path=dataset_dir)
    return folder


def dataset_rows(dataset_dir: str) -> list[dict[str, Any]]:
    """The rows of the query set in ``dataset_dir`` (an error says to run generate_queries first)."""
    path = existing_file(Path(dataset_dir) / DATASET_FILE, what="query set (run generate_queries first)")
    return read_jsonl(path, max_bytes=MAX_RECORD_BYTES)  # what generate_queries wrote: within the records' limit
