"""The import rules of docs/architecture.md, over every module of the tree, and no import cycle.

Every ``import`` and ``from`` statement counts, wherever it is: at module level, inside a function,
under ``if TYPE_CHECKING:``. The rules are written per package, not per file, so they hold for a
module that is added or moved:

- ``ultra_base`` (the base: errors, redaction, environment names, the registry type) imports only itself;
- ``ultra_trec`` and ``ultra_llm`` import their own package and the base only;
  ``ultra_trec`` never imports the MCP SDK or pydantic, ``ultra_llm`` not at module level;
- the rest of ``ultra_kit`` imports the kit and the libraries, never a server or the client; of ``ultra_llm`` only
  ``ultra_kit.llm_mapping`` imports (the LLM settings it publishes): estimate mode registers itself with the
  writer (``ultra_base.write_hooks``) instead of the kit importing it;
- a server (``servers/<name>/``) imports its own modules, the kit and the libraries: never another
  server, never the client;
- the client (``ultra_client``, ``ultra.py``) imports the kit and the libraries; it reaches a server
  only by loading its ``SPEC`` (``ultra_kit.inprocess.load_spec``), never by an import statement;
  and it writes no tool's name (a tool's behaviour is learnt from its schema);
- the benchmarks (``bench/``) import what the client may, the client itself, and the tests' support
  (``tests.support``: the stub servers): a server only through its ``SPEC`` (``bench/tools.py``) or as a
  subprocess, never a server's module or a test module.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ultra_base", "ultra_kit", "ultra_trec", "ultra_llm", "servers", "ultra_client")  # the installed packages
SCRIPTS = ("ultra.py",)  # the console script's module: part of the client
BENCH = "bench"  # benchmark scripts: public APIs only
SUPPORT = "tests.support"  # what the benchmarks may use of the tests
BASE = ("ultra_base",)
LIBRARIES = ("ultra_trec", "ultra_llm")
NO_SDK = ("mcp", "pydantic", "pydantic_core")
# Client modules that write a tool's name on purpose, and why (keep this short).
NAMES_A_TOOL = {
    "ultra_client/evaluate_trec_cli.py": "evaluate_trec's command line names its result files as the tool does",
    "ultra_client/compare_cli.py": "ultra compare calls the report server's compare tool, as ultra report calls report",
    "ultra_client/cli.py": "its COMMANDS table names `ultra compare`, a subcommand named like the tool it calls",
    "ultra_client/gates/significance.py": "a gate's no_significant_drop calls the compare tool, as ultra compare does",
}


@dataclass(frozen=True)
class Import:
    """One imported module: who imports it, where, and whether it runs when the importer is imported."""

    importer: str
    path: Path
    line: int
    module: str
    level: str  # "module" (runs on import), "function" (runs when called) or "typing" (TYPE_CHECKING only)

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} ({self.level}) imports {self.module}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_files() -> list[Path]:
    files = [ROOT / name for name in SCRIPTS]
    for package in (*PACKAGES, BENCH):
        files += sorted((ROOT / package).rglob("*.py"))
    return files


MODULES = {module_name(p): p for p in project_files()}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> list[str]:
    """The modules an import statement loads: ``from a import b`` loads ``a.b`` when that is a module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = importer.split(".") if is_package else importer.split(".")[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join(package + ([node.module] if node.module else []))
    submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
    return submodules if len(submodules) == len(node.names) else [base, *submodules]


def imports_of(path: Path) -> list[Import]:
    """Every import statement of ``path`` at any depth, with its level."""
    importer = module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[Import] = []

    def visit(node: ast.AST, level: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend(
                    Import(importer, path, child.lineno, target, level)
                    for target in _targets(child, importer, path.name == "__init__.py")
                )
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, "typing" if level == "typing" else "function")
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for item in child.body:
                    visit(ast.Module(body=[item], type_ignores=[]), "typing")
                for item in child.orelse:
                    visit(ast.Module(body=[item], type_ignores=[]), level)
            else:
                visit(child, level)

    visit(tree, "module")
    return found


ALL_IMPORTS = [item for path in project_files() for item in imports_of(path)]


def _within(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _server_of(module: str) -> str | None:
    """``servers.<name>`` for a module inside a server package, else None."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "servers" and len(parts) >= 2 else None


def _project(module: str) -> bool:
    return _within(module, *PACKAGES, *(Path(s).stem for s in SCRIPTS), BENCH, "tests")


def allowed(importer: str, module: str) -> bool:
    """Whether the project module ``importer`` may import the project module ``module``."""
    if _within(importer, *BASE):
        return _within(module, *BASE)
    if _within(importer, *LIBRARIES):
        own = importer.split(".")[0]
        return _within(module, own, *BASE)
    if _within(importer, "ultra_kit"):
        return _within(module, "ultra_kit", *LIBRARIES, *BASE)
    server = _server_of(importer)
    if server is not None:
        return _within(module, server, "ultra_kit", *LIBRARIES, *BASE) or module == "servers"
    if importer == "servers":
        return False
    if _within(importer, BENCH):
        return _within(module, BENCH, SUPPORT, "ultra_client", "ultra", "ultra_kit", *LIBRARIES, *BASE)
    # the client: ultra_client and ultra.py
    return _within(module, "ultra_client", "ultra_kit", *LIBRARIES, *BASE)


def test_the_rules_see_every_package() -> None:
    """The scan finds modules of every package, and imports at every level (a broken scan would pass)."""
    assert {name.split(".")[0] for name in MODULES} == {*PACKAGES, "ultra", BENCH}
    assert {item.level for item in ALL_IMPORTS} == {"module", "function", "typing"}


def test_each_package_imports_only_what_its_rules_allow() -> None:
    wrong = [str(i) for i in ALL_IMPORTS if _project(i.module) and not allowed(i.importer, i.module)]
    assert not wrong, "imports against the rules of docs/architecture.md:\n" + "\n".join(wrong)


def test_nothing_outside_a_server_imports_its_modules() -> None:
    """Also within ``servers/``: a server's modules are its own (the client loads its SPEC instead)."""
    wrong = [
        str(i)
        for i in ALL_IMPORTS
        if _server_of(i.module) is not None and _server_of(i.module) != _server_of(i.importer)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_libraries_do_without_the_mcp_sdk_and_pydantic() -> None:
    """ultra_trec never imports them; ultra_llm only where used (inside a function), so importing it stays light."""
    wrong = [
        str(i)
        for i in ALL_IMPORTS
        if _within(i.module, *NO_SDK)
        and (_within(i.importer, "ultra_trec") or (_within(i.importer, "ultra_llm") and i.level == "module"))
    ]
    assert not wrong, "\n".join(wrong)


# The one kit module that imports ultra_llm, and why (keep this short).
KIT_USES_LLM = {"ultra_kit.llm_mapping": "a server's LLM mapping setting: LLMSettings and the keys it publishes"}


def test_the_kit_reaches_ultra_llm_only_for_the_llm_mapping() -> None:
    """The writer and the tool wrapper know nothing of the LLM library: estimate mode registers its check with
    the writer (``ultra_base.write_hooks``) when ``ultra_llm.estimate`` is imported."""
    wrong = [
        str(i)
        for i in ALL_IMPORTS
        if _within(i.importer, "ultra_kit") and _within(i.module, "ultra_llm") and i.importer not in KIT_USES_LLM
    ]
    assert not wrong, "\n".join(wrong)
    assert all(name in MODULES for name in KIT_USES_LLM)


def test_the_benchmarks_import_no_server_module_even_in_code_they_run() -> None:
    """A bench may start a subprocess with code of its own (``python -c "..."``): that code imports no server
    module either (the AST scan above sees only the bench's own statements)."""
    pattern = re.compile(r"\b(?:import|from)\s+(servers\.\w+|tests\.(?!support\b)\w+)")
    found = [
        f"{path.relative_to(ROOT)}:{number}: {match.group(1)}"
        for path in sorted((ROOT / BENCH).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for match in pattern.finditer(line)
    ]
    assert not found, "\n".join(found)


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return cycles


def test_no_import_cycles() -> None:
    """No module imports itself round a circle, counting imports in functions and under TYPE_CHECKING too
    (a circle there is a design knot: break it with a ``Protocol`` or by moving the shared piece).

    A package's ``__init__`` is not counted as a dependency of its own submodules.
    """
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for item in ALL_IMPORTS:
        if item.module in MODULES and item.module != item.importer and not item.importer.startswith(item.module + "."):
            graph[item.importer].add(item.module)
    cycles = _cycles({name: sorted(targets) for name, targets in graph.items()})
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c", "a"]]


def _tool_names() -> dict[str, str]:
    """{tool: server} of every built-in server, from the servers' SPECs (the registry of tools)."""
    from ultra_kit.inprocess import load_spec, tool_names

    names: dict[str, str] = {}
    for folder in sorted((ROOT / "servers").iterdir()):
        if (folder / "server.py").is_file():
            spec = load_spec(f"servers.{folder.name}", ROOT)
            assert spec is not None, f"servers.{folder.name} has no SPEC"
            names.update(dict.fromkeys(tool_names(spec), folder.name))
    return names


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _used_as_a_tool_name(node: ast.Constant, parents: dict[int, ast.AST]) -> bool:
    """The string decides which tool code deals with: compared (``tool == "x"``, ``in ("x", "y")``) or
    passed to a call that names a tool (``call_tool("x")``); a data value or a dict key is not."""
    parent = parents.get(id(node))
    while isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
        parent = parents.get(id(parent))
    if isinstance(parent, ast.Compare):
        return True
    if isinstance(parent, ast.keyword):
        parent = parents.get(id(parent))
    return isinstance(parent, ast.Call) and any(word in _callee(parent).lower() for word in ("tool", "call"))


def _code_strings(path: Path) -> list[tuple[int, str, bool]]:
    """The string constants of ``path`` that are not docstrings: (line, text, used as a tool's name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    parents = _parents(tree)
    return [
        (node.lineno, node.value, _used_as_a_tool_name(node, parents))
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def _names_a_tool(text: str, used: bool, names: set[str], servers: set[str]) -> bool:
    """``server.tool`` anywhere, or a bare tool name where the code uses it as one."""
    server, dot, tool = text.partition(".")
    return (bool(dot) and server in servers and tool in names) or (used and text in names)


def test_the_client_writes_no_tool_name() -> None:
    """The client learns what a tool does from its schema, so its code names no tool: no ``server.tool``
    string, and no bare tool name that the code compares or passes to a call naming a tool (a word that
    happens to be a tool's name, such as a data column ``score``, is not one; examples inside a help or
    error text are fine).

    A tool named like its server (``report.report``) is exempt: the client names servers.
    """
    tools = _tool_names()
    assert "evaluate_trec" in tools and "get_data" in tools
    servers = set(tools.values())
    names = {name for name in tools if name not in servers}
    client = [ROOT / s for s in SCRIPTS] + sorted((ROOT / "ultra_client").rglob("*.py"))
    found = [
        f"{path.relative_to(ROOT)}:{line} {text!r}"
        for path in client
        if str(path.relative_to(ROOT)) not in NAMES_A_TOOL
        for line, text, used in _code_strings(path)
        if _names_a_tool(text, used, names, servers)
    ]
    assert not found, "tool names in the client:\n" + "\n".join(found)


def test_the_tool_name_check_finds_a_tool_name_used_as_one(tmp_path: Path) -> None:
    source = tmp_path / "client.py"
    source.write_text(
        'COLUMNS = {"score": 1}\nif step.tool == "score":\n    pass\npool.call_tool("score", {})\n'
        'ROW = ["score"]\nTARGET = "judge.score"\n'
    )
    strings = _code_strings(source)
    assert sorted(line for line, text, used in strings if _names_a_tool(text, used, {"score"}, {"judge"})) == [2, 4, 6]


@pytest.mark.parametrize(
    ("importer", "module", "ok"),
    [
        ("ultra_trec.engine", "ultra_base.errors", True),
        ("ultra_trec.engine", "ultra_kit.files", False),
        ("ultra_llm.client", "ultra_trec.engine", False),
        ("ultra_base.errors", "ultra_kit.files", False),
        ("ultra_base.errors", "ultra_base.environment", True),
        ("ultra_base.registry", "ultra_trec.registry", False),
        ("servers.judge.tools", "ultra_base.registry", True),
        ("ultra_kit.files", "ultra_llm.settings", True),
        ("ultra_kit.factory", "ultra_client.cli", False),
        ("servers.judge.tools", "servers.judge.registry", True),
        ("servers.judge.tools", "servers.evaluation.answers", False),
        ("servers.judge.tools", "ultra_client.errors", False),
        ("ultra_client.cli", "servers.report.build", False),
        ("ultra_client.cli", "ultra_trec.engine", True),
        ("ultra", "ultra_client.cli", True),
        ("bench.judge_bench", "bench.tools", True),
        ("bench.judge_bench", "ultra_llm.cache", True),
        ("bench.risk_bench", "tests.support.openai_stub", True),
        ("bench.risk_bench", "tests.synth.test_risk_suite", False),
        ("bench.rag_bench", "servers.retriever.bm25", False),
        ("ultra_client.cli", "bench.tools", False),
        ("ultra_client.cli", "tests.support.openai_stub", False),
    ],
)
def test_the_rules_themselves(importer: str, module: str, ok: bool) -> None:
    assert allowed(importer, module) is ok
