"""Finding and rendering prompt templates in a Jinja2 sandbox.

A template is a ``.jinja`` file: given by path, or by name (``qa_rag_boxed``) looked up in the
user's ``template_dirs`` first, then in ``servers/prompt/templates/``. Rendering runs in Jinja2's
``SandboxedEnvironment`` (no attribute access to Python internals) with ``StrictUndefined``, so a
misspelt variable is an error instead of an empty string.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers.core.errors import InputError

BUILTIN_DIR = Path(__file__).parent / "templates"
SUFFIX = ".jinja"
_NAME = re.compile(r"[A-Za-z0-9_\-]+")


@dataclass(frozen=True)
class Template:
    """A template's name, file and source, and the sandboxed compiled form."""

    name: str
    path: Path
    source: str
    compiled: Any

    @property
    def version(self) -> str:
        """name@first 12 hex digits of the source's SHA-256: changes whenever the text does."""
        return f"{self.name}@{hashlib.sha256(self.source.encode()).hexdigest()[:12]}"

    def render(self, **variables: Any) -> str:
        import jinja2

        try:
            return self.compiled.render(**variables).strip() + "\n"
        except jinja2.exceptions.UndefinedError as exc:
            raise InputError(f"template uses an undefined variable: {exc.message}", path=str(self.path)) from None
        except jinja2.exceptions.SecurityError as exc:
            raise InputError(f"template does something the sandbox forbids: {exc}", path=str(self.path)) from None


def find_template(reference: str, *, template_dirs: Sequence[str]) -> Path:
    """The file of ``reference``: an existing path, or ``<name>.jinja`` in template_dirs then the built-ins."""
    if not reference:
        raise InputError("the template name is empty; give a name such as qa_rag_boxed or a .jinja file")
    candidate = Path(reference).expanduser()
    if candidate.suffix == SUFFIX or "/" in reference or "\\" in reference:
        if candidate.is_file():
            return candidate
        raise InputError("template file not found", path=reference)
    if not _NAME.fullmatch(reference):
        raise InputError(f"bad template name {reference!r}: use letters, digits, _ and -, or a path to a .jinja file")
    folders = [Path(d).expanduser() for d in template_dirs] + [BUILTIN_DIR]
    for folder in folders:
        file = folder / f"{reference}{SUFFIX}"
        if file.is_file():
            return file
    raise InputError(f"no template named {reference!r}; known: {sorted(available(template_dirs=template_dirs))}")


def available(*, template_dirs: Sequence[str]) -> set[str]:
    """Names of all templates found in template_dirs and the built-in folder."""
    names: set[str] = set()
    for folder in [Path(d).expanduser() for d in template_dirs] + [BUILTIN_DIR]:
        if folder.is_dir():
            names |= {file.stem for file in folder.glob(f"*{SUFFIX}")}
    return names


def load_template(reference: str, *, template_dirs: Sequence[str]) -> Template:
    """Find, read and compile a template in the sandbox; syntax errors name the file and line."""
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    path = find_template(reference, template_dirs=template_dirs)
    source = path.read_text(encoding="utf-8")
    env = SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    try:
        compiled = env.from_string(source)
    except jinja2.exceptions.TemplateSyntaxError as exc:
        raise InputError(f"template syntax error: {exc.message}", path=str(path), line=exc.lineno) from None
    return Template(path.stem, path, source, compiled)


def shorten(text: str, max_words: int) -> str:
    """``text`` cut to its first ``max_words`` words (with an ellipsis); 0 keeps it whole."""
    if max_words <= 0:
        return text
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words]) + " ..."
