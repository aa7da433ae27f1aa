"""LLMSettings.from_mapping: every mistake is an InputError naming the setting; complete_mapping fills the rest."""

from __future__ import annotations

import pytest

from tests.llm.conftest import SECRET
from ultra_base.errors import InputError
from ultra_kit.settings import complete_mapping, defaults
from ultra_llm.settings import LLMSettings

LIMITS = {"timeout": 5, "max_retries": 1, "max_workers": 2}
GOOD = {"model_id": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": SECRET, **LIMITS}


def test_a_good_mapping_is_checked_and_keeps_the_key_private() -> None:
    llm = LLMSettings.from_mapping(GOOD, name="judge_llm", backoff_base=0.01)
    assert (llm.backend, llm.timeout, llm.max_retries, llm.max_workers) == ("openai", 5.0, 1, 2)
    assert (llm.reasoning, llm.structured_output, llm.embedding_model) == (False, False, "")
    assert llm.backoff_base == 0.01
    assert SECRET not in repr(llm) and "api_key" not in llm.public()


def test_unknown_key_is_named_with_the_setting() -> None:
    with pytest.raises(InputError, match=r"generation_llm has unknown keys \['apikey'\]; known keys: \[") as error:
        LLMSettings.from_mapping({**GOOD, "apikey": "k"}, name="generation_llm")
    assert "api_key" in str(error.value)  # the known keys are listed


@pytest.mark.parametrize("limit", sorted(LIMITS))
def test_a_missing_limit_is_named(limit: str) -> None:
    mapping = {key: value for key, value in GOOD.items() if key != limit}
    with pytest.raises(InputError, match=rf"^judge_llm needs \['{limit}'\]"):
        LLMSettings.from_mapping(mapping, name="judge_llm")


def test_bad_backend_and_missing_endpoint() -> None:
    with pytest.raises(InputError, match=r"my_llm\.backend must be one of \['openai', 'local'\], got 'vllm'"):
        LLMSettings.from_mapping({**GOOD, "backend": "vllm"}, name="my_llm")
    with pytest.raises(InputError, match="my_llm needs base_url and model_id"):
        LLMSettings.from_mapping({"model_id": "m", **LIMITS}, name="my_llm")
    local = LLMSettings.from_mapping({"backend": "local", "model_id": "smollm2", **LIMITS}, name="my_llm")
    assert local.backend == "local" and local.base_url == ""


def test_bad_limits_and_not_a_mapping() -> None:
    with pytest.raises(InputError, match=r"x\.timeout must be a number of seconds, got 'soon'"):
        LLMSettings.from_mapping({**GOOD, "timeout": "soon"}, name="x")
    with pytest.raises(InputError, match=r"x\.max_workers must be >= 1 and x\.max_retries >= 0"):
        LLMSettings.from_mapping({**GOOD, "max_workers": 0}, name="x")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0, -1])
def test_a_timeout_is_a_finite_number_of_seconds_above_zero(value: float) -> None:
    """NaN passed ``timeout <= 0`` (no comparison holds for it), and every request then timed out at once."""
    with pytest.raises(InputError, match=rf"x\.timeout must be a finite number of seconds > 0, got {value}"):
        LLMSettings.from_mapping({**GOOD, "timeout": value}, name="x")


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        ({"weight": float("nan")}, r"x\.endpoints\[0\]\.max_concurrency must be >= 1 and \.weight > 0"),
        ({"weight": float("inf")}, r"x\.endpoints\[0\]\.max_concurrency must be >= 1 and \.weight > 0"),
        ({"cool_down": float("nan")}, r"x\.drain_after and \.cool_down must be >= 0 \(\.cool_down finite\)"),
    ],
)
def test_a_pools_weight_and_cool_down_are_finite(pool: dict, message: str) -> None:
    weight = pool.get("weight", 1)
    endpoints = [{"base_url": "http://127.0.0.1:9/v1", "model_id": "m", "max_concurrency": 1, "weight": weight},
                 {"base_url": "http://127.0.0.1:8/v1", "model_id": "m", "max_concurrency": 1}]  # fmt: skip
    mapping = {**LIMITS, "endpoints": endpoints, "drain_after": 3, "cool_down": pool.get("cool_down", 30)}
    with pytest.raises(InputError, match=message):
        LLMSettings.from_mapping(mapping, name="x")
    with pytest.raises(InputError, match="x must be a mapping"):
        LLMSettings.from_mapping(["m"], name="x")


