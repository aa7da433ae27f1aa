"""The saved index: one folder per backend holding the index, the passages and a ``meta.json``.

``meta.json`` records the corpus fingerprint and the settings the index was built with. An index
whose corpus or settings differ is stale and is rebuilt; a matching one is reused as is. Loaded
indexes are kept in memory per folder, so a server answers many searches from one load.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers.retriever import bm25, dense
from servers.retriever.corpus import fingerprint, load_corpus
from ultra_base.errors import InputError
from ultra_kit.files import atomic_write_json, atomic_write_jsonl
from ultra_kit.limits.json_files import load_json_file
from ultra_kit.paths.output_root import check_inside_output
from ultra_kit.progress import ProgressCallback, no_progress
from ultra_kit.readers import read_jsonl

BACKENDS = ("bm25", "dense")
META = "meta.json"
PASSAGES = "passages.jsonl"
EMBEDDINGS = "embeddings.npy"
FORMAT_VERSION = 1
FORMAT_ID = "ultra-eval/retriever-index"  # in every meta.json we write: marks a folder as ours to replace


@dataclass
class LoadedIndex:
    """An index in memory: the passages, the backend's model or matrix, and its meta."""

    folder: Path
    meta: dict[str, Any]
    doc_ids: list[str]
    texts: list[str]
    model: Any  # bm25s.BM25 or a numpy matrix


_loaded: dict[str, tuple[float, LoadedIndex]] = {}
_lock = threading.Lock()


def index_folder(*, index_path: str, backend: str) -> Path:
    """Where the ``backend`` index of ``index_path`` lives: ``<index_path>/<backend>``.

    Indexes are results: ``index_path`` must lie under the output root (``output/``) once ``..`` and
    symlinks are resolved, as a ``save_path`` must (``ULTRA_ALLOW_OUTSIDE_OUTPUT=1`` lifts it).
    """
    if backend not in BACKENDS:
        raise InputError(f"backend must be one of {list(BACKENDS)}, got {backend!r}")
    if not str(index_path).strip():
        raise InputError("index_path is empty; give a folder for the saved index, e.g. output/index/rag")
    folder = check_inside_output(index_path, setting="index_path") / backend
    check_inside_output(folder, setting="index_path")  # <index_path>/<backend> may be a link leading out
    return folder


def wanted_meta(*, backend: str, corpus_path: str, options: dict[str, Any]) -> dict[str, Any]:
    """The meta an index of ``corpus_path`` with these options must have to be reused."""
    settings = options if backend == "bm25" else dense.identity(options)
    return {
        "format": FORMAT_ID,
        "format_version": FORMAT_VERSION,
        "backend": backend,
        "corpus_sha256": fingerprint(corpus_path),
        "settings": settings,
    }


def read_meta(folder: Path) -> dict[str, Any] | None:
    """The saved meta of an index folder, or None if there is no complete index."""
    try:
        meta = load_json_file(folder / META, kind="index meta")  # 1 MiB, 100 levels: a real one is a few hundred bytes
    except InputError:  # missing, too large, too deep or malformed: no complete index
        return None
    return meta if isinstance(meta, dict) else None


