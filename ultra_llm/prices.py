"""What LLM tokens cost: the price table (``prices.yaml`` beside this module) and a user's file over it.

A price is US dollars per million tokens, input and output, with the date it was read from the
vendor's page. ``$ULTRA_PRICES`` names a YAML file of the same layout (``date``, ``models:
{name: {input, output}}``) whose entries replace or add to the shipped ones. A model is found by
its name, by its name without a provider prefix (``openai/gpt-4o``), or by its family's name when
it is a dated snapshot (``gpt-4o-2024-08-06``); a model served by the local backend costs nothing.
Anything else has no price: callers show its cost as unknown, never as 0.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError

PRICES_ENV = "ULTRA_PRICES"
SHIPPED = Path(__file__).with_name("prices.yaml")
LOCAL_PREFIX = "local:"  # how the client names a model of the local backend (LLMClient.model)
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens in and out, the date the price was read, and the file it came from."""

    input: float
    output: float
    date: str
    source: str

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """Dollars for these tokens."""
        return (tokens_in * self.input + tokens_out * self.output) / 1_000_000


LOCAL = Price(0.0, 0.0, "", "local model")


def read_price_file(path: Path) -> dict[str, Price]:
    """{model: Price} of one price file; a file that is not one is an InputError saying what is expected."""
    import yaml

    from ultra_base.file_limits import load_limited_yaml

    try:
        data = load_limited_yaml(path, kind="price")  # within the size, depth and alias limits of YAML files
    except InputError as exc:
        raise InputError(f"{exc}; check ${PRICES_ENV}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"the price file is not valid YAML: {exc}", path=str(path)) from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise InputError(
            "a price file is a mapping with 'date' and 'models: {name: {input: $/1M tokens, output: $/1M tokens}}'",
            path=str(path),
        )
    date = str(data.get("date") or "")
    table: dict[str, Price] = {}
    for name, entry in data["models"].items():
        table[str(name)] = Price(*_amounts(entry, str(name), path), date, str(path))
    return table


def _amounts(entry: Any, name: str, path: Path) -> tuple[float, float]:
    values = []
    for key in ("input", "output"):
        value = entry.get(key) if isinstance(entry, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise InputError(
                f"model '{name}' needs 'input' and 'output': dollars per million tokens, numbers >= 0 "
                f"(e.g. {name}: {{input: 2.5, output: 10}})",
                path=str(path),
            )
        values.append(float(value))
    return values[0], values[1]


@lru_cache(maxsize=8)
def _table(user_file: str) -> dict[str, Price]:
    table = read_price_file(SHIPPED)
    if user_file:
        table.update(read_price_file(Path(user_file).expanduser()))
    return table


def price_table() -> dict[str, Price]:
    """The shipped prices with the entries of ``$ULTRA_PRICES`` (if set) over them."""
    return dict(_table(os.environ.get(PRICES_ENV, "").strip()))


def price_of(model: str, table: dict[str, Price] | None = None) -> Price | None:
    """The price of ``model`` (see the module's docstring for how it is found), or None when it has none."""
    if model.startswith(LOCAL_PREFIX):
        return LOCAL
    table = price_table() if table is None else table
    names = [model, model.rsplit("/", 1)[-1]] if "/" in model else [model]
    for name in names:
        if name in table:
            return table[name]
        family = _SNAPSHOT.sub("", name)
        if family != name and family in table:
            return table[family]
    return None


def cost_of(model: str, tokens_in: int, tokens_out: int, table: dict[str, Price] | None = None) -> float | None:
    """Dollars for these tokens of ``model``, or None when its price is unknown (never 0 for unknown)."""
    price = price_of(model, table)
    return None if price is None else price.cost(tokens_in, tokens_out)


def dollars(value: float | None) -> str:
    """Dollars as the table shows them: 4 decimals under a dollar, 2 above; None is "unknown"."""
    if value is None:
        return "unknown"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def models_of(args: dict[str, Any]) -> list[str]:
    """The models of the LLM settings (mappings with ``model_id`` or ``endpoints``) among a tool's arguments,
    ``local:<id>`` for a local one: what a step's tokens are priced as."""
    models: list[str] = []
    for value in args.values():
        if not isinstance(value, dict):
            continue
        endpoints = value.get("endpoints")
        model = value.get("model_id")
        if isinstance(endpoints, list) and endpoints and isinstance(endpoints[0], dict):
            model = endpoints[0].get("model_id") or model
        if not isinstance(model, str) or not model:
            continue
        local = value.get("backend") == "local" or value.get("provider") == "local"  # a retriever's is "provider"
        model = f"{LOCAL_PREFIX}{model}" if local else model
        if model not in models:
            models.append(model)
    return models
