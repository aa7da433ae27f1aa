"""The answer and MT-RAG metric registries: every metric is listed, documented, and computed by its entry."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from mcp import Client

from servers.evaluation.answers import metrics as answers
from servers.evaluation.answers.items import Batch, Scored
from servers.evaluation.mtrag import metrics as mtrag
from servers.evaluation.server import SPEC
from servers.evaluation.tools import answers as answer_tools
from servers.evaluation.tools import mtrag as mtrag_tools
from tests.evaluation.helpers import score_answers, score_mtrag
from ultra_base.errors import InputError
from ultra_base.registry import Registry, RegistryError
from ultra_trec.measures import describe_names


def field_description(tool, parameter: str) -> str:
    hints = typing.get_type_hints(tool, localns={"Context": object}, include_extras=True)
    return hints[parameter].__metadata__[0].description


@pytest.mark.parametrize(
    ("registry", "tool", "parameter", "resolve"),
    [
        (answers.METRICS, answer_tools.evaluate, "metrics", answers.resolve_metrics),
        (mtrag.METRICS, mtrag_tools.evaluate_mtrag, "mtrag_metrics", mtrag.resolve_mtrag_metrics),
    ],
    ids=["answers", "mtrag"],
)
def test_field_description_and_errors_list_every_metric(registry, tool, parameter: str, resolve) -> None:
    described = field_description(tool, parameter)
    with pytest.raises(InputError) as error:
        resolve(["no-such-metric"])
    for metric in registry.values():
        assert metric.name in described and metric.name in str(error.value)
        if metric.extra:
            assert f"{metric.name} (extra {metric.extra})" in described


@pytest.mark.anyio
async def test_the_published_schemas_carry_the_generated_lists() -> None:
    async with Client(SPEC.create_app()) as client:
        listed = {tool.name: tool.input_schema["properties"] for tool in (await client.list_tools()).tools}
    assert listed["evaluate"]["metrics"]["description"].endswith(answers.describe_names())
    assert listed["evaluate_mtrag"]["mtrag_metrics"]["description"].endswith(mtrag.describe_names())
    for tool in ("evaluate_trec", "evaluate_trec_pvalue"):
        assert listed[tool]["ir_metrics"]["description"].endswith(describe_names())


@pytest.mark.parametrize("module", [answers, mtrag], ids=["answers", "mtrag"])
def test_registry_markdown_has_a_row_per_metric(module) -> None:
    rows = module.registry_markdown().splitlines()
    assert rows[0].startswith("| name | extra |")
    for metric in module.METRICS.values():
        assert any(row.startswith(f"| {metric.name} |") and metric.description in row for row in rows)


@pytest.mark.parametrize("name", list(answers.METRICS))
def test_each_answer_metric_is_computed_by_its_entry(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def marker(batch: Batch) -> Scored:
        return Scored([0.25] * len(batch.items), {"marked": name})

    monkeypatch.setattr(
        answers, "METRICS", answers.METRICS.replaced(dataclasses.replace(answers.METRICS[name], compute=marker))
    )
    result = score_answers(["a b", "c"], ["a", "d"], [name])
    assert result == {name: [0.25, 0.25], f"avg_{name}": 0.25, "marked": name}


@pytest.mark.parametrize("name", list(mtrag.METRICS))
def test_each_mtrag_metric_is_computed_by_its_entry(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    mark = {metric: 10.0 * position for position, metric in enumerate(mtrag.METRICS)}
    for metric in mtrag.METRICS.values():  # every entry marks its column, so no model is loaded

        def marker(records, result, metric=metric):
            return {metric.name: [mark[metric.name] + i for i in range(len(records.predictions))]}

        monkeypatch.setattr(mtrag, "METRICS", mtrag.METRICS.replaced(dataclasses.replace(metric, compute=marker)))
    result = score_mtrag(["x", "y"], ["a", "b"], mtrag_metrics=[name])
    for chosen in mtrag.resolve_mtrag_metrics([name]):
        assert result[chosen] == [mark[chosen], mark[chosen] + 1]


def test_mtrag_needs_are_added_and_come_first() -> None:
    for metric in mtrag.METRICS.values():
        resolved = mtrag.resolve_mtrag_metrics([metric.name])
        assert resolved[-1] == metric.name and set(metric.needs) <= set(resolved)


def test_settings_read_are_recorded_only_when_used() -> None:
    assert answers.settings_read(["em", "meteor"]) == ["wordnet_path"]
    assert mtrag.settings_read(["Recall", "Length"]) == []
    assert mtrag.settings_read(mtrag.resolve_mtrag_metrics(["RB_agg"])) == ["bertscore_model", "bertscore_layer"]


@pytest.mark.parametrize("module", [answers, mtrag], ids=["answers", "mtrag"])
def test_a_wrong_entry_fails_naming_the_entry_and_the_field(module) -> None:
    """A misspelled kind, direction or extra, or a second entry of one name, is refused when the registry
    is built (at import), and the message names the registry, the entry and the field."""
    first = next(iter(module.METRICS.values()))
    for field, value in (("kind", "binry"), ("better", "up"), ("extra", "bleux")):
        with pytest.raises(RegistryError, match=rf"metric '{first.name}': field '{field}' is '{value}'"):
            module.METRICS.replaced(dataclasses.replace(first, **{field: value}))
    twice = [*module.METRICS.values(), dataclasses.replace(first, description="a second one")]
    with pytest.raises(RegistryError, match=rf"'{first.name}': field 'name' is declared twice"):
        Registry(module.METRICS.what, twice)


def test_directions_come_from_the_registries() -> None:
    """``SPEC.metric_directions`` reads the registries: every metric, each with its declared direction."""
    directions = SPEC.directions()
    for module in (answers, mtrag):
        for metric in module.METRICS.values():
            assert directions[metric.name] is (metric.better == "higher")
