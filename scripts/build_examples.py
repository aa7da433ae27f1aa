"""Rebuild every example's committed parameter file the way ``ultra build`` does (values and comments kept,
settings the servers added since written in, settings they dropped taken out).

    python scripts/build_examples.py          # rewrite the stale ones, name each
    python scripts/build_examples.py --check  # exit 1 when one is stale (tests/client/test_param_files.py)

A sweep's own parameter file (``sweep.param``) is rebuilt against the pipeline the sweep runs.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import anyio
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ultra_client.building import build  # noqa: E402
from ultra_client.pipeline.params import MergeReport  # noqa: E402


def example_parameter_files() -> list[tuple[Path, Path]]:
    """(pipeline, its committed parameter file) for every example; a sweep names both itself."""
    pairs = []
    for spec in sorted([*ROOT.glob("examples/*.yaml"), *ROOT.glob("examples/compat/*.yaml")]):
        sweep = (yaml.safe_load(spec.read_text(encoding="utf-8")) or {}).get("sweep")
        if sweep:
            if sweep.get("param"):  # else the pipeline's own file, listed with the pipeline
                pairs.append((spec.parent / sweep["pipeline"], spec.parent / sweep["param"]))
        elif (spec.parent / "parameters" / f"{spec.stem}_parameter.yaml").exists():
            pairs.append((spec, spec.parent / "parameters" / f"{spec.stem}_parameter.yaml"))
    return pairs


def rebuilt(pipeline: Path, param: Path, folder: Path) -> tuple[Path, MergeReport]:
    """``ultra build`` of a copy of ``pipeline`` whose parameter file is a copy of ``param`` (in ``folder``):
    the rebuilt copy and what changed. Servers are found from the project (run from its root)."""
    copy = folder / pipeline.name
    shutil.copy(pipeline, copy)
    (folder / "parameters").mkdir(exist_ok=True)
    target = folder / "parameters" / f"{pipeline.stem}_parameter.yaml"
    shutil.copy(param, target)
    written, report = anyio.run(build, str(copy))
    assert written == target
    return target, report


def main(argv: list[str]) -> int:
    """Rebuild (or with ``--check`` only compare) each example's parameter file."""
    check, stale = "--check" in argv, []
    for pipeline, param in example_parameter_files():
        with tempfile.TemporaryDirectory(prefix="ultra-examples-") as folder:
            target, report = rebuilt(pipeline, param, Path(folder))
            if target.read_bytes() != param.read_bytes():
                stale.append(f"{param.relative_to(ROOT)}: added {report.added or '-'}, dropped {report.dropped or '-'}")
                if not check:
                    shutil.copy(target, param)
    for line in stale:
        print(("stale: " if check else "rebuilt: ") + line)
    print(f"{len(stale)} of {len(example_parameter_files())} example parameter files {'stale' if check else 'rebuilt'}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    sys.exit(main(sys.argv[1:]))
