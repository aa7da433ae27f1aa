"""The ``ultra annotate`` subcommand: serve the labelling page for SOURCE on 127.0.0.1, or ``--export`` the labels
(docs/annotate.md)."""

from __future__ import annotations

import argparse
import getpass
import re
import secrets
import sys
from typing import Any

from ultra_client import annotate as defaults

HELP = (
    "label items in a browser page on 127.0.0.1 (labels go to output/labels.sqlite); --export writes them out, "
    "--disagreements shows where people and judge disagree, --align adds those items to a rubric as examples"
)
ANNOTATOR = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``annotate`` to the ``ultra`` subcommands."""
    cmd = commands.add_parser("annotate", help=HELP, description=HELP)
    cmd.add_argument("source", nargs="?", help="a dataset (JSONL), a judge result file or an `ultra run` folder")
    cmd.add_argument("--scale", help="umbrela | faithfulness | binary | a rubric declaration (.yaml)")
    cmd.add_argument("--annotator", help="who labels (default: the login name)")
    cmd.add_argument("--port", type=int, default=defaults.PORT, help=f"default {defaults.PORT}")
    cmd.add_argument("--host", default="127.0.0.1", help="serve on another interface (prints an access token)")
    cmd.add_argument("--store", default=defaults.STORE, help=f"the label store (default {defaults.STORE})")
    cmd.add_argument("--select", choices=["active", "uniform"], help="default: active when the judge left scores")
    cmd.add_argument("--budget", type=int, default=defaults.BUDGET, help="active: labels expected in all")
    cmd.add_argument("--uniform-share", type=float, default=defaults.UNIFORM_SHARE, help="active: uniform mix")
    cmd.add_argument("--fit-after", type=int, default=defaults.FIT_AFTER,
                     help="active: labels before a model of the judge's error is fitted on them")  # fmt: skip
    cmd.add_argument("--overlap", type=float, default=defaults.OVERLAP, help="share of items for two annotators")
    cmd.add_argument("--seed", type=int, default=defaults.SEED)
    cmd.add_argument("--judge-metric", default="", help="the judge result's metric read as its score")
    cmd.add_argument("--export", metavar="FOLDER", help="write the labels for ppi, judge_agreement, compare_judged")
    cmd.add_argument("--disagreements", metavar="FILE", help="write the disagreements page (HTML) of the store")
    cmd.add_argument("--shown", type=int, default=defaults.SHOWN, help="disagreements listed on that page")
    cmd.add_argument("--align", metavar="RUBRIC", help="write a copy of RUBRIC with the disagreements as examples")
    cmd.add_argument("--align-out", metavar="FILE", help="where (default output/<rubric>.aligned.yaml; never replaced)")
    cmd.add_argument("--examples", type=int, default=defaults.EXAMPLES, help="--align: examples added")
    return cmd


def run(args: argparse.Namespace) -> int:
    """Export, or start the server (until Ctrl-C). Returns the exit code."""
    from ultra_base.errors import InputError

    if args.export:
        from ultra_client.annotate.export import export

        for name, path in export(args.store, args.export).items():
            print(f"{name}: {path}")
        return 0
    if args.disagreements or args.align:
        return _disagreements(args)
    if not args.source or not args.scale:
        raise InputError("give SOURCE and --scale (e.g. ultra annotate data.jsonl --scale binary), or --export")
    annotator = args.annotator or getpass.getuser()
    if not ANNOTATOR.match(annotator):
        raise InputError(f"--annotator {annotator!r}: use 1-64 letters, digits, _ . @ -")
    if not 0 <= args.overlap <= 1 or not 0 < args.uniform_share <= 1 or args.budget < 1 or args.fit_after < 3:
        raise InputError("--overlap is a share in [0, 1], --uniform-share in (0, 1] (at 0 an item the judge seems "
                         "sure of could never be drawn, and the estimate would be biased); --budget a positive "
                         "number; --fit-after at least 3")  # fmt: skip
    served, url = prepare(args, annotator)
    import uvicorn

    from ultra_client.annotate.app import build_app

    print(f"labelling {len(served.items)} items as {annotator}: {url}", flush=True)
    if served.access_token:
        print("served beyond 127.0.0.1: every request must carry the token in the URL above", file=sys.stderr)
    uvicorn.run(build_app(served), host=args.host, port=args.port, log_level="warning")
    served.store.close()
    return 0


def _disagreements(args: argparse.Namespace) -> int:
    """``--disagreements FILE`` and ``--align RUBRIC``: read the store (and SOURCE), write a file."""
    from pathlib import Path

    from ultra_base.errors import InputError, existing_file
    from ultra_kit.paths.output_root import check_inside_output

    if args.shown < 1 or args.examples < 1:
        raise InputError("--shown and --examples are positive numbers")
    store = str(existing_file(args.store, what="label store (--store)"))
    if args.disagreements:
        from ultra_client.annotate.source import read_items
        from ultra_kit.files import atomic_write_text
        from ultra_kit.labels.agreement import disagreement_report
        from ultra_kit.labels.page import page

        texts = {i.key: (i.question, i.answer) for i in read_items(args.source, args.judge_metric)} \
            if args.source else None  # fmt: skip
        html = page(disagreement_report(store), texts, top=args.shown, title="What people and the judge disagree on")
        target = check_inside_output(args.disagreements, setting="--disagreements")
        print(f"disagreements: {atomic_write_text(target, html)}")
    if args.align:
        from ultra_client.annotate.align import align

        if not args.source:
            raise InputError("--align needs SOURCE: the examples carry the items' question, answer and passages")
        out = args.align_out or f"output/{Path(args.align).stem}.aligned.yaml"
        path, added = align(store, args.source, args.align, out, examples=args.examples,
                            judge_metric=args.judge_metric)  # fmt: skip
        print(f"aligned rubric ({added} examples): {path}")
    return 0


def prepare(args: argparse.Namespace, annotator: str) -> tuple[Any, str]:
    """The items, the store with their queue, and the address; nothing is served yet."""
    from ultra_client.annotate.app import Served
    from ultra_client.annotate.scales import read_scale
    from ultra_client.annotate.select import plan
    from ultra_client.annotate.source import read_items
    from ultra_client.annotate.store import LabelStore
    from ultra_kit.paths.output_root import check_inside_output

    scale = read_scale(args.scale)
    items = read_items(args.source, args.judge_metric or scale.name)
    store = LabelStore(check_inside_output(args.store, setting="--store"), scale)
    values = [o.value for o in scale.options]
    select = args.select or ("active" if all(i.judge is not None for i in items) else "uniform")
    queue, used = plan([i.judge for i in items], select=select, seed=args.seed, overlap=args.overlap)
    meta = {"select": used, "seed": args.seed, "budget": args.budget, "uniform_share": args.uniform_share,
            "fit_after": args.fit_after, "source": args.source}  # fmt: skip
    if store.setup(items, queue, meta):
        print(f"selection: {used}" + (" (an item has no judge score)" if used != select else ""))
    store.follow_selection(items, low=min(values), high=max(values))
    local = args.host in ("127.0.0.1", "localhost", "::1")
    token = None if local else secrets.token_urlsafe(24)
    hosts = {f"{h}:{args.port}" for h in ("127.0.0.1", "localhost", args.host)}
    url = f"http://{args.host}:{args.port}/" + (f"?token={token}" if token else "")
    return Served(store, {i.key: i for i in items}, annotator, hosts, token, shown=args.shown), url
