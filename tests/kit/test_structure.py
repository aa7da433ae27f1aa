"""The house's shape: one source of defaults, servers apart, no import cycles, small modules.

These tests read the source with ``ast``; each fails with the places that break the rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "servers"
SHARED = {"core"}
SERVER_DIRS = sorted(d for d in SERVERS.iterdir() if (d / "__init__.py").is_file() and d.name not in SHARED)
MAX_LINES = 400


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports (at any depth of the file), absolute, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


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


def test_no_server_imports_another_server() -> None:
    """Servers meet only on the ground floor (ultra_kit)."""
    names = {d.name for d in SERVER_DIRS}
    crossings = []
    for server in SERVER_DIRS:
        for path in _modules(server):
            for line, module in _imports(path):
                parts = module.split(".")
                if len(parts) >= 2 and parts[0] == "servers" and parts[1] in names and parts[1] != server.name:
                    crossings.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    core = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in _modules(SERVERS / "core")
        for line, module in _imports(path)
        if module.split(".")[:2][-1] in names and module.startswith("servers.")
    ]
    assert not crossings and not core, crossings + core


def test_no_import_cycles() -> None:
    """Module imports (also those inside functions) form no cycle within servers/."""
    modules = {_module_name(p): p for p in _modules(SERVERS)}
    graph = {
        name: sorted({m for _, m in _imports(path) if m in modules and m != name}) for name, path in modules.items()
    }
    for name in graph:  # a package's __init__ is not a dependency of its submodules here
        graph[name] = [m for m in graph[name] if not name.startswith(m + ".")]
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, f"import cycles: {cycles}"


def test_modules_are_small() -> None:
    big = [
        f"{p.relative_to(ROOT)} {n}"
        for folder in (SERVERS, ROOT / "ultra_client")
        for p in _modules(folder)
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert not big, f"modules over {MAX_LINES} lines: {big}"


def test_no_doc_points_outside_the_repository() -> None:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    outside = [
        f"{d.relative_to(ROOT)}: {needle}"
        for d in docs
        for needle in ("../shared", "METRICS.md", "JUDGES.md", "ARCHITECTURE.md")
        if needle in d.read_text(encoding="utf-8")
    ]
    assert not outside, outside
