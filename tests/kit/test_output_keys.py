"""``x-outputs-from``: a result type says how its outputs' keys follow from the tool's settings."""

from __future__ import annotations

import inspect
from pathlib import Path

import pydantic
import pytest

from ultra_base.errors import InputError
from ultra_kit.inprocess import OUTPUTS_FROM, load_spec, local_tools, output_keys

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def evaluate_trec_rule() -> object:
    spec = load_spec("servers.evaluation", ROOT)
    tool = local_tools(spec, only="evaluate_trec")["evaluate_trec"]
    return tool.outputs_from


def test_a_result_type_declares_how_its_keys_follow_its_settings(evaluate_trec_rule: object) -> None:
    settings = {"ir_metrics": ["ndcg", "map", "P.5,10"], "ks": [5, 20], "names": "trec_eval"}
    assert output_keys(evaluate_trec_rule, "eval_res", settings) == [
        "ndcg_cut_5",
        "ndcg_cut_20",
        "map",
        "P_5",
        "P_10",
    ]
    assert output_keys(evaluate_trec_rule, "eval_res", {**settings, "names": "ultrarag"})[:3] == [
        "ndcg@5",
        "ndcg@20",
        "map",
    ]
    assert output_keys(evaluate_trec_rule, "counts", settings) is None  # an output it says nothing of
    with pytest.raises(InputError, match="no measures given"):
        output_keys(evaluate_trec_rule, "eval_res", {**settings, "ir_metrics": []})


def test_the_rule_is_in_the_published_output_schema() -> None:
    """What an MCP client sees (the SDK publishes the TypedDict's JSON schema) holds the same rule."""
    spec = load_spec("servers.evaluation", ROOT)
    tool = local_tools(spec, only="evaluate_trec")["evaluate_trec"]
    annotation = inspect.signature(tool.function).return_annotation
    schema = pydantic.TypeAdapter(annotation).json_schema(mode="serialization")
    assert schema[OUTPUTS_FROM]["eval_res"]["settings"] == ["ir_metrics", "ks", "names"]


@pytest.mark.parametrize(
    "rule",
    [
        None,
        "benchmark.key_map",  # the other form: top-level outputs from a mapping setting
        {"eval_res": {"keys": "servers.evaluation.trec_tools:anything", "settings": []}},  # not a library
        {"eval_res": {"keys": "ultra_trec.measures:result_names", "settings": ["ir_metrics", "ks", "gone"]}},
        {"eval_res": {"keys": "no_such_library.names:result_names", "settings": []}},
        {"eval_res": {"keys": "ultra_trec.measures:no_such_function", "settings": []}},
    ],
)
def test_no_rule_or_an_unusable_one_predicts_nothing(rule: object) -> None:
    assert output_keys(rule, "eval_res", {"ir_metrics": ["map"], "ks": []}) is None
