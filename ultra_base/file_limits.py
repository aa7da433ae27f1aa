"""Size, depth and alias limits for every YAML file read: pipelines, parameter files, ``parameter.yaml``, rubrics;
and the depth limit of every JSON document (``check_json_depth``; whole JSON files: ``ultra_kit.limits.json_files``).
In the base, so that the libraries (``ultra_llm``'s price files and batch results) read within the same limits.

Hostile or mistaken YAML (a 1 GB file, 5,000 nested brackets, an "alias bomb" of 10**9 values) is
refused before it is parsed into objects, in milliseconds, with an InputError naming the file, the
line (or the size), the limit and what to do. Files users write by hand are loaded with their lines
by ``ultra_kit.yaml_files.lines``, within these limits.
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from ultra_base.errors import InputError

MAX_BYTES = 1024 * 1024  # size of a pipeline or parameter file (the largest shipped one is under 5 KB)
MAX_DEPTH = 100  # nesting levels of mappings and lists
MAX_VALUE_FILE_BYTES = (
    200 * 1024 * 1024
)  # a value file of ``ultra call`` (key=@F.json, --args-file): data, not settings
MAX_ALIAS_NODES = 100_000  # nodes that aliases may add when expanded (an "alias bomb" adds billions)
MAX_JSON_DEPTH = 100  # nesting levels of arrays and objects a JSON document may have
DEPTH_ADVICE = (
    ", the limit of every JSON document ultra reads (none it writes nests that deep); it was not parsed. Check "
    "that it is the file meant, or flatten its nesting"
)
_JSON_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_JSON_TOKEN = re.compile(_JSON_STRING + r"|[\[\]{}]")
_NOT_BRACKET = re.compile(_JSON_STRING + r"|[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")


MAX_INTEGER_DIGITS = 308  # a whole number of more digits is past every float (1.8e308): any use of it would overflow
_LONG_INTEGER = re.compile(rf"[-+]?[0-9_]{{{MAX_INTEGER_DIGITS + 1},}}")  # a YAML scalar that may be one


class LongInteger(ValueError):
    """A whole number of more than ``MAX_INTEGER_DIGITS`` digits, as the text writes it."""

    def __init__(self, digits: str) -> None:
        super().__init__(digits)
        self.digits = digits

    @property
    def count(self) -> int:
        """Its digits (a YAML number may hold underscores, and a sign)."""
        return sum(ch.isdigit() for ch in self.digits)

    def problem(self) -> str:
        return (
            f"a whole number of {self.count:,} digits; a number may have at most {MAX_INTEGER_DIGITS} (beyond, it is "
            "past every float: 1.8e308)"
        )


def bounded_integer(digits: str) -> int:
    """A JSON integer (``json.loads``'s ``parse_int``), refused past ``MAX_INTEGER_DIGITS`` digits: Python reads any
    size up to 4,300 digits, and raises its own ValueError beyond."""
    if len(digits) > MAX_INTEGER_DIGITS + digits.startswith("-"):
        raise LongInteger(digits)
    return int(digits)


def json_with_bounded_integers(text: str, *, path: str, line: int | None = None) -> Any:
    """``json.loads`` with ``bounded_integer``; a long one is an InputError at its line (``line``: the text's own)."""
    try:
        return json.loads(text, parse_int=bounded_integer)
    except LongInteger as exc:
        where = line or text.count("\n", 0, max(text.find(exc.digits), 0)) + 1
        raise InputError(exc.problem(), path=path, line=where) from None


class ShapeError(InputError):
    """A YAML document nested too deeply or expanding too far, at ``line``."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line, self.problem = line, problem


def check_shape(text: str) -> bool:
    """Refuse YAML nested deeper than MAX_DEPTH or whose aliases expand to more than MAX_ALIAS_NODES nodes.

    Walks the parser's events (no recursion, nothing expanded) and stops at the first excess, so a
    bomb or a 5,000-level document is refused in milliseconds. Raises ShapeError. The events come from libyaml
    where PyYAML has it (ten times faster); a document libyaml cannot parse is walked again with PyYAML's own
    parser, so that a syntax error is the one the loader would give. Whether libyaml parsed it.
    """
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            _walk(text, fast)
            return True
        except (yaml.YAMLError, ValueError):  # (ValueError: a lone surrogate, which libyaml cannot encode)
            pass  # walked again below, for PyYAML's own error
    _walk(text, yaml.SafeLoader)
    return False


def _walk(text: str, loader: type) -> None:
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (expanded nodes, height)
    stack: list[list[Any]] = []  # open collections: [anchor, nodes, height]
    added = 0

    def close(anchor: str | None, nodes: int, height: int) -> None:
        if anchor:
            sizes[anchor] = (nodes, height)
        if stack:
            stack[-1][1] += nodes
            stack[-1][2] = max(stack[-1][2], height)

    for event in yaml.parse(text, Loader=loader):
        line = event.start_mark.line + 1
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append([event.anchor, 1, 0])
            if len(stack) > MAX_DEPTH:
                raise ShapeError(line, f"nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, nodes, height = stack.pop()
            close(anchor, nodes, height + 1)
        elif isinstance(event, yaml.ScalarEvent):
            long = len(event.value) > MAX_INTEGER_DIGITS and not event.style  # plain: libyaml's style "", PyYAML's None
            if long and _LONG_INTEGER.fullmatch(event.value):
                number = LongInteger(event.value)
                if number.count > MAX_INTEGER_DIGITS:
                    raise ShapeError(line, number.problem())
            close(event.anchor, 1, 0)
        elif isinstance(event, yaml.AliasEvent):
            if any(frame[0] == event.anchor for frame in stack):
                raise ShapeError(line, f"alias *{event.anchor} refers to a mapping or list that contains it")
            nodes, height = sizes.get(event.anchor, (1, 0))  # an undefined alias is the loader's error
            if len(stack) + height > MAX_DEPTH:
                raise ShapeError(line, f"alias *{event.anchor} nests more than {MAX_DEPTH} levels deep")
            added += nodes - 1
            if added > MAX_ALIAS_NODES:
                raise ShapeError(
                    line,
                    f"aliases expand to more than {MAX_ALIAS_NODES:,} values (an alias bomb?); "
                    "write the values out instead of repeating aliases",
                )
            close(None, nodes, height)


def require_regular_file(path: Path, kind: str = "", *, form: str = "YAML") -> int:
    """The size of ``path`` in bytes; InputError unless it is a regular file (a directory or FIFO is named as
    such: reading a FIFO blocks). ``form``: the file's format, as the message names it."""
    noun = f"{kind} " if kind else ""
    try:
        status = path.stat()
    except FileNotFoundError:
        raise InputError(f"{noun}file not found", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None
    if not stat.S_ISREG(status.st_mode):
        mode = status.st_mode
        what = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        named = f"{noun}{form}"
        raise InputError(f"is {what}, expected {_article(named)} {named} file", path=str(path))
    return status.st_size


KEEP_SMALL = "Keep large values (data, lists of questions) in a data file and name its path here"


def read_limited_text(
    path: Path, kind: str = "", *, max_bytes: int = MAX_BYTES, form: str = "YAML", advice: str = KEEP_SMALL
) -> str:
    """The text of ``path``, a regular file of at most ``max_bytes`` (a larger one is refused unread, the error
    ending with ``advice``: what to do)."""
    size = require_regular_file(path, kind, form=form)
    data = b""
    if size <= max_bytes:
        try:
            with path.open("rb") as handle:
                data = handle.read(max_bytes + 1)  # a file that grew since stat() is cut off here
        except OSError as exc:
            raise InputError(f"cannot read: {exc}", path=str(path)) from None
    if size > max_bytes or len(data) > max_bytes:
        noun = f"{kind} file" if kind else f"{form} file"
        noun = f"{_article(noun)} {noun}"
        raise InputError(
            f"the file is {max(size, len(data)):,} bytes, more than the {max_bytes:,} bytes {noun} may have; "
            f"it was not read. {advice}",
            path=str(path),
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read: {exc}", path=str(path)) from None


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def read_text_file(path: Path, kind: str = "", *, form: str = "YAML") -> str:
    """The text of ``path``, a regular file of at most MAX_VALUE_FILE_BYTES (data given to ``ultra call``: a 3 GB
    file was read whole, to a MemoryError); InputError otherwise."""
    advice = "Give the tool the path of a data file instead (its *_path setting), which it reads itself"
    return read_limited_text(path, kind, max_bytes=MAX_VALUE_FILE_BYTES, form=form, advice=advice)


def load_limited_yaml(path: Path, *, loader: type = yaml.SafeLoader, kind: str = "") -> Any:
    """Load ``path`` with ``loader`` (a SafeLoader subclass) within the size, depth and alias limits.

    A file over a limit is an InputError at file:line (or naming the size); a YAML syntax error is left
    to the caller (``yaml.YAMLError``), who words it for its users.
    """
    text = read_limited_text(path, kind)
    try:
        parsed = check_shape(text)
    except ShapeError as exc:
        raise InputError(exc.problem, path=str(path), line=exc.line) from None
    if parsed and loader is yaml.SafeLoader:  # libyaml parsed it: its loader builds the same values, faster
        loader = yaml.CSafeLoader
    return yaml.load(text, Loader=loader)  # noqa: S506 - SafeLoader, a subclass or libyaml's


def load_yaml_value(text: str) -> Any:
    """A command-line value parsed as YAML, with the same depth and alias limits as files."""
    parsed = check_shape(text)
    return yaml.load(text, Loader=yaml.CSafeLoader if parsed else yaml.SafeLoader)  # noqa: S506 - a safe loader


def check_json_depth(text: str, *, path: str, first_line: int = 1) -> None:
    """Raise InputError naming the line where ``text`` nests deeper than MAX_JSON_DEPTH levels.

    Checked before parsing, so a hostile document never reaches the recursive parser.
    """
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return  # too few brackets to nest that deep
    skeleton = _NOT_BRACKET.sub("", text)
    for _ in range(MAX_JSON_DEPTH):  # each pass removes one level of (balanced) nesting, at C speed
        skeleton = _INNERMOST.sub("", skeleton)
        if not skeleton:
            return
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                line = first_line + text.count("\n", 0, match.start())
                raise InputError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels{DEPTH_ADVICE}", path=path, line=line)
        elif token in "]}":
            depth -= 1


def loads_limited(text: str, *, path: str, line: int | None = None) -> Any:
    """``json.loads`` within the depth limit; malformed or too deep JSON is an InputError at ``path``(:line)."""
    check_json_depth(text, path=path, first_line=line or 1)
    try:
        return json_with_bounded_integers(text, path=path, line=line)
    except json.JSONDecodeError as exc:
        where = exc.lineno if line is None else line
        raise InputError(f"invalid JSON at column {exc.colno}: {exc.msg}", path=path, line=where) from None
    except RecursionError:
        raise InputError(f"JSON nested too deeply (limit {MAX_JSON_DEPTH} levels)", path=path, line=line) from None
