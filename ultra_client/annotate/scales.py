"""The scale people label on: a built-in judge's (``scales.yaml``: UMBRELA 0-3, faithfulness, binary), or a rubric
declared as ``rubric_judge`` reads it (``name``, ``criteria``, ``steps``, ``scale``: integer bounds ``[1, 5]`` or
labels with values ``{pass: 1, fail: 0}``). Each value gets a key 0-9 on the page; the stored label is its value.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_base.file_limits import load_limited_yaml
from ultra_kit.labels.rubric_scales import ScaleError, read_rubric_scale
from ultra_kit.yaml_files.lines import line_of, load_yaml_with_lines


@dataclass(frozen=True)
class Option:
    """One choice: the key that gives it, its name, the value stored."""

    key: int
    label: str
    value: float


@dataclass(frozen=True)
class Scale:
    """A scale: its name, the text shown beside the item, and its options (at most ten: keys 0-9)."""

    name: str
    text: str
    options: tuple[Option, ...]

    def value_of(self, value: Any) -> float | None:
        """The option's value for ``value`` (a number on the scale), None when it is not on the scale."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return next((o.value for o in self.options if o.value == value), None)

    def digest(self) -> str:
        """The scale's hash: labels given on another scale are recognisable as such."""
        text = json.dumps([self.name, self.text, [(o.key, o.label, o.value) for o in self.options]])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "text": self.text, "hash": self.digest(),
                "options": [{"key": o.key, "label": o.label, "value": o.value} for o in self.options]}  # fmt: skip


SCALES = Path(__file__).with_name("scales.yaml")
PAGE_KEYS = 10  # options at most: keys 0-9


def built_in(table: Path = SCALES) -> dict[str, Scale]:
    """The built-in scales, from ``scales.yaml`` (``table``), read within the limits of every YAML file read."""
    data = load_limited_yaml(table, kind="scales")
    return {name: Scale(name, spec["text"], tuple(Option(key, str(label), float(value))
                                               for key, (label, value) in enumerate(spec["options"])))
            for name, spec in data.items()}  # fmt: skip


def read_scale(name: str) -> Scale:
    """A built-in scale by name, or the first rubric of a YAML declaration file."""
    known = built_in()
    if name in known:
        return known[name]
    path = Path(name).expanduser()
    if path.suffix not in (".yaml", ".yml") or not path.is_file():
        raise InputError(f"--scale must be one of {sorted(known)} or a rubric declaration file (.yaml)")
    data = load_yaml_with_lines(path, kind="rubric")
    rubric = data[0] if isinstance(data, list) and data else data
    if not isinstance(rubric, dict) or not {"name", "criteria", "scale"} <= set(rubric):
        raise InputError("expected a rubric (name, criteria, scale), as rubric_judge reads", path=str(path),
                         line=line_of(rubric))  # fmt: skip
    steps = rubric.get("steps") or []
    text = str(rubric["criteria"]).strip() + "".join(f"\n- {s}" for s in steps if isinstance(s, str))
    return Scale(str(rubric["name"]), text, _options(rubric, str(path)))


def _options(rubric: dict[str, Any], path: str) -> tuple[Option, ...]:
    """The options of the rubric's scale (read by ``rubric_judge``'s reader), lowest value first."""
    try:
        scale = read_rubric_scale(rubric["scale"])
    except ScaleError as exc:  # at the label at fault, or at the scale
        line = line_of(rubric["scale"], exc.label) if exc.label is not None else None
        raise InputError(str(exc), path=path, line=line or line_of(rubric, "scale")) from None
    if len(scale.values) > PAGE_KEYS:
        raise InputError(f"the scale has {len(scale.values)} values; the page labels 2 to {PAGE_KEYS} (keys 0-9)",
                         path=path, line=line_of(rubric, "scale"))  # fmt: skip
    values = sorted(scale.values.items(), key=lambda item: item[1])
    return tuple(Option(i, str(label), value) for i, (label, value) in enumerate(values))
