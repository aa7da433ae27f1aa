"""``python -m ultra_client.scaffold NAME TOOL``: the files of a new server that are the same in every server.

It writes, refusing to overwrite anything: ``servers/NAME/__init__.py``, ``__main__.py``, ``server.py``,
``tools/__init__.py`` (loading ``tools/TOOL.py``), a ``parameter.yaml`` to fill with the settings'
defaults, ``tests/NAME/__init__.py`` and ``docs/tools/NAME.md`` (the card, with the section of TOOL and
its generated part for ``python -m ultra_client.cards``). What is left to write by hand is listed at the
end (docs/extending.md, "A new server").
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def files(name: str, tool: str, summary: str) -> dict[str, str]:
    """``{relative path: text}`` of the files every server has, for server ``name`` with tool module ``tool``."""
    title = name.replace("_", " ").capitalize()
    return {
        f"servers/{name}/__init__.py": f'"""The {name} server: {summary}"""\n',
        f"servers/{name}/__main__.py": f"from servers.{name}.server import SPEC\n\nSPEC.main()\n",
        f"servers/{name}/server.py": (
            f'"""The {name} MCP server: {summary}"""\n\nfrom pathlib import Path\n\n'
            f"from servers.{name}.tools import load_tools\nfrom ultra_kit.factory import ServerSpec\n\n"
            f'SPEC = ServerSpec("{name}", Path(__file__).parent, load_tools, instructions="{summary}")\n'
        ),
        f"servers/{name}/tools/__init__.py": (
            f'"""The {name} server\'s MCP tools, one module per tool family."""\n\n'
            f'from ultra_kit.factory import tool_modules\n\nload_tools = tool_modules(__name__, "{tool}")\n'
        ),
        f"servers/{name}/parameter.yaml": f"# Defaults of the {name} server's settings (their single source).\n",
        f"tests/{name}/__init__.py": "",
        f"docs/tools/{name}.md": (
            f"# {title} server\n\n`python -m servers.{name}` serves {summary[:1].lower() + summary[1:]} Its settings' "
            f"defaults are in `servers/{name}/parameter.yaml`.\n\n## {tool}\n\nWhat it is for.\n\n"
            f"<!-- generated: tool {name}.{tool} -->\n<!-- end generated -->\n\n### Definitions\n\n"
        ),
    }


def scaffold(root: Path, name: str, tool: str, summary: str) -> list[Path]:
    """Write the files of ``files`` under ``root``; nothing is written if one of them exists."""
    for word, what in ((name, "server"), (tool, "tool")):
        if not NAME.match(word):
            raise SystemExit(f"the {what} name {word!r} must be lower-case letters, digits and _ (a Python name)")
    planned = {root / path: text for path, text in files(name, tool, summary.strip().rstrip(".") + ".").items()}
    taken = [str(path) for path in planned if path.exists()]
    if taken:
        raise SystemExit(f"nothing written: {', '.join(taken)} already exist(s)")
    for path, text in planned.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(planned)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ultra_client.scaffold", description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the server's name (servers/<name>/)")
    parser.add_argument("tool", help="the module of its first tool family (servers/<name>/tools/<tool>.py)")
    parser.add_argument("--summary", default="what it serves, in one line", help="one line: what the server is for")
    parser.add_argument("--root", default=".", help="the checkout (default: the working directory)")
    args = parser.parse_args(argv)
    written = scaffold(Path(args.root), args.name, args.tool, args.summary)
    print("\n".join(f"wrote {path}" for path in written))
    print(
        f"now write: servers/{args.name}/tools/{args.tool}.py (ending with TOOLS = [...]), its settings' defaults in "
        f"parameter.yaml, tests/{args.name}/test_{args.tool}.py, the card's prose in docs/tools/{args.name}.md, "
        f"README's row for the card, the tool's cheapest call in CALLS of tests/test_result_keys.py; then "
        f"python -m ultra_client.cards"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