def is_our_index(folder: Path) -> bool:
    """True if ``folder`` (not a link) holds a meta.json this module wrote (format id, or the first
    format's keys, which carried no id yet)."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    meta = read_meta(folder)
    if meta is None:
        return False
    if meta.get("format") == FORMAT_ID:
        return True
    legacy = {"format_version", "backend", "corpus_sha256", "settings"}
    return "format" not in meta and meta.get("format_version") == 1 and legacy <= meta.keys()


def check_replaceable(folder: Path) -> None:
    """Refuse (InputError naming it) to replace a folder that is not an index we built; an empty one is fine."""
    if not os.path.lexists(folder):
        return
    if is_our_index(folder):
        return
    if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
        return
    kind = "a link" if folder.is_symlink() else "a folder" if folder.is_dir() else "a file"
    raise InputError(
        f"{folder} is {kind} without an index meta.json ({META} with format {FORMAT_ID!r}), so it is not an "
        f"index retriever_index built; it is left untouched: move it away or choose another index_path",
        path=str(folder),
    )


def stale_reason(saved: dict[str, Any] | None, wanted: dict[str, Any]) -> str | None:
    """Why a saved index cannot be reused ('' never); None when it matches."""
    if saved is None:
        return "no index yet"
    for key in ("format", "format_version", "backend", "corpus_sha256", "settings"):
        if saved.get(key) != wanted[key]:
            return {"corpus_sha256": "the corpus changed"}.get(key, f"{key} changed")
    return None


async def ensure_index(
    *,
    backend: str,
    corpus_path: str,
    index_path: str,
    options: dict[str, Any],
    overwrite: bool,
    progress: ProgressCallback = no_progress,
) -> dict[str, Any]:
    """Build the index unless a matching one is saved; returns its meta plus ``status`` and ``reason``."""
    import anyio.to_thread

    folder = index_folder(index_path=index_path, backend=backend)
    wanted = wanted_meta(backend=backend, corpus_path=corpus_path, options=options)
    reason = "overwrite: true" if overwrite else stale_reason(read_meta(folder), wanted)
    if reason is None:
        return {
            **read_meta(folder),
            "status": "reused",
            "reason": "corpus and settings unchanged",
            "folder": str(folder),
        }
    check_replaceable(folder)  # before any work: never delete what we did not build
    started = time.perf_counter()
    passages = await anyio.to_thread.run_sync(load_corpus, corpus_path)
    folder.parent.mkdir(parents=True, exist_ok=True)
    # A fresh folder of our own (never a fixed name that someone else's folder could hold).
    building = Path(tempfile.mkdtemp(prefix=f".{folder.name}.building.", dir=folder.parent))
    try:
        if backend == "bm25":
            await anyio.to_thread.run_sync(lambda: bm25.build(passages, options, building, progress))
        else:
            import numpy as np

            matrix = await dense.embed([p.text for p in passages], options, progress)
            np.save(building / EMBEDDINGS, matrix)
            wanted["dimensions"] = int(matrix.shape[1])
        atomic_write_jsonl(building / PASSAGES, ({"id": p.id, "text": p.text} for p in passages))
        meta = {**wanted, "passages": len(passages), "corpus_path": str(corpus_path), "built": time.time()}
        meta["build_seconds"] = round(time.perf_counter() - started, 3)
        atomic_write_json(building / META, meta)
        _swap_in(building, folder)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)  # ours: created above by mkdtemp
        raise
    with _lock:
        _loaded.pop(str(folder), None)
    return {**meta, "status": "built", "reason": reason, "folder": str(folder)}


def _swap_in(building: Path, folder: Path) -> None:
    """Put the finished ``building`` folder at ``folder``; the old index (checked ours again) is removed."""
    check_replaceable(folder)  # again: the folder may have changed while the index was built
    if folder.is_dir() and not is_our_index(folder):
        folder.rmdir()  # empty: check_replaceable allowed it; rmdir fails if a file appeared since
    elif os.path.lexists(folder):
        old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.parent))
        os.replace(folder, old / folder.name)  # the old index out of the way in one rename ...
        building.rename(folder)  # ... the new one in: a reader sees one or the other
        shutil.rmtree(old, ignore_errors=True)  # holds only the index checked as ours
        return
    building.rename(folder)


def open_index(*, index_path: str, backend: str) -> LoadedIndex:
    """The saved index of ``backend`` under ``index_path``, loaded once per process (reloaded if rebuilt)."""
    folder = index_folder(index_path=index_path, backend=backend)
    meta_file = folder / META
    if not meta_file.is_file():
        raise InputError(
            f"no {backend} index in {folder}; build it first with retriever_index (same index_path and backend)"
        )
    stamp = meta_file.stat().st_mtime
    key = str(folder.resolve())
    with _lock:
        cached = _loaded.get(key)
        if cached and cached[0] == stamp:
            return cached[1]
        meta = load_json_file(meta_file, kind="index meta")
        rows = read_jsonl(folder / PASSAGES)
        if backend == "bm25":
            model = bm25.load(folder)
        else:
            import numpy as np

            model = np.load(folder / EMBEDDINGS, mmap_mode="r")
        loaded = LoadedIndex(folder, meta, [r["id"] for r in rows], [r["text"] for r in rows], model)
        _loaded[key] = (stamp, loaded)
    return loaded
