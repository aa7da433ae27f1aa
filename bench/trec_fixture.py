"""Deterministic TREC fixtures for ``bench/trec_bench.py``, with the variations the targets must survive.

A fixture is a qrels file and two runs (``run_a``, ``run_b``) of ``depth`` documents per query:

* ``docid_chars``: length of every docid (6-24; ``D14102383_3``-like ids padded with digits);
* ``decimals``: digits after the point in the scores (2-8); fewer decimals, more ties;
* ``ties``: extra tie density: the share of scores snapped to a coarse grid (0 = none);
* ``order``: ``ranked`` (each query's lines in rank order, queries in sequence, as systems write
  them) or ``shuffled`` (lines in a random order: queries interleaved, ranks mixed).

Each query has 10-50 graded judgments (grades 0-3) and most judged documents are retrieved.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Variant:
    """One fixture shape; ``name`` is its folder name."""

    queries: int = 5_000
    depth: int = 1_000
    docid_chars: int = 8
    decimals: int = 2
    ties: float = 0.0
    order: str = "ranked"

    @property
    def name(self) -> str:
        return f"q{self.queries}-d{self.docid_chars}-s{self.decimals}-t{self.ties:g}-{self.order}"


CORPUS = 2_000_000


def generate(folder: Path, variant: Variant, seed: int = 2024) -> tuple[Path, Path, Path]:
    """Write qrels, run_a and run_b into ``folder`` (skipped when already there)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    qrels_path, run_a, run_b = folder / "qrels.txt", folder / "run_a.txt", folder / "run_b.txt"
    if all(p.exists() for p in (qrels_path, run_a, run_b)):
        return qrels_path, run_a, run_b
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    queries, depth = variant.queries, variant.depth
    qids = pa.array((np.arange(queries) * 7 + 100_001).astype(str))
    judged = rng.integers(10, 51, queries)
    q_of_judgment = np.repeat(np.arange(queries), judged)
    within = np.arange(judged.sum()) - np.repeat(np.cumsum(judged) - judged, judged)
    block = rng.integers(0, CORPUS // 2, queries)
    judged_doc = (block[q_of_judgment] + within * 13) % (CORPUS // 2)
    grade = rng.choice([0, 0, 1, 1, 2, 3], size=judged_doc.size)
    write_options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    names = _docnames(variant.docid_chars)
    pacsv.write_csv(
        pa.table({"q": qids.take(q_of_judgment), "i": np.zeros(judged_doc.size, np.int8), "d": names(judged_doc),
                  "r": grade}),
        qrels_path,
        write_options=write_options,
    )  # fmt: skip
    for path, run_seed, keep_rate in ((run_a, seed + 1, 0.8), (run_b, seed + 2, 0.7)):
        r = np.random.default_rng(run_seed)
        kept = r.random(judged_doc.size) < keep_rate
        q_kept, d_kept, g_kept = q_of_judgment[kept], judged_doc[kept], grade[kept]
        fill = depth - np.bincount(q_kept, minlength=queries)
        q_fill = np.repeat(np.arange(queries), fill)
        within_fill = np.arange(fill.sum()) - np.repeat(np.cumsum(fill) - fill, fill)
        d_fill = CORPUS // 2 + (r.integers(0, CORPUS // 2, queries)[q_fill] + within_fill) % (CORPUS // 2)
        query = np.concatenate([q_kept, q_fill])
        doc = np.concatenate([d_kept, d_fill])
        score = np.concatenate([r.normal(1.0 + 0.6 * g_kept, 1.0), r.normal(0.0, 1.0, q_fill.size)])
        if variant.ties:
            snap = r.random(score.size) < variant.ties
            score[snap] = np.round(score[snap] * 4) / 4  # a coarse grid: many equal scores
        score = np.round(score, variant.decimals)
        order = np.lexsort((r.random(query.size), -score, query))  # rank order; ties in a random order
        query, doc, score = query[order], doc[order], score[order]
        rank = np.tile(np.arange(1, depth + 1), queries)
        if variant.order == "shuffled":
            mix = r.permutation(query.size)
            query, doc, score, rank = query[mix], doc[mix], score[mix], rank[mix]
        table = pa.table({
            "q": qids.take(query), "z": pa.array(np.full(query.size, "Q0")), "d": names(doc), "k": rank,
            "s": pc.cast(pa.array(score), pa.string()), "t": pa.array(np.full(query.size, "bench")),
        })  # fmt: skip
        pacsv.write_csv(table, path, write_options=write_options)
    return qrels_path, run_a, run_b


def _docnames(chars: int):
    """Docids of exactly ``chars`` characters: ``D`` + the id + ``_`` + a digit, zero-padded (``D14102383_3``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not 6 <= chars <= 24:
        raise SystemExit(f"docid length must be 6-24, got {chars}")

    def names(ids: np.ndarray) -> pa.Array:
        text = pc.cast(pa.array(ids // 10), pa.string())
        padded = pc.utf8_lpad(text, width=chars - 3, padding="0")
        suffix = pc.cast(pa.array(ids % 10), pa.string())
        return pc.binary_join_element_wise("D", padded, "_", suffix, "")

    return names
