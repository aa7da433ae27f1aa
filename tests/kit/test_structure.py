"""The house's shape: one source of defaults, small modules, docs inside the repository.

These tests read the source with ``ast``; each fails with the places that break the rule. The import
rules (servers apart, no import cycles) are tested over the whole tree in ``tests/test_imports.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "servers"
SERVER_DIRS = sorted(d for d in SERVERS.iterdir() if (d / "__init__.py").is_file())
MAX_LINES = 400


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _settings(server: Path) -> dict:
    file = server / "parameter.yaml"
    return (yaml.safe_load(file.read_text(encoding="utf-8")) or {}) if file.is_file() else {}


@pytest.mark.parametrize("server", SERVER_DIRS, ids=lambda d: d.name)
def test_a_setting_has_no_second_default(server: Path) -> None:
    """parameter.yaml is the only place a setting's default is written."""
    settings = _settings(server)
    doubles = []
    for path in _modules(server):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                positional = args.posonlyargs + args.args
                pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
                pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
                doubles += [
                    f"{path.relative_to(ROOT)}:{node.lineno} {node.name}({arg.arg}=...)"
                    for arg, default in pairs
                    if arg.arg in settings
                ]
            if isinstance(node, ast.Assign):
                doubles += [
                    f"{path.relative_to(ROOT)}:{node.lineno} {target.id}"
                    for target in node.targets
                    if isinstance(target, ast.Name) and target.id.startswith("DEFAULT")
                ]
            if isinstance(node, ast.Dict) and node.keys:
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                for name, value in settings.items():
                    if isinstance(value, dict) and len(value) > 1 and keys == set(value):
                        doubles.append(f"{path.relative_to(ROOT)}:{node.lineno} a copy of the {name} mapping")
    assert not doubles, f"settings of {server.name} with a second default: {doubles}"


def test_modules_are_small() -> None:
    big = [
        f"{p.relative_to(ROOT)} {n}"
        for folder in (ROOT / name for name in ("ultra_kit", "ultra_trec", "ultra_llm", "servers", "ultra_client"))
        for p in _modules(folder)
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert not big, f"modules over {MAX_LINES} lines: {big}"


MAX_FLAT_MODULES = 15
PACKAGES = ("ultra_kit", "ultra_trec", "ultra_llm", "servers", "ultra_client")


def test_no_folder_is_open_plan() -> None:
    """A folder keeps at most 15 modules flat (``__init__`` not counted); more go into sub-packages by concept."""
    crowded = []
    for top in PACKAGES:
        for folder in [ROOT / top, *(ROOT / top).rglob("*")]:
            if folder.is_dir() and (folder / "__init__.py").is_file():
                flat = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
                if len(flat) > MAX_FLAT_MODULES:
                    crowded.append(f"{folder.relative_to(ROOT)} ({len(flat)})")
    assert not crowded, f"folders with more than {MAX_FLAT_MODULES} flat modules: {crowded}"


def test_every_server_py_holds_only_its_spec() -> None:
    """``server.py`` holds the SPEC and its instructions; tools live in ``tools/``, logic in sub-packages."""
    fat = []
    for server in SERVER_DIRS:
        tree = ast.parse((server / "server.py").read_text(encoding="utf-8"))
        functions = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        if len(functions) > 1 or not (server / "tools" / "__init__.py").is_file():
            fat.append(f"{server.name}: {functions}")
    assert not fat, f"server.py files holding more than a SPEC (or servers without tools/): {fat}"


MAX_FACE_LINES = 30


def _body_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's lines from its first statement after the docstring to its end."""
    body = function.body
    if (
        isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0  # type: ignore[operator]


def test_tool_faces_are_thin() -> None:
    """Every function in ``servers/*/tools/`` (the MCP faces and their helpers) has at most 30 lines of body
    (the docstring not counted): the logic lives in the server's sub-packages, by concept."""
    fat = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)"
        for path in sorted(SERVERS.glob("*/tools/*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (lines := _body_lines(node)) > MAX_FACE_LINES
    ]
    assert not fat, f"tool faces over {MAX_FACE_LINES} lines of body: {fat}"


def test_no_doc_points_outside_the_repository() -> None:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    outside = [
        f"{d.relative_to(ROOT)}: {needle}"
        for d in docs
        for needle in ("../shared", "METRICS.md", "JUDGES.md", "ARCHITECTURE.md")
        if needle in d.read_text(encoding="utf-8")
    ]
    assert not outside, outside


def test_the_readme_map_lists_every_doc() -> None:
    """A user finds every page of docs/ (and every tool card) from the README's map."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))
    missing = [page for page in pages if f"]({page})" not in readme]
    assert not missing, f"pages of docs/ the README's map does not list: {missing}"
