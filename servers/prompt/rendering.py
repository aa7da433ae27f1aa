"""Finding and rendering prompt templates in a Jinja2 sandbox with resource limits.

A template is a ``.jinja`` file named (``qa_rag_boxed``) or given by path, and it must lie inside
the user's ``template_dirs`` or ``servers/prompt/templates/`` once symlinks are resolved: a name is
looked up in template_dirs first, then in the built-in folder; any other file (``/etc/passwd``,
``../../x``) is refused. Rendering runs in Jinja2's ``SandboxedEnvironment`` (no attribute access
to Python internals) with ``StrictUndefined``, so a misspelt variable is an error instead of an
empty string, and with limits: the template file's size, each prompt's size, the size of any
string or list the template builds, and a deadline per prompt.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, readable_path
from ultra_kit.jinja_sandbox import RenderLimitError, limited_environment, render_limited

BUILTIN_DIR = Path(__file__).parent / "templates"
SUFFIX = ".jinja"
MAX_TEMPLATE_BYTES = 1_000_000  # a template file larger than this is refused unread
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
            return render_limited(self.compiled, variables).strip() + "\n"
        except jinja2.exceptions.UndefinedError as exc:
            raise InputError(f"template uses an undefined variable: {exc.message}", path=str(self.path)) from None
        except RenderLimitError as exc:
            raise InputError(f"template stopped: {exc}", path=str(self.path)) from None
        except jinja2.exceptions.SecurityError as exc:
            raise InputError(f"template does something the sandbox forbids: {exc}", path=str(self.path)) from None
        except RecursionError:
            raise InputError("template stopped: it recurses too deeply", path=str(self.path)) from None
        except (TypeError, ValueError, ArithmeticError, LookupError, MemoryError) as exc:
            raise InputError(f"template failed: {type(exc).__name__}: {exc}", path=str(self.path)) from None


def template_roots(template_dirs: Sequence[str]) -> list[Path]:
    """The folders templates may come from, symlinks resolved: the user's first, then the built-ins."""
    if isinstance(template_dirs, str):
        raise InputError(f"template_dirs must be a list of folders, not the string {template_dirs!r}")
    return [readable_path(d, setting="template_dirs").resolve() for d in template_dirs] + [BUILTIN_DIR.resolve()]


def _inside(file: Path, roots: Sequence[Path]) -> bool:
    return any(file.is_relative_to(root) for root in roots)


def _refuse(reference: str, why: str, template_dirs: Sequence[str]) -> InputError:
    known = sorted(available(template_dirs=template_dirs))
    return InputError(
        f"template {reference!r} {why}; templates are names (or .jinja paths) inside template_dirs "
        f"{list(template_dirs)} or the built-in servers/prompt/templates/. Available: {known}"
    )


def find_template(reference: str, *, template_dirs: Sequence[str]) -> Path:
    """The file of ``reference``: ``<name>.jinja`` in template_dirs then the built-ins, or a .jinja path inside them.

    Every candidate is resolved (symlinks followed) and must stay inside its folder.
    """
    if not reference:
        raise InputError("the template name is empty; give a name such as qa_rag_boxed or a .jinja file")
    roots = template_roots(template_dirs)
    if _NAME.fullmatch(reference):
        for root in roots:
            file = (root / f"{reference}{SUFFIX}").resolve()
            if file.is_file():
                if not _inside(file, roots):
                    raise _refuse(reference, f"is a link to {file}, outside the template folders", template_dirs)
                return file
        raise _refuse(reference, "is not a known template", template_dirs)
    given = Path(reference).expanduser()
    # A relative path is taken inside each template folder in turn, then from the working directory.
    candidates = [given.resolve()] if given.is_absolute() else [(root / given).resolve() for root in roots]
    candidates += [] if given.is_absolute() else [given.resolve()]
    inside = [file for file in candidates if _inside(file, roots) and file.is_file()]
    if inside and inside[0].suffix == SUFFIX:
        return inside[0]
    if inside:
        raise _refuse(reference, f"is not a {SUFFIX} file", template_dirs)
    if any(file.exists() for file in candidates):
        raise _refuse(reference, "is outside the template folders", template_dirs)
    raise _refuse(reference, "was not found (a name is letters, digits, _ and -)", template_dirs)


def available(*, template_dirs: Sequence[str]) -> set[str]:
    """Names of all templates found in template_dirs and the built-in folder."""
    names: set[str] = set()
    for folder in template_roots(template_dirs):
        if folder.is_dir():
            names |= {file.stem for file in folder.glob(f"*{SUFFIX}")}
    return names


def load_template(reference: str, *, template_dirs: Sequence[str]) -> Template:
    """Find, read and compile a template in the sandbox; syntax errors name the file and line."""
    import jinja2

    path = find_template(reference, template_dirs=template_dirs)
    if path.stat().st_size > MAX_TEMPLATE_BYTES:
        raise InputError(f"template file is larger than {MAX_TEMPLATE_BYTES} bytes", path=str(path))
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"template is not valid UTF-8 text ({exc.reason})", path=str(path)) from None
    env = limited_environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    try:
        compiled = env.from_string(source)
    except jinja2.exceptions.TemplateSyntaxError as exc:
        raise InputError(f"template syntax error: {exc.message}", path=str(path), line=exc.lineno) from None
    except RecursionError:
        raise InputError("template nests too deeply to compile", path=str(path)) from None
    return Template(path.stem, path, source, compiled)


def shorten(text: str, max_words: int) -> str:
    """``text`` cut to its first ``max_words`` words (with an ellipsis); 0 keeps it whole."""
    if max_words <= 0:
        return text
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words]) + " ..."
