"""``ultra trec_eval [-q] [-c] [-n] [-J] [-l N] [-M N] [-m MEASURE]... QRELS RUN``: trec_eval 10.0's command line.

It prints what trec_eval prints, byte for byte, computed by the ``ultra_trec`` engine, so it can stand
in for the ``trec_eval`` binary (``alias trec_eval='ultra trec_eval'``). Bad input exits with status 2
and one line naming the file, the line and what to do. Imports only ``ultra_trec`` and ``ultra_kit``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

HELP = "score a run as trec_eval 10.0 does, printing its report byte for byte"
FLAGS = (
    ("-q", "query_eval_wanted", "also print each query's values, before the summary"),
    ("-c", "complete_rel_info_wanted", "average over every qrels query (a query missing from the run scores 0)"),
    ("-n", "nosummary", "print no summary ('all') lines"),
    ("-J", "Judged_docs_only", "score only the retrieved documents judged in the qrels"),
)


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``trec_eval`` to the ``ultra`` subcommands."""
    parser = commands.add_parser("trec_eval", help=HELP, description=HELP + " (see docs/metrics.md)")
    configure(parser)
    return parser


def configure(parser: argparse.ArgumentParser) -> None:
    """trec_eval's options (short and long spellings) and its two files."""
    for short, long, text in FLAGS:
        parser.add_argument(short, f"--{long}", dest=short[1], action="store_true", help=text)
    parser.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        default=[],
        metavar="MEASURE",
        help="a trec_eval measure or nickname, with .params (P.5,10; ndcg.1=3,2=9); repeatable; default official",
    )
    parser.add_argument("-l", "--level_for_rel", dest="level", type=int, default=1, help="grade a relevant doc needs")
    parser.add_argument(
        "-M", "--Max_retrieved_per_topic", dest="depth", type=int, default=None, help="cut each ranking"
    )
    parser.add_argument(
        "-N",
        "--Number_docs_in_coll",
        dest="collection_size",
        type=int,
        default=None,
        metavar="NUM",
        help="trec_eval's number of documents in the collection: parsed, then refused: not supported",
    )
    parser.add_argument("qrels", metavar="QRELS")
    parser.add_argument("run", metavar="RUN")


def run(args: argparse.Namespace) -> int:
    """Evaluate and print the report; 2 on bad input (one line on stderr, no traceback)."""
    from ultra_base.errors import InputError

    try:
        text = report(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `ultra trec_eval ... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return 0


def report(args: argparse.Namespace) -> str:
    """The text trec_eval prints for these options."""
    from ultra_base.errors import InputError
    from ultra_trec.engine import evaluate_tables
    from ultra_trec.reading.sources import load_qrels, load_run
    from ultra_trec.trec_eval_text import measures_from_options, report_text

    measures = measures_from_options(args.measures)
    if args.depth is not None and args.depth < 1:
        raise InputError(f"-M {args.depth}: give the number of documents to keep per query (>= 1)")
    if args.collection_size is not None:
        raise InputError(
            f"-N {args.collection_size}: the number of documents in the collection is not supported here; "
            "leave -N out (use the trec_eval binary for a measure that needs it)"
        )
    qrels = load_qrels(args.qrels)
    ranked = load_run(args.run)
    result = evaluate_tables(
        qrels, ranked, measures, relevance_level=args.level, max_depth=args.depth, judged_only=args.J
    )
    in_run = set(ranked.qids)
    queries = [q for q in result.qids if args.c or q in in_run]
    missing = [q for q in queries if q not in in_run]
    num_rel_all = int((qrels.values > 0).sum()) if args.c else None
    return report_text(
        result,
        measures,
        queries=queries,
        per_query=args.q,
        summary=not args.n,
        missing=missing,
        num_rel_all=num_rel_all,
        judged_only=args.J,
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m ultra_client.trec_eval_command``: the same command without the ``ultra`` front."""
    parser = argparse.ArgumentParser(prog="ultra trec_eval", description=HELP)
    configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    os._exit(status)  # skip tearing down numpy and pyarrow: faster, and their threads can abort it
