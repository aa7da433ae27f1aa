"""Keys bound to their hosts: a ``${VAR}`` value goes only to the host the parameter file configured for it.

Over MCP (``with_settings`` as ``build_server`` calls it) a call that would send it elsewhere is refused with
the reason; in process (the user's own ``ultra call``) it is allowed with a warning on stderr.
"""

from __future__ import annotations

from typing import Any

import pytest

from ultra_kit.factory import with_settings
from ultra_kit.wrapping.errors import ToolCrash

CANARY = "canary-key-3f9a1c7e"
CONFIGURED = "https://api.example.test/v1"
LLM = {"backend": "openai", "base_url": CONFIGURED, "api_key": "${ULTRA_TEST_KEY}", "model_id": "m", "endpoints": []}
SETTINGS = {"llm": LLM, "prompt": "say hi", "open": {"base_url": "", "api_key": "", "model_id": ""}}


class NoContext:
    pass


def tool(*, llm: dict[str, Any], prompt: str, open: dict[str, Any]) -> dict[str, Any]:
    return {"llm": llm, "prompt": prompt, "open": open}


def call(*, in_process: bool = False, settings: dict[str, Any] = SETTINGS, **arguments: Any) -> dict[str, Any]:
    wrapped = with_settings(
        tool, settings, context_type=NoContext, raise_as=ToolCrash, parameter_file="p.yaml", in_process=in_process
    )
    return wrapped(**({name: settings[name] for name in settings} | arguments))


@pytest.fixture(autouse=True)
def canary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ULTRA_TEST_KEY", CANARY)


def refusal(**arguments: Any) -> str:
    with pytest.raises(ToolCrash) as caught:
        call(**arguments)
    message = str(caught.value)
    assert CANARY not in message
    assert message.startswith("refused: ") and "p.yaml" in message, message
    return message


def test_the_configured_host_gets_the_key() -> None:
    assert call()["llm"]["api_key"] == "***"  # expanded for the tool (redacted in what it returns)
    # the same host written otherwise (a trailing slash, an explicit port, another path) is the same host
    for url in [CONFIGURED + "/", "https://API.example.test:443/v1", "https://api.example.test/v2"]:
        assert call(llm={"base_url": url, "api_key": "${ULTRA_TEST_KEY}"})["llm"]["base_url"] == url


def test_another_host_without_api_key_is_refused_with_the_reason() -> None:
    message = refusal(llm={"base_url": "http://127.0.0.1:9/v1", "model_id": "m"})
    assert (
        f"llm.base_url names http://127.0.0.1:9/v1 without api_key, while the key p.yaml configures "
        f'(${{ULTRA_TEST_KEY}}) goes only to {CONFIGURED}; give llm.api_key yourself (your own key, or "" for a '
        "server without auth)"
    ) in message
    assert "the user sets base_url and api_key together in p.yaml" in message


def test_another_host_with_its_own_literal_key_or_none_is_allowed() -> None:
    for key in ["sk-the-agents-own", ""]:
        result = call(llm={"base_url": "http://127.0.0.1:9/v1", "api_key": key})
        assert result["llm"]["api_key"] == key and result["llm"]["base_url"] == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    "llm",
    [
        {"base_url": "http://127.0.0.1:9/v1", "api_key": "${ULTRA_TEST_KEY}"},
        {"base_url": "http://127.0.0.1:9/v1", "api_key": "Bearer ${ULTRA_TEST_KEY}"},
        {"base_url": "https://api.example.test@evil.test/v1", "api_key": "${ULTRA_TEST_KEY}"},  # host: evil.test
        {"base_url": "https://api.example.test.evil.test/v1", "api_key": "${ULTRA_TEST_KEY}"},
        {"base_url": "http://api.example.test/v1", "api_key": "${ULTRA_TEST_KEY}"},  # no TLS: another origin
    ],
    ids=["env-key", "inside-text", "userinfo", "suffix-host", "plain-http"],
)
def test_a_key_from_the_environment_to_another_host_is_refused(llm: dict[str, Any]) -> None:
    message = refusal(llm=llm)
    assert (
        f"llm would send the key ${{ULTRA_TEST_KEY}} to {llm['base_url']}, but p.yaml binds it to {CONFIGURED} only"
        in (message)
    )


def test_any_variable_in_a_call_to_another_host_is_refused() -> None:
    for arguments, where in [
        ({"llm": {"base_url": "http://127.0.0.1:9/${ULTRA_TEST_KEY}", "api_key": ""}}, "llm.base_url"),
        (
            {"llm": {"base_url": "http://127.0.0.1:9/v1", "api_key": "", "model_id": "${ULTRA_TEST_KEY}"}},
            "llm.model_id",
        ),
        ({"llm": {"base_url": "http://127.0.0.1:9/v1", "api_key": ""}, "prompt": "${ULTRA_TEST_KEY}"}, "prompt"),
    ]:
        message = refusal(**arguments)
        assert f"{where} references ${{ULTRA_TEST_KEY}} in a call that sends requests to http://127.0.0.1:9/" in message
    # to the configured host, the call's own ${VAR} settings are expanded as before
    assert call(prompt="${ULTRA_TEST_KEY}")["prompt"] == "***"