def test_complete_mapping_takes_the_missing_keys_from_parameter_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    base = defaults("judge")["judge_llm"]
    merged = complete_mapping({"model_id": "other", "max_workers": 2}, server="judge", setting="judge_llm")
    assert merged["model_id"] == "other" and merged["max_workers"] == 2  # the caller's values win
    assert merged["timeout"] == base["timeout"] and merged["base_url"] == base["base_url"]
    assert merged["api_key"] == SECRET  # ${OPENAI_API_KEY} of the default expanded
    assert set(merged) == set(base)
    assert LLMSettings.from_mapping(merged, name="judge_llm").max_retries == base["max_retries"]
    given = complete_mapping({"api_key": "${NOT_EXPANDED_HERE}"}, server="judge", setting="judge_llm")
    assert given["api_key"] == "${NOT_EXPANDED_HERE}"  # only the defaults are expanded here


def test_complete_mapping_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(InputError, match=r"judge_llm has unknown keys \['modelid'\]"):
        complete_mapping({"modelid": "m"}, server="judge", setting="judge_llm")
    with pytest.raises(InputError, match="OPENAI_API_KEY is not set"):
        complete_mapping({"model_id": "m"}, server="judge", setting="judge_llm")
    assert complete_mapping({"api_key": ""}, server="judge", setting="judge_llm")["api_key"] == ""
    with pytest.raises(InputError, match="judge_llm must be a mapping"):
        complete_mapping("gpt-4o", server="judge", setting="judge_llm")
    with pytest.raises(InputError, match="save_path is not a mapping setting"):
        complete_mapping({}, server="judge", setting="save_path")


def test_jury_members_inherit_the_rest_and_keep_their_keys_to_themselves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a jury needs no default key: each member has its own
    members = [
        {"base_url": "http://127.0.0.1:9/v1", "model_id": "a", "api_key": SECRET, "max_workers": 32},
        {"base_url": "http://127.0.0.1:8/v1", "model_id": "b"},
    ]
    given = {"jury": members, "temperature": 0.5, "jury_aggregate": "median", "max_retries": 1}
    llm = LLMSettings.from_mapping(complete_mapping(given, server="judge", setting="judge_llm"), name="judge_llm")
    a, b = llm.members()
    assert (a.model_id, a.api_key, a.max_workers, a.max_retries, a.temperature) == ("a", SECRET, 32, 1, 0.5)
    assert (b.base_url, b.api_key, b.max_workers) == ("http://127.0.0.1:8/v1", "", 8)  # no key of its own: none
    assert (llm.jury_aggregate, llm.jury_min, llm.samples) == ("median", 2, 1)
    assert SECRET not in repr(llm) and SECRET not in str(llm.public())
    assert [m["model_id"] for m in llm.public()["jury"]] == ["a", "b"]
    plain = LLMSettings.from_mapping(GOOD, name="judge_llm")
    assert plain.members() == (plain,) and plain.temperature is None


def test_the_panel_keys_are_checked() -> None:
    for extra, message in [
        ({"samples": 2}, r"x.samples 2 needs x.temperature > 0: at temperature null"),
        ({"samples": 2, "temperature": 0}, r"x.samples 2 needs x.temperature > 0: at temperature 0.0"),
        ({"temperature": 3}, r"x.temperature must be between 0 and 2"),
        ({"samples": 0}, r"x.samples must be >= 1"),
        ({"jury": "m"}, r"x.jury must be a list of 2 or more members"),
    ]:
        with pytest.raises(InputError, match=message):
            LLMSettings.from_mapping({**GOOD, **extra}, name="x")
    assert LLMSettings.from_mapping({**GOOD, "samples": 3, "temperature": 0.7}, name="x").samples == 3
