"""judge_llm -> LLMSettings: the one mapping place of the judge server."""

from __future__ import annotations

import pytest

from servers.judge.common.llm_settings import judge_settings
from ultra_base.errors import InputError
from ultra_kit.settings import defaults


def test_left_out_keys_come_from_parameter_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    settings = judge_settings({"model_id": "m", "max_workers": 2})
    judge_llm = defaults("judge")["judge_llm"]
    assert (settings.model_id, settings.max_workers) == ("m", 2)
    assert settings.timeout == judge_llm["timeout"] and settings.max_retries == judge_llm["max_retries"]
    assert settings.base_url == judge_llm["base_url"] and settings.api_key == "sk-from-the-environment"
    assert "sk-from" not in repr(settings) and "api_key" not in settings.public()


def test_a_local_model_needs_no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert judge_settings({"backend": "local", "model_id": "smollm2"}).api_key == ""
    with pytest.raises(InputError, match="OPENAI_API_KEY is not set"):
        judge_settings({"model_id": "m"})


def test_errors_name_the_judge_llm_setting() -> None:
    with pytest.raises(InputError, match=r"judge_llm.timeout must be a finite number of seconds > 0, got 0"):
        judge_settings({"api_key": "", "timeout": 0})
    with pytest.raises(InputError, match=r"judge_llm has unknown keys \['judge_timeout'\]"):
        judge_settings({"api_key": "", "judge_timeout": 5})


def test_the_default_key_goes_only_to_the_default_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-meant-for-the-default-endpoint")
    assert judge_settings({"base_url": "http://127.0.0.1:9/v1", "model_id": "m"}).api_key == ""
    assert judge_settings({"base_url": "http://127.0.0.1:9/v1", "model_id": "m", "api_key": "k"}).api_key == "k"
