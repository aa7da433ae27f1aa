"""One registry type for the project's tables: measure families, answer and MT-RAG metrics, answer
judges, report kinds, data formats, target kinds.

A ``Registry`` holds frozen entries in the order written. It is checked when it is built (at import):
each name and alias is unique (``fold`` compares them lower-cased), each field with a fixed set of
values holds one of them (``choices``; an entry's ``kind`` and ``better`` are always checked), and an
entry's own check (``check``) passes. A wrong entry raises ``RegistryError`` naming the registry,
the entry and the field. The registry also gives the docs' table (``table``) and the directions
that gates, ``compare`` and ``ultra sweep`` read (``directions``).

An entry that is a value (a metric) says what its values are with ``kind`` (one of ``KINDS``) and
which way is better with ``better`` (one of ``BETTER``); ``Valued`` derives ``higher_is_better`` and
``is_count`` from them. A ``count`` (``num_ret``, ``num_q``) is a number of things, not a metric.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import fields, is_dataclass
from typing import Any, Generic, TypeVar

# what a value is: 0/1 per item; a few ordered grades; any number; a number of things (not a metric); text
KINDS = ("binary", "graded", "continuous", "count", "text")
BETTER = ("higher", "lower")  # which way a value is better
VALUED_CHOICES: dict[str, tuple[str, ...]] = {"kind": KINDS, "better": BETTER}


class RegistryError(ValueError):
    """A registry entry is wrong: the message names the registry, the entry and the field."""


class Valued:
    """What an entry with ``kind`` and ``better`` fields derives from them (mixed into its dataclass)."""

    kind: str
    better: str

    @property
    def higher_is_better(self) -> bool:
        return self.better == "higher"

    @property
    def is_count(self) -> bool:
        """A number of things (``num_ret``), not a metric: a report or comparison may leave it out."""
        return self.kind == "count"


E = TypeVar("E")


def fail(what: str, name: str, field: str, problem: str) -> RegistryError:
    """The error of a wrong entry: ``answer metric 'f1': field 'kind' is 'binry'; expected one of ...``."""
    return RegistryError(f"{what} {name!r}: field {field!r} {problem}")


class Registry(Mapping[str, E], Generic[E]):
    """Frozen entries with unique names and aliases, checked when built (see the module docstring).

    It reads as a mapping ``{name: entry}`` in registry order (a drop-in for the dicts it replaces);
    ``find`` looks a name or an alias up.

    ``what`` names an entry in messages (``answer metric``); ``choices`` maps a field to its allowed
    values (a field holding a mapping or a tuple has each value checked); ``check(entry)`` may raise
    ``fail(...)`` for rules of its own; ``fold``: names are looked up case-insensitively.
    """

    def __init__(
        self,
        what: str,
        entries: Iterable[E],
        *,
        choices: Mapping[str, Collection[Any]] | None = None,
        check: Callable[[E], None] | None = None,
        fold: bool = False,
        name_field: str = "name",
    ) -> None:
        self.what = what
        self.fold = fold
        self._options = {"choices": choices, "check": check, "fold": fold, "name_field": name_field}
        self._name_field = name_field
        self._entries: tuple[E, ...] = tuple(entries)
        self._choices = {**VALUED_CHOICES, **(choices or {})}
        self._by_name: dict[str, E] = {}
        self._by_spelling: dict[str, E] = {}
        for entry in self._entries:
            self._check_entry(entry)
            if check is not None:
                check(entry)
            self._add(entry)

    # -- building
    def _key(self, name: str) -> str:
        return name.lower() if self.fold else name

    def name_of(self, entry: E) -> str:
        return getattr(entry, self._name_field)

    def _check_entry(self, entry: E) -> None:
        name = self.name_of(entry) if hasattr(entry, self._name_field) else None
        if not is_dataclass(entry) or not type(entry).__dataclass_params__.frozen:
            raise fail(self.what, str(name), self._name_field, "belongs to an entry that is not a frozen dataclass")
        if not isinstance(name, str) or not name.strip():
            raise fail(self.what, str(name), self._name_field, "must be a non-empty string")
        names = {f.name for f in fields(entry)}
        for field, allowed in self._choices.items():
            if field not in names:
                continue
            value = getattr(entry, field)
            if isinstance(value, Mapping):
                values = list(value.values())
            elif isinstance(value, (tuple, list, frozenset, set)):
                values = list(value)
            else:
                values = [value]
            for item in values:
                if item not in allowed:
                    raise fail(self.what, name, field, f"is {item!r}; expected one of {sorted(map(str, allowed))}")

    def _add(self, entry: E) -> None:
        name = self.name_of(entry)
        if name in self._by_name:
            raise fail(self.what, name, self._name_field, "is declared twice")
        self._by_name[name] = entry
        for spelling in (name, *getattr(entry, "aliases", ())):
            owner = self._by_spelling.setdefault(self._key(spelling), entry)
            if owner is not entry:
                problem = f"spelling {spelling!r} also names {self.name_of(owner)!r}"
                raise fail(self.what, name, "aliases" if spelling != name else self._name_field, problem)

    def replaced(self, entry: E) -> Registry[E]:
        """A new registry with ``entry`` in place of the entry of its name, or added at the end if there is
        none (a test stands a marker in, or tries a new entry); checked as the registry was."""
        name = self.name_of(entry)
        entries = [entry if self.name_of(e) == name else e for e in self._entries]
        return Registry(self.what, entries if name in self._by_name else [*entries, entry], **self._options)

    # -- reading
    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, name: str) -> E:
        """The entry named ``name`` (its name, as a dict's key; ``find`` also takes an alias)."""
        return self._by_name[name]

    def find(self, spelling: str) -> E | None:
        """The entry whose name or alias is ``spelling`` (lower-cased first if the registry folds), or None."""
        return self._by_spelling.get(self._key(spelling)) if isinstance(spelling, str) else None

    @property
    def names(self) -> tuple[str, ...]:
        """Every entry's name, in registry order."""
        return tuple(self._by_name)

    def as_dict(self) -> dict[str, E]:
        """``{name: entry}`` in registry order."""
        return dict(self._by_name)

    def describe(self, label: Callable[[E], str] | None = None) -> str:
        """The names, comma-separated (for messages and tool field descriptions)."""
        return ", ".join(label(entry) if label else self.name_of(entry) for entry in self._entries)

    def table(self, columns: Sequence[tuple[str, Callable[[E], Any]]]) -> str:
        """The docs' Markdown table: one row per entry, a column per ``(header, cell)``; ``|`` escaped."""
        lines = ["| " + " | ".join(header for header, _ in columns) + " |", "|" + "---|" * len(columns)]
        for entry in self._entries:
            cells = (str(cell(entry)).replace("|", "\\|") for _, cell in columns)
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def directions(self) -> dict[str, bool]:
        """``{value name: higher_is_better}`` for gates, ``compare`` and ``ultra sweep``
        (``ServerSpec.metric_directions``): an entry's own ``directions()`` if it has one (a judge with
        several metrics), else its ``higher_is_better``. A name given both directions is an error."""
        found: dict[str, bool] = {}
        for entry in self._entries:
            own = getattr(entry, "directions", None)
            pairs = own() if callable(own) else {self.name_of(entry): entry.higher_is_better}  # type: ignore[attr-defined]
            for name, up in pairs.items():
                if found.setdefault(name, bool(up)) != bool(up):
                    raise fail(self.what, self.name_of(entry), "better", f"gives {name!r} the other direction")
        return found

    def counts(self) -> tuple[str, ...]:
        """The names of the entries that are counts, not metrics (``kind: count``)."""
        return tuple(self.name_of(e) for e in self._entries if getattr(e, "kind", None) == "count")
