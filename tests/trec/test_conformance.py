"""Conformance with trec_eval 10.0: every value of its own outputs for the measures we support.

The reference outputs in tests/data/trec_eval were produced by trec_eval v10.0 (see the README
there for the command line of each). trec_eval prints 4 decimals, hence the 1e-4 tolerance.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from ultra_base.errors import InputError
from ultra_trec.engine import evaluate
from ultra_trec.measures import FAMILIES, Measure, parse_measure, parse_measures
from ultra_trec.reading.io import read_qrels, read_run

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
COUNTS = ("num_ret", "num_rel", "num_rel_ret")
# Lines of out.test.meas_params whose parameters are not cutoffs: a gain map, utility coefficients,
# a list of recall levels averaged into one value. Each is one measure with trec_eval's parameters.
WITH_OPTIONS = {"ndcg_1=3,2=9,4=4.5": "ndcg", "utility_2,-1,0,0": "utility", "11pt_avg_.25,.5,.75": "11pt_avg"}


def reference(name: str) -> dict[str, dict[str, str]]:
    """{query or "all": {trec_eval measure: printed value}} from a trec_eval output file."""
    table: dict[str, dict[str, str]] = defaultdict(dict)
    for line in (DATA / name).read_text().splitlines():
        measure, query, value = line.split()
        table[query][measure] = value
    return table


def printed_names(table: dict[str, dict[str, str]]) -> set[str]:
    return set().union(*(row.keys() for row in table.values()))


def supported_in(table: dict[str, dict[str, str]]) -> list[Measure]:
    """Every measure printed in the reference output, parsed from trec_eval's own name."""
    return list(dict.fromkeys(parse_measure(n) for n in sorted(printed_names(table))))


def assert_matches(table: dict[str, dict[str, str]], result, measures: list[Measure]) -> int:
    """Compare every value (strings for runid and relstring); return how many were compared."""
    per_query, aggregate, compared = result.per_query, result.aggregate, 0
    for query, row in table.items():
        for measure in measures:
            if measure.trec_name not in row:
                continue
            expected = row[measure.trec_name]
            if measure.aggregate == "text":
                mine = result.text[measure.name][0] if query == "all" else per_query[query][measure.name]
                assert f"'{mine}'" == expected or mine == expected, (query, measure.name)
            else:
                mine = aggregate[measure.name] if query == "all" else per_query[query][measure.name]
                assert mine == pytest.approx(float(expected), abs=1e-4 + 1e-12), (query, measure.name)
            compared += 1
        for count in COUNTS:
            if count in row:
                value = result.counts[count] if query == "all" else per_query[query][count]
                assert value == int(row[count]), (query, count)
        if query == "all" and "num_q" in row:
            assert result.counts["num_q"] == int(row["num_q"])
    return compared


CASES = [
    ("out.test", "qrels.test", "results.test", {}),
    ("out.test.aq", "qrels.test", "results.test", {}),
    ("out.test.aqc", "qrels.test", "results.trunc", {}),
    ("out.test.aqcM", "qrels.test", "results.trunc", {"max_depth": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", {"relevance_level": 2}),
    ("out.test.meas_params", "qrels.test", "results.test", {}),
]


@pytest.mark.parametrize(("output", "qrels", "run", "options"), CASES, ids=[c[0] for c in CASES])
def test_every_measure_line_matches_trec_eval(output: str, qrels: str, run: str, options: dict) -> None:
    table = reference(output)
    measures = supported_in(table)
    result = evaluate(DATA / qrels, DATA / run, measures, **options)
    compared = assert_matches(table, result, measures)
    assert compared == sum(len(row) for row in table.values())


def test_all_trec_nickname_is_what_trec_eval_prints() -> None:
    table = reference("out.test.aq")
    names = {m.trec_name for m in parse_measures(["all_trec"])}
    assert names == printed_names(table) | {"relstring"}  # relstring is per query only: not in "all"
    result = evaluate(DATA / "qrels.test", DATA / "results.test", ["all_trec"])
    assert assert_matches(table, result, supported_in(table)) == sum(len(row) for row in table.values())


@pytest.mark.parametrize("name", sorted(WITH_OPTIONS))
def test_non_cutoff_parameters_are_one_measure_with_options(name: str) -> None:
    (measure,) = parse_measures([name])
    assert measure.family == WITH_OPTIONS[name]
    assert measure.trec_name == name
    assert parse_measure(measure.name) == measure  # ndcg(1=3,2=9,4=4.5) parses back


@pytest.mark.parametrize("name", ["utility.1,2", "ndcg.a=3", "rbp.q=0.5", "rbp.p=1.5", "set_F.x", "map.1=2"])
def test_bad_parameters_are_refused_clearly(name: str) -> None:
    with pytest.raises(InputError) as error:
        parse_measures([name])
    assert name.split(".")[1] in str(error.value)


def test_all_trec_outputs_cover_every_family() -> None:
    families = {m.family for m in supported_in(reference("out.test.aq"))} | {"relstring"}
    computed_by_trec_eval = {name for name, f in FAMILIES.items() if f.trec_name or f.trec_cut_name}
    assert families == computed_by_trec_eval  # the families trec_eval lacks (ours) are not in its outputs


def test_meas_params_cutoffs_are_compared() -> None:
    names = {m.name for m in supported_in(reference("out.test.meas_params"))}
    assert {"P@3", "P@7", "recall@2000", "ndcg@23", "success@2", "success@20"} <= names


def test_missing_query_is_filled_with_zeros_and_counted() -> None:
    result = evaluate(DATA / "qrels.test", DATA / "results.trunc", ["map", "ndcg@10", "P@5"])
    assert result.counts["queries_missing_in_run"] == 1
    assert result.counts["num_q"] == 3
    filled = result.per_query["302"]
    assert filled["num_rel"] == 77  # its judgments still count
    assert all(value == 0 for name, value in filled.items() if name != "num_rel")


def test_comment_lines_in_qrels_are_skipped() -> None:
    plain = evaluate(DATA / "qrels.test", DATA / "results.test", ["map", "ndcg@10"])
    commented = evaluate(DATA / "qrels.test.with-comments", DATA / "results.test", ["map", "ndcg@10"])
    assert commented.per_query == plain.per_query


def test_run_order_does_not_matter(tmp_path: Path) -> None:
    lines = (DATA / "results.test").read_text().splitlines()
    shuffled = tmp_path / "shuffled.run"
    shuffled.write_text("\n".join(sorted(lines, key=lambda line: line.split()[2])) + "\n")
    measures = [parse_measure(name) for name in ("map", "mrr", "ndcg@10", "P@5", "R-prec")]
    assert (
        evaluate(DATA / "qrels.test", shuffled, measures).per_query
        == evaluate(DATA / "qrels.test", DATA / "results.test", measures).per_query
    )


def test_single_space_copy_takes_the_fast_reader_and_agrees(tmp_path: Path) -> None:
    # results.test pads its score column; a single-space copy is read by the pyarrow reader.
    lines = [" ".join(line.split()) for line in (DATA / "results.test").read_text().splitlines()]
    compact = tmp_path / "compact.run"
    compact.write_text("\n".join(lines) + "\n")
    qrels = tmp_path / "qrels"
    shutil.copy(DATA / "qrels.test", qrels)
    measures = supported_in(reference("out.test.aq"))
    table = reference("out.test.aq")
    run = read_run(compact)
    assert run.lines is None  # the fast reader (the careful one records line numbers)
    assert read_run(DATA / "results.test").lines is not None
    result = evaluate(read_qrels(qrels), run, measures)
    assert assert_matches(table, result, measures) > 100
