"""Docid fingerprints: equal strings always agree, distinct ones (in practice) never do."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ultra_trec.reading.fingerprint import mix64, string_fingerprints


def tricky_strings(rng: np.random.Generator, count: int) -> list[bytes]:
    """Lengths 0-40 sharing prefixes, suffixes and middles, as docids of one collection do."""
    out = set()
    while len(out) < count:
        length = int(rng.integers(0, 41))
        base = bytearray(b"D" + b"0" * max(length - 1, 0))[:length]
        for _ in range(int(rng.integers(0, 3))):  # differ from the shared pattern in a few bytes only
            if length:
                base[int(rng.integers(0, length))] = int(rng.integers(33, 127))  # printable, as docids are
        out.add(bytes(base))
    return sorted(out)


def test_distinct_strings_get_distinct_fingerprints() -> None:
    rng = np.random.default_rng(11)
    strings = tricky_strings(rng, 60_000)
    strings += [f"D{i}".encode() for i in range(60_000)] + [f"{i:024d}".encode() for i in range(60_000)]
    strings = sorted(set(strings))
    prints = string_fingerprints(pa.array(strings, pa.binary()))
    # beyond 7 bytes, by design only the length and the first, middle and last 8 bytes count (colliding_pair)
    read = {s if len(s) <= 7 else (len(s), s[:8], s[len(s) // 2 - 4 : len(s) // 2 + 4], s[-8:]) for s in strings}
    assert np.unique(prints).size == len(read)
    # the low bits (the ranking's bitmap) are spread too: about as many distinct low 20 bits as for random keys
    distinct = np.unique(prints)
    low = np.unique(distinct & np.uint64((1 << 20) - 1)).size
    expected = (1 << 20) * (1 - np.exp(-distinct.size / (1 << 20)))
    assert low > 0.99 * expected


def test_equal_strings_agree_across_chunks_offsets_and_types() -> None:
    rng = np.random.default_rng(5)
    strings = tricky_strings(rng, 3_000)
    whole = string_fingerprints(pa.array(strings, pa.binary()))
    chunked = pa.chunked_array([strings[:1000], strings[1000:1001], strings[1001:]], type=pa.binary())
    assert np.array_equal(string_fingerprints(chunked), whole)
    sliced = pa.array(strings, pa.binary()).slice(700, 900)  # a non-zero offset into the buffers
    assert np.array_equal(string_fingerprints(sliced), whole[700:1600])
    assert np.array_equal(string_fingerprints(pa.array(strings, pa.large_binary())), whole)
    assert string_fingerprints(pa.array([], pa.binary())).size == 0


def test_mix64_is_a_bijection_on_a_sample() -> None:
    values = np.arange(200_000, dtype=np.uint64)
    assert np.unique(mix64(values)).size == values.size
    assert mix64(values[:1])[0] == mix64(np.zeros(1, dtype=np.uint64))[0]


def colliding_pair(prefix: str = "doc") -> tuple[str, str]:
    """Two 30-byte docids that differ only in byte 9, which the fingerprint does not read."""
    first = f"{prefix}-aaaaaXbbbbbbbbbbbbbbbbbbbbbb"[:30].ljust(30, "z")
    second = first[:9] + "Y" + first[10:]
    assert first != second and len(first) == 30
    return first, second


def test_colliding_docids_are_told_apart_by_every_user() -> None:
    """A fingerprint collision never merges two docids: duplicates, judgments and ties use the bytes."""
    import pytrec_eval

    from ultra_trec.engine import evaluate

    a, b = colliding_pair()
    c, d = colliding_pair("zzz")
    assert string_fingerprints(pa.array([a.encode()]))[0] == string_fingerprints(pa.array([b.encode()]))[0]
    qrels = {"q1": {a: 0, b: 2, c: 1, "x": 1}, "q2": {b: 1, d: 3}}
    run = {"q1": {b: 3.0, a: 2.0, d: 1.0, c: 1.0, "x": 0.5}, "q2": {a: 2.0, c: 2.0, d: 2.0, b: 1.0}}
    names = ["map", "ndcg@3", "P@2", "recip_rank", "bpref", "num_rel_ret"]
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.3", "P.2", "recip_rank", "bpref", "num_rel_ret"})
    expected = theirs.evaluate(run)
    ours = evaluate(qrels, run, names).per_query
    for qid, values in expected.items():
        for name, key in (("map", "map"), ("ndcg_cut_3", "ndcg@3"), ("P_2", "P@2"), ("recip_rank", "mrr")):
            assert ours[qid][key] == pytest.approx(values[name], abs=1e-12), (qid, key)
        assert ours[qid]["bpref"] == pytest.approx(values["bpref"], abs=1e-12)
        assert ours[qid]["num_rel_ret"] == values["num_rel_ret"]


def test_short_strings_never_collide() -> None:
    """Every string of up to 2 bytes over a wide alphabet, and every length 0-7 of one pattern."""
    alphabet = [bytes([b]) for b in range(256)]
    strings = [b""] + alphabet + [a + b for a in alphabet for b in alphabet[::3]]
    strings += [bytes([200 - i for i in range(n)]) for n in range(8)] + [b"\x00" * n for n in range(8)]
    strings = sorted(set(strings))
    assert np.unique(string_fingerprints(pa.array(strings, pa.binary()))).size == len(strings)
