"""The BM25 backend leaves no thread behind: ``ultra sweep --workers N`` forks its plot processes only from a
process without one (``ultra_client.sweep.processes.forked.can_fork``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_bm25_index_search_and_load_leave_no_thread_running(tmp_path: Path) -> None:
    """bm25s makes a (disabled) tqdm bar on each index and search, for which tqdm would start its monitor thread."""
    pytest.importorskip("bm25s")
    folder = repr(str(tmp_path))
    script = (
        "import threading\n"
        "from pathlib import Path\n"
        "from servers.retriever import bm25\n"
        "from servers.retriever.corpus import Passage\n"
        "passages = [Passage(id=str(n), text=t) for n, t in enumerate(['red apples grow', 'blue sea waves'])]\n"
        "options = {'k1': 1.2, 'b': 0.75, 'method': 'lucene', 'stopwords': 'en'}\n"
        f"model = bm25.build(passages, options, Path({folder}))\n"
        "hits = bm25.search(model, ['apples'], ['0', '1'], top_k=2, stopwords='en')\n"
        f"again = bm25.search(bm25.load(Path({folder})), ['sea'], ['0', '1'], top_k=2, stopwords='en')\n"
        "print(hits[0][0].doc_id, again[0][0].doc_id, threading.active_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1", "1"]  # the right passages, and the main thread alone
