"""A rubric declared in YAML (``Rubric``): what it judges, on which scale, from which inputs; checked with file:line.

    - name: polite                       # the metric's name (letters, digits, _)
      criteria: Is the answer polite to the user?
      steps: [Read the answer., Note any rude phrase.]   # optional: generated once when absent (G-Eval)
      scale: [1, 5]                      # integer bounds, or labels with values: {pass: 1, fail: 0}
      inputs: [question, answer]         # any of question, answer, reference, passages
      examples:                          # optional few-shot examples: the inputs, a score, a reasoning
        - {question: Hi?, answer: Go away., score: 1, reasoning: Rude.}

``read_rubrics`` checks a list of such declarations; every mistake is an ``InputError`` naming the file and
the line of the declaration (or key) at fault, where the value came from a file (see ``located``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ultra_base.errors import InputError, closest
from ultra_kit.labels.rubric_scales import ScaleError, read_rubric_scale
from ultra_kit.limits.caps import capped
from ultra_kit.yaml_files.lines import line_of
from ultra_llm.replies import Reply, choice, labels, text

# an input's name -> the tool's list that holds it (the order is the order the judge shows them)
INPUTS = {"question": "q_ls", "answer": "pred_ls", "reference": "gt_ls", "passages": "ret_psg"}
KEYS = ("name", "criteria", "steps", "scale", "inputs", "examples")
REQUIRED = ("name", "criteria", "scale", "inputs")
# fields of a judged item and of a judgment (a rubric's metric sits beside them under a jury or samples)
RESERVED = ("id", "status", "requests", "cached", "error", "raw", "rubrics", "sample_values", "spread",
            "score", "value", "reasoning", "weighted", "weighted_reason", "jury")  # fmt: skip
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Scale:
    """The scores a rubric allows: whole numbers ``low``..``high``, or labels each worth a number."""

    values: Mapping[Any, float]  # score (an int, or a label) -> its value
    labelled: bool

    @property
    def scores(self) -> list[Any]:
        return list(self.values)

    def reply(self) -> Reply:
        """The reply asked for: ``{"reasoning": text, "score": one of the scores}`` (its schema, reader, repair)."""
        score = labels(dict(self.values)) if self.labelled else choice(*self.values)
        return Reply.of(reasoning=text(), score=score)

    def describe(self) -> str:
        """How the prompt states the scale."""
        if not self.labelled:
            low, high = min(self.values), max(self.values)
            return f"a whole number from {low} (worst) to {high} (best)"
        return "one of the labels " + ", ".join(f'"{label}" (worth {value:g})' for label, value in self.values.items())

    @property
    def kind(self) -> str:
        """How the report charts the rubric's values: binary for two labels worth 0 and 1 ({pass: 1, fail: 0}),
        else graded (an integer scale, or labels worth other values: the share of items at each value)."""
        return "binary" if self.labelled and sorted(self.values.values()) == [0, 1] else "graded"

    def declared(self) -> list[int] | dict[str, float]:
        if self.labelled:
            return dict(self.values)
        return [min(self.values), max(self.values)]


@dataclass(frozen=True)
class Rubric:
    """One checked declaration; ``declared`` is what the user wrote (recorded, hashed)."""

    name: str
    criteria: str
    steps: tuple[str, ...] | None
    scale: Scale
    inputs: tuple[str, ...]
    examples: tuple[dict[str, Any], ...]
    declared: dict[str, Any]

    @property
    def text(self) -> str:
        """The declaration as canonical JSON: what the result records and hashes."""
        return json.dumps(self.declared, sort_keys=True, ensure_ascii=False)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


class _Where:
    """Where one declaration is: the file, its index, and how an error names it."""

    def __init__(self, path: str | None, index: int, node: Any) -> None:
        self.path, self.index, self.node = path, index, node
        name = node.get("name") if isinstance(node, Mapping) else None
        self.label = f"rubric {index + 1}" + (f" ({name!r})" if isinstance(name, str) and name else "")

    def error(self, message: str, key: Any = None, node: Any = None) -> InputError:
        line = line_of(node if node is not None else self.node, key) or line_of(self.node)
        where = "" if self.path is not None else f"rubrics[{self.index}]: "
        return InputError(f"{where}{self.label}: {message}", path=self.path, line=line if self.path else None)


def read_rubrics(value: Any, *, path: str | None) -> list[Rubric]:
    """The declarations in ``value`` (a list of mappings), checked; ``path`` is the file they came from (or None)."""
    if not isinstance(value, list) or not value:
        raise InputError("rubrics must be a non-empty list of declarations (name, criteria, scale, inputs)",
                         path=path, line=line_of(value) if path else None)  # fmt: skip
    try:
        capped(len(value), "rubrics (declarations in one call)", server="judge", name="rubrics", minimum=1)
    except InputError as exc:
        raise InputError(str(exc), path=path, line=line_of(value) if path else None) from None
    rubrics = [read_rubric(node, _Where(path, i, node)) for i, node in enumerate(value)]
    seen: set[str] = set()
    for i, rubric in enumerate(rubrics):
        if rubric.name in seen:
            raise _Where(path, i, value[i]).error(f"the name {rubric.name!r} is declared twice", key="name")
        seen.add(rubric.name)
    return rubrics


def read_rubric(node: Any, where: _Where) -> Rubric:
    if not isinstance(node, Mapping):
        raise where.error(f"a declaration is a mapping with {list(REQUIRED)}, got {type(node).__name__}")
    for key in node:
        if key not in KEYS:
            near = closest(str(key), KEYS)
            hint = f" (did you mean {near!r}?)" if near else ""
            raise where.error(f"unknown key {str(key)!r}{hint}; the keys: {list(KEYS)}", key=key)
    missing = [key for key in REQUIRED if key not in node]
    if missing:
        raise where.error(f"missing {missing}; a declaration needs {list(REQUIRED)}")
    name = node["name"]
    if not isinstance(name, str) or not _NAME.match(name) or name in RESERVED or name.startswith("num_"):
        raise where.error(f"name must be letters, digits and _ (a metric's name), not one of {list(RESERVED)} "
                          f"nor num_...; got {name!r}", key="name")  # fmt: skip
    criteria = node["criteria"]
    if not isinstance(criteria, str) or not criteria.strip():
        raise where.error("criteria is empty: say in words what the judge looks for", key="criteria")
    inputs = _inputs(node["inputs"], where)
    scale = _scale(node["scale"], where)
    steps = _steps(node.get("steps"), where)
    examples = tuple(_example(e, i, inputs, scale, where) for i, e in enumerate(_list(node, "examples", where)))
    declared = _plain({key: node[key] for key in KEYS if key in node and node[key] is not None})
    return Rubric(name, criteria.strip(), steps, scale, inputs, examples, declared)


def _list(node: Mapping[str, Any], key: str, where: _Where) -> list[Any]:
    value = node.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.error(f"{key} must be a list", key=key)
    return value


def _inputs(value: Any, where: _Where) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise where.error(f"inputs must be a non-empty list of {list(INPUTS)}", key="inputs")
    for name in value:
        if name not in INPUTS:
            raise where.error(f"unknown input {name!r}; the inputs: {list(INPUTS)}", key="inputs")
    if len(set(value)) != len(value):
        raise where.error("an input is named twice", key="inputs")
    return tuple(name for name in INPUTS if name in value)


def _scale(value: Any, where: _Where) -> Scale:
    try:
        scale = read_rubric_scale(value)
    except ScaleError as exc:  # at the label at fault, or at the scale
        if exc.label is not None:
            raise where.error(str(exc), key=exc.label, node=value) from None
        raise where.error(str(exc), key="scale") from None
    return Scale(scale.values, labelled=scale.labelled)


def _steps(value: Any, where: _Where) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(s, str) and s.strip() for s in value):
        raise where.error("steps must be a non-empty list of texts (or left out, to have them generated)", key="steps")
    return tuple(step.strip() for step in value)


def _example(node: Any, index: int, inputs: tuple[str, ...], scale: Scale, where: _Where) -> dict[str, Any]:
    what = f"example {index + 1}"
    if not isinstance(node, Mapping):
        raise where.error(f"{what} must be a mapping of the inputs, score and reasoning", key="examples")
    allowed = (*inputs, "score", "reasoning")
    for key in node:
        if key not in allowed:
            raise where.error(f"{what}: unknown key {str(key)!r}; an example takes {list(allowed)}", node=node)
    missing = [key for key in (*inputs, "score") if key not in node]
    if missing:
        raise where.error(f"{what} misses {missing}", node=node)
    score = node["score"]
    score = str(score).strip().lower().replace(" ", "_").replace("-", "_") if scale.labelled else score
    if score not in scale.values or isinstance(score, bool):
        raise where.error(f"{what}: score {node['score']!r} is not on the scale {scale.scores}", node=node)
    example = {name: _plain(node[name]) for name in inputs}
    return {**example, "score": score, "reasoning": str(node.get("reasoning") or "").strip()}


def _plain(value: Any) -> Any:
    """``value`` as plain JSON-able data (mappings and lists read with lines become dicts and lists)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value
