"""Command line for ``evaluate_trec`` without MCP: ``python -m ultra_client.evaluate_trec_cli QRELS RUN -m map ...``.

It does what the tool does (evaluate, write the JSON result file, print ``eval_res``) with the
same defaults (the evaluation server's ``parameter.yaml``), and starts in a fraction of the time
an MCP round trip needs, so benchmarks can time the computation itself.
"""

from __future__ import annotations

import argparse
import json
import sys

from ultra_base.errors import InputError
from ultra_kit.files import atomic_write_text, compact_json, result_path
from ultra_kit.settings import defaults


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, evaluate, save, print; exit status 2 on bad input."""
    settings = defaults("evaluation")
    parser = argparse.ArgumentParser(prog="python -m ultra_client.evaluate_trec_cli", description=__doc__)
    parser.add_argument("qrels")
    parser.add_argument("run")
    parser.add_argument("-m", "--metrics", nargs="+", default=settings["ir_metrics"])
    parser.add_argument("-k", "--ks", nargs="*", type=int, default=settings["ks"])
    parser.add_argument("-l", "--relevance-level", type=int, default=settings["relevance_level"])
    parser.add_argument("-M", "--max-depth", type=int, default=settings["max_depth"])
    parser.add_argument("--names", choices=["ultrarag", "trec_eval"], default=settings["names"])
    parser.add_argument("--save-path", default=settings["save_path"])
    args = parser.parse_args(argv)
    from ultra_trec.engine import evaluate

    try:
        result = evaluate(
            args.qrels,
            args.run,
            args.metrics,
            ks=args.ks,
            relevance_level=args.relevance_level,
            max_depth=args.max_depth,
        ).renamed(args.names)
        data = result.to_dict()
        path = atomic_write_text(result_path(args.save_path, "evaluate_trec"), compact_json(data))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"eval_res": data["aggregate"], "counts": data["counts"], "result_path": str(path)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
