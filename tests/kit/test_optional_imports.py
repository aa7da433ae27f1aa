"""Every import of an optional package (an extra's) is guarded, so a missing extra is named, never a traceback.

A module that imports such a package inside a function (heavy libraries are imported where they are used)
must sit in a package that guards it: ``require("<module>", extra=...)`` (which names the extra) or an
``except ImportError`` that says what to install. Which modules are optional is read from pyproject.toml's
extras and the installed distributions, so a new extra is covered without editing this test.
"""

from __future__ import annotations

import ast
import re
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
CODE = ("servers", "ultra_kit", "ultra_llm", "ultra_trec", "ultra_client", "ultra_base")


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def optional_modules() -> dict[str, set[str]]:
    """{top-level module: the extras whose distributions provide it}, leaving out what the core brings."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    core = {_name(d) for d in project["dependencies"]}
    for dist in list(core):  # and what the core's own packages require (rouge-score brings nltk)
        try:
            core |= {_name(r) for r in requires(dist) or [] if "extra ==" not in r}
        except PackageNotFoundError:
            continue
    by_dist: dict[str, set[str]] = {}
    for extra, deps in project["optional-dependencies"].items():
        for dep in deps:
            name = _name(dep)
            if extra != "dev" and not name.startswith("ultra-eval") and name not in core:
                by_dist.setdefault(name, set()).add(extra)
    modules: dict[str, set[str]] = {}
    for module, dists in packages_distributions().items():
        for dist in dists:
            modules.setdefault(module, set()).update(by_dist.get(dist.lower().replace("_", "-"), set()))
    return {module: extras for module, extras in modules.items() if extras}


def unguarded_imports() -> list[str]:
    optional = optional_modules()
    guarded: dict[Path, str] = {}  # package folder -> the source of all its modules
    files = [f for top in CODE if (ROOT / top).is_dir() for f in sorted((ROOT / top).rglob("*.py"))]
    for file in files:
        guarded[file.parent] = guarded.get(file.parent, "") + file.read_text("utf-8")
    found = []
    for file in files:
        tree = ast.parse(file.read_text("utf-8"))
        for function in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names = [node.module]
                else:
                    continue
                for top in {name.split(".")[0] for name in names} & set(optional):
                    package = guarded[file.parent]
                    if f'require("{top}' not in package and "except ImportError" not in package:
                        where = file.relative_to(ROOT)
                        found.append(f"{where}:{node.lineno} imports {top} (extra {sorted(optional[top])})")
    return found


def test_the_optional_packages_are_known() -> None:
    optional = optional_modules()
    assert {"matplotlib", "optuna", "sacrebleu", "lingua", "mlflow", "wandb"} <= set(optional)
    assert "numpy" not in optional and "nltk" not in optional  # core, or brought by the core (rouge-score)


def test_every_import_of_an_optional_package_is_guarded() -> None:
    assert unguarded_imports() == []


def test_ultra_compare_without_the_report_extra_names_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import run_ultra

    project = tmp_path / "project"
    project.mkdir()
    (project / "data").symlink_to(ROOT / "data")
    (project / "t.yaml").write_text(
        "servers:\n  evaluation: servers/evaluation\npipeline:\n  - evaluation.evaluate_trec\n"
    )
    from tests.support.together import at_once

    ran = at_once({i: lambda: run_ultra("run", "t.yaml", cwd=project) for i in range(2)})  # two run folders, at once
    assert [done.returncode for done in ran.values()] == [0, 0]
    runs = sorted(str(p) for p in (project / "output").glob("t_*"))
    probe = "import sys; sys.modules['matplotlib'] = None; import ultra; sys.exit(ultra.main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", probe, "compare", *runs], cwd=project, capture_output=True,
                          text=True, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "install it with: pip install -e '.[report]'" in done.stderr, done.stderr