def test_pool_endpoints_are_bound_one_by_one() -> None:
    own = {"base_url": "http://127.0.0.1:9/v1", "model_id": "m", "api_key": "mine"}
    assert call(llm={"endpoints": [own]})["llm"]["endpoints"] == [own]
    configured = {"base_url": CONFIGURED, "model_id": "m", "api_key": "${ULTRA_TEST_KEY}"}
    assert call(llm={"endpoints": [configured, own]})["llm"]["endpoints"][0]["api_key"] == "***"
    message = refusal(llm={"endpoints": [own, {**own, "api_key": "${ULTRA_TEST_KEY}"}]})
    assert "llm.endpoints[1] would send the key ${ULTRA_TEST_KEY} to http://127.0.0.1:9/v1" in message
    message = refusal(llm={"endpoints": [{"base_url": "http://127.0.0.1:9/v1", "model_id": "m"}]})
    assert "llm.endpoints[0] names http://127.0.0.1:9/v1 without api_key" in message


def test_a_setting_without_a_configured_key_binds_none() -> None:
    # generation's default: no host, no key; an agent's host without a key is fine, the user's key is not
    assert call(open={"base_url": "http://127.0.0.1:9/v1"})["open"]["api_key"] == ""
    message = refusal(open={"base_url": "http://127.0.0.1:9/v1", "api_key": "${ULTRA_TEST_KEY}"})
    assert "open would send the key ${ULTRA_TEST_KEY} to http://127.0.0.1:9/v1, but p.yaml binds it to no host" in (
        message
    )


def test_a_local_model_sends_nothing_anywhere() -> None:
    assert call(llm={"backend": "local", "model_id": "smollm2"})["llm"]["api_key"] == ""


def test_the_configured_host_may_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ULTRA_TEST_URL", "http://10.1.2.3:8000/v1")
    settings = {**SETTINGS, "llm": {**LLM, "base_url": "${ULTRA_TEST_URL}"}}
    result = call(settings=settings, llm={"base_url": "http://10.1.2.3:8000/v1", "api_key": "${ULTRA_TEST_KEY}"})
    assert result["llm"]["api_key"] == "***"
    with pytest.raises(ToolCrash, match="binds it to \\$\\{ULTRA_TEST_URL\\} only"):
        call(settings=settings, llm={"base_url": "http://10.1.2.3:8001/v1", "api_key": "${ULTRA_TEST_KEY}"})


def test_in_process_the_user_is_warned_not_refused(capsys: pytest.CaptureFixture[str]) -> None:
    result = call(in_process=True, llm={**LLM, "base_url": "http://127.0.0.1:7/v1"})  # ultra call llm.base_url=...
    assert result["llm"]["api_key"] == "***" and result["llm"]["base_url"] == "http://127.0.0.1:7/v1"
    err = capsys.readouterr().err
    assert (
        "[ultra] warning: llm would send the key ${ULTRA_TEST_KEY} to http://127.0.0.1:7/v1, but p.yaml binds it to "
        f"{CONFIGURED} only (allowed: you run this call in process)"
    ) in err
    assert CANARY not in err
    # a host without a key sends none, in process as before, without a word
    assert call(in_process=True, llm={"base_url": "http://127.0.0.1:7/v1"})["llm"]["api_key"] == ""
    assert capsys.readouterr().err == ""


def test_the_check_needs_no_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refusing needs no key: the variable is never looked up (an unset key still refuses the same way)."""
    monkeypatch.delenv("ULTRA_TEST_KEY")
    assert "would send the key ${ULTRA_TEST_KEY}" in refusal(
        llm={"base_url": "http://127.0.0.1:9/v1", "api_key": "${ULTRA_TEST_KEY}"}
    )


def test_a_literal_key_of_the_parameter_file_is_never_shown() -> None:
    settings = {**SETTINGS, "llm": {**LLM, "api_key": "sk-literal-in-the-file-8e2c"}}
    with pytest.raises(ToolCrash) as caught:
        call(settings=settings, llm={"base_url": "http://127.0.0.1:9/v1"})
    assert "the key p.yaml configures (a key written there) goes only to https://api.example.test/v1" in str(
        caught.value
    )
    assert "sk-literal" not in str(caught.value)


def test_jury_members_are_bound_one_by_one() -> None:
    own = {"base_url": "http://127.0.0.1:9/v1", "model_id": "m2", "api_key": "mine"}
    configured = {"base_url": CONFIGURED, "model_id": "m1", "api_key": "${ULTRA_TEST_KEY}"}
    assert call(llm={"jury": [configured, own]})["llm"]["jury"][0]["api_key"] == "***"
    message = refusal(llm={"jury": [configured, {**own, "api_key": "${ULTRA_TEST_KEY}"}]})
    assert "llm.jury[1] would send the key ${ULTRA_TEST_KEY} to http://127.0.0.1:9/v1" in message
    message = refusal(llm={"jury": [configured, {"base_url": "http://127.0.0.1:9/v1", "model_id": "m2"}]})
    assert "llm.jury[1] names http://127.0.0.1:9/v1 without api_key" in message
