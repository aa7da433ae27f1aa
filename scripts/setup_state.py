"""What ``scripts/test`` finds already in place, one question per subcommand (stdlib only, so it runs
before anything is installed). Each prints a short answer and exits 0 for "in place", 1 for "missing".

    python scripts/setup_state.py dev        # ultra-eval installed from this checkout, with every dev extra
    python scripts/setup_state.py dist NAME  # a distribution is installed
    python scripts/setup_state.py torch      # "absent", "cpu VERSION" or "cuda VERSION CUDA" (--load: import it)
    python scripts/setup_state.py wordnet    # the WordNet data METEOR reads
    python scripts/setup_state.py chromium   # the browser the report's browser tests drive
    python scripts/setup_state.py postgres   # PostgreSQL's initdb and pg_ctl, for the shared-sweep tests
    python scripts/setup_state.py mysql      # MariaDB's mariadbd and mariadb-install-db, for the same tests
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "ultra-eval"
WORDNET_FILES = ("index.noun", "data.noun", "index.verb", "data.verb", "noun.exc", "verb.exc")


def _pyproject() -> dict:
    import tomllib  # Python 3.11+; on 3.10 the caller reinstalls (the ImportError says why)

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _requirements(project: dict, extras: list[str]) -> list[str]:
    """The project's dependencies plus those of ``extras``, following ``ultra-eval[...]`` self-references."""
    optional = project.get("optional-dependencies", {})
    wanted, seen, found = list(extras), set(), list(project.get("dependencies", []))
    while wanted:
        extra = wanted.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in optional.get(extra, []):
            self_ref = re.fullmatch(rf"{re.escape(PROJECT)}\[([^\]]+)\]", requirement.replace(" ", ""))
            if self_ref:
                wanted += self_ref.group(1).split(",")
            else:
                found.append(requirement)
    return found


def _unsatisfied(requirement: str) -> str | None:
    """Why ``requirement`` is not met by what is installed, or None."""
    from packaging.requirements import Requirement  # installed with pytest, so present once dev ever was

    parsed = Requirement(requirement)
    if parsed.marker is not None and not parsed.marker.evaluate({"extra": ""}):
        return None
    try:
        version = metadata.version(parsed.name)
    except metadata.PackageNotFoundError:
        return f"{parsed.name} is not installed"
    if parsed.specifier and not parsed.specifier.contains(version, prereleases=True):
        return f"{parsed.name} {version} does not satisfy {parsed.specifier}"
    return None


def dev_missing() -> str | None:
    """Why ``pip install -e '.[dev]'`` is needed here, or None when it would change nothing."""
    try:
        dist = metadata.distribution(PROJECT)
    except metadata.PackageNotFoundError:
        return f"{PROJECT} is not installed"
    url = json.loads(dist.read_text("direct_url.json") or "{}")
    source = url.get("url", "").removeprefix("file://")
    if not url.get("dir_info", {}).get("editable") or not source:
        return f"{PROJECT} is installed, but not as an editable install of this checkout"
    if not (os.path.isdir(source) and os.path.samefile(source, ROOT)):
        return f"the installed {PROJECT} is an editable install of {source}, not of this checkout ({ROOT})"
    try:
        project = _pyproject()["project"]
        reasons = [reason for r in _requirements(project, ["dev"]) if (reason := _unsatisfied(r))]
    except ImportError as error:
        return f"cannot check the installed requirements ({error})"
    scripts = {e.name: e.value for e in dist.entry_points if e.group == "console_scripts"}
    if scripts != project.get("scripts", {}):
        reasons.append("pyproject.toml's console scripts changed since the install")
    return "; ".join(reasons[:3]) + (f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else "") or None


def torch_state(load: bool = False) -> str:
    """``absent``, ``cpu VERSION`` or ``cuda VERSION CUDA``: from the installed metadata (a CUDA build carries
    ``+cuNNN`` or needs nvidia-* wheels), or with ``load``, from ``torch.version.cuda`` itself (slower)."""
    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "absent"
    if load:
        import torch

        return f"cuda {torch.__version__} {torch.version.cuda}" if torch.version.cuda else f"cpu {torch.__version__}"
    tag = re.search(r"\+cu(\d+)", version)
    nvidia = [r for r in metadata.requires("torch") or [] if r.lower().startswith("nvidia-")]
    if tag or nvidia:
        return f"cuda {version} {tag.group(1) if tag else nvidia[0].split(';')[0].strip()}"
    return f"cpu {version}"


def wordnet_found() -> str | None:
    """Where METEOR's WordNet data is (Debian's /usr/share/wordnet, else NLTK's data), or None."""
    debian = Path("/usr/share/wordnet")
    if all((debian / name).is_file() for name in WORDNET_FILES):
        return str(debian)  # found without importing NLTK (seconds)
    try:
        import nltk

        return str(nltk.data.find("corpora/wordnet"))
    except (ImportError, LookupError):
        return None


def chromium_found() -> str | None:
    """The Chromium the browser tests would start, or None (tests/support/chromium.py decides)."""
    sys.path.insert(0, str(ROOT))
    from tests.support.chromium import find_chromium

    return find_chromium()


def postgres_found() -> str | None:
    """The folder of the PostgreSQL binaries the shared-sweep tests start a server with, or None
    (tests/support/postgres.py decides)."""
    sys.path.insert(0, str(ROOT))
    from tests.support.postgres import binaries

    found = binaries()
    return str(found) if found else None


def mysql_found() -> str | None:
    """The MariaDB server binary the shared-sweep tests start a server with, or None (tests/support/mysql.py
    decides)."""
    sys.path.insert(0, str(ROOT))
    from tests.support.mysql import binaries

    found = binaries()
    return str(found.server) if found else None


def main(argv: list[str]) -> int:
    """Answer one question (see the module's docstring); 0 = in place, 1 = missing."""
    question = argv[0] if argv else ""
    if question == "dev":
        reason = dev_missing()
        print(reason or f"{PROJECT}[dev] is installed from this checkout")
        return 1 if reason else 0
    if question == "dist" and len(argv) == 2:
        try:
            print(f"{argv[1]} {metadata.version(argv[1])}")
            return 0
        except metadata.PackageNotFoundError:
            print(f"{argv[1]} is not installed")
            return 1
    if question == "torch":
        state = torch_state(load="--load" in argv)
        print(state)
        return 1 if state == "absent" else 0
    found = {"wordnet": wordnet_found, "chromium": chromium_found, "postgres": postgres_found, "mysql": mysql_found}
    if question in found:
        where = found[question]()
        print(where or f"{question} not found")
        return 0 if where else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
