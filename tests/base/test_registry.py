"""The one registry type (``ultra_base.registry``): what it refuses at build time, naming entry and field."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ultra_base.registry import Registry, RegistryError, Valued, fail


@dataclass(frozen=True)
class Metric(Valued):
    name: str
    description: str = ""
    aliases: tuple[str, ...] = ()
    kind: str = "continuous"
    better: str = "higher"
    extra: str | None = None


def test_entries_are_found_by_name_and_alias_in_order() -> None:
    table = Registry("metric", [Metric("f1", aliases=("F-1",)), Metric("em", kind="binary")], fold=True)
    assert table.names == ("f1", "em")
    assert table.find("f-1") is table.find("F1") is table["f1"] is table.as_dict()["f1"]
    assert "em" in table and "EM" not in table and table.find("EM") is table["em"] and table.find("bleu") is None
    assert "F-1" not in table and table.get("bleu") is None  # a mapping of names, as the dicts it replaces
    assert list(table) == ["f1", "em"] and [m.name for m in table.values()] == ["f1", "em"] and len(table) == 2


def test_a_misspelled_kind_fails_naming_entry_and_field() -> None:
    with pytest.raises(RegistryError, match=r"metric 'em': field 'kind' is 'binry'; expected one of"):
        Registry("metric", [Metric("f1"), Metric("em", kind="binry")])
    with pytest.raises(RegistryError, match=r"'toxicity': field 'better' is 'down'"):
        Registry("metric", [Metric("toxicity", better="down")])


def test_a_name_declared_twice_or_an_alias_taken_fails() -> None:
    with pytest.raises(RegistryError, match=r"metric 'f1': field 'name' is declared twice"):
        Registry("metric", [Metric("f1"), Metric("f1", description="second")])
    with pytest.raises(RegistryError, match=r"metric 'em': field 'aliases' spelling 'F1' also names 'f1'"):
        Registry("metric", [Metric("f1"), Metric("em", aliases=("F1",))], fold=True)


def test_choices_and_an_own_check_name_the_field() -> None:
    with pytest.raises(RegistryError, match=r"'bleu': field 'extra' is 'bleux'"):
        Registry("metric", [Metric("bleu", extra="bleux")], choices={"extra": (None, "bleu")})

    def described(entry: Metric) -> None:
        if not entry.description:
            raise fail("metric", entry.name, "description", "is empty")

    with pytest.raises(RegistryError, match=r"metric 'em': field 'description' is empty"):
        Registry("metric", [Metric("em")], check=described)


def test_an_entry_must_be_a_frozen_dataclass() -> None:
    @dataclass
    class Loose:
        name: str

    with pytest.raises(RegistryError, match="not a frozen dataclass"):
        Registry("thing", [Loose("a")])


def test_directions_counts_and_the_table_come_from_the_entries() -> None:
    table = Registry(
        "metric",
        [Metric("f1", "token F1"), Metric("toxicity", "a | b", better="lower"), Metric("num_q", kind="count")],
    )
    assert table.directions() == {"f1": True, "toxicity": False, "num_q": True}
    assert table.counts() == ("num_q",) and table["num_q"].is_count and not table["f1"].is_count
    assert table.table([("name", lambda m: f"`{m.name}`"), ("description", lambda m: m.description)]) == (
        "| name | description |\n|---|---|\n| `f1` | token F1 |\n| `toxicity` | a \\| b |\n| `num_q` |  |\n"
    )
    assert table.describe() == "f1, toxicity, num_q"


def test_two_directions_for_one_name_fail() -> None:
    @dataclass(frozen=True)
    class Judge:
        name: str
        ups: tuple[tuple[str, bool], ...]

        def directions(self) -> dict[str, bool]:
            return dict(self.ups)

    table = Registry("judge", [Judge("a", (("toxicity", False),)), Judge("b", (("toxicity", True),))])
    with pytest.raises(RegistryError, match=r"judge 'b': field 'better' gives 'toxicity' the other direction"):
        table.directions()


def test_a_tuple_field_has_each_value_checked_and_an_entry_can_be_replaced() -> None:
    @dataclass(frozen=True)
    class Reads:
        name: str
        reads: tuple[str, ...] = ()

    with pytest.raises(RegistryError, match=r"'meteor': field 'reads' is 'wordnet'"):
        Registry("metric", [Reads("meteor", ("wordnet",))], choices={"reads": ("wordnet_path",)})
    table = Registry("metric", [Reads("a"), Reads("b")], choices={"reads": ("x",)})
    swapped = table.replaced(Reads("b", ("x",)))
    assert swapped["b"].reads == ("x",) and table["b"].reads == () and swapped.names == ("a", "b")
    with pytest.raises(RegistryError, match="'b': field 'reads' is 'y'"):
        table.replaced(Reads("b", ("y",)))
