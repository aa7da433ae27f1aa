"""hallucination_judge end to end with a tiny randomly initialised cross-encoder that the test builds and saves (no
download): batched scores equal one-pair-at-a-time scores, label reading, no API key needed with a model, and the
LLM faithfulness fallback (its key expanded, ``method`` and ``note`` in its result and result file)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from servers.judge.hallucination.hhem import consistent_label
from servers.judge.server import SPEC
from tests.judge.conftest import SECRET, llm_settings
from tests.judge.test_answer_judges_ragas import responder as ragas_responder
from tests.support.openai_stub import OpenAIStub
from ultra_base.errors import InputError
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools

WORDS = "the a is in of and paris france capital city river seine water boils at degrees cats dogs blue sky".split()  # noqa: SIM905
PASSAGES = [
    ["Paris is the capital of France.", "The Seine is a river in Paris."],
    ["Water boils at 100 degrees."],
    ["The sky is blue."],
    [],  # no passages: not scored
    ["Cats and dogs."],
]
ANSWERS = ["Paris is in France.", "Water boils at 90 degrees.", "The sky is blue and the sky is blue.", "x", ""]


def build_model(folder: Path, id2label: dict[int, str]) -> Path:
    """A 2-layer BERT sequence classifier with random weights and a word-level vocabulary, saved to ``folder``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder.mkdir()
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, ".", ","]) + "\n")
    tokenizer = BertTokenizer(str(vocab), do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=64, num_labels=len(id2label), id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )  # fmt: skip
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def one_at_a_time(folder: Path, premise: str, hypothesis: str, label: int | None) -> float:
    """The score of one pair without batching or padding, straight from transformers."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True).eval()
    with torch.no_grad():
        logits = model(**tokenizer(premise, hypothesis, return_tensors="pt", truncation=True, max_length=64)).logits[0]
    return float(torch.sigmoid(logits[0]) if label is None else torch.softmax(logits, -1)[label])


def call(**arguments):
    return anyio.run(call_local_tool, local_tools(SPEC)["hallucination_judge"], arguments)


@pytest.mark.parametrize(
    ("labels", "label"),
    [({0: "LABEL_0"}, None), ({0: "hallucinated", 1: "consistent"}, 1),
     ({0: "entailment", 1: "neutral", 2: "contradiction"}, 0)],
)  # fmt: skip
def test_tiny_cross_encoder_end_to_end(tmp_path, labels, label) -> None:
    folder = build_model(tmp_path / "model", labels)
    result = call(
        q_ls=["q"] * 5, pred_ls=ANSWERS, ret_psg=PASSAGES, id_ls=list("abcde"), hhem_model=str(folder),
        hhem_batch_size=2, hhem_device="cpu", save_path=str(tmp_path / "out"),
    )  # fmt: skip
    assert result["method"] == "hhem"
    items = result["items"]
    assert [i["status"] for i in items] == ["ok", "ok", "ok", "no_passages", "no_answer"]
    for item, passages, answer in list(zip(items, PASSAGES, ANSWERS, strict=True))[:3]:
        expected = one_at_a_time(folder, "\n\n".join(passages), answer, label)
        assert item["factual_consistency"] == pytest.approx(expected, abs=1e-5)  # padding in a batch changes nothing
        assert item["hallucinated"] == float(expected < 0.5)
    scores = [i["factual_consistency"] for i in items[:3]]
    assert len(set(scores)) == 3  # the model really looked at the pairs
    aggregate = result["aggregate"]
    assert aggregate["factual_consistency"] == pytest.approx(sum(scores) / 3) and aggregate["num_excluded"] == 2
    saved = json.loads(Path(result["result_path"]).read_text())
    assert saved["method"] == "hhem" and saved["items"][0]["id"] == "a"
    assert saved["model"]["device"] == "cpu" and saved["model"]["architecture"] == "BertForSequenceClassification"


def test_label_reading_and_bad_models(tmp_path) -> None:
    assert consistent_label({0: "LABEL_0", 1: "LABEL_1"}, 2) == 1  # HHEM's convention
    assert consistent_label({0: "SUPPORTED", 1: "NOT_SUPPORTED"}, 2) == 0
    with pytest.raises(InputError, match="none is clearly 'consistent'"):
        consistent_label({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, 3)
    with pytest.raises(ToolFailure, match="not a model folder"):
        call(q_ls=["q"], pred_ls=["a"], ret_psg=[["p"]], hhem_model=str(tmp_path / "missing"),
             save_path=str(tmp_path))  # fmt: skip
    (tmp_path / "empty").mkdir()
    with pytest.raises(ToolFailure, match="could not be loaded"):
        call(q_ls=["q"], pred_ls=["a"], ret_psg=[["p"]], hhem_model=str(tmp_path / "empty"), save_path=str(tmp_path))
    assert not [p for p in tmp_path.iterdir() if p.is_file()]


def test_a_model_needs_no_api_key(tmp_path, monkeypatch) -> None:
    """With hhem_model, judge_llm is never read: its ${VAR} references (the default ${OPENAI_API_KEY}, or
    another) need not be set, and the result carries no trace of it."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ULTRA_TEST_UNSET_KEY", raising=False)
    folder = build_model(tmp_path / "model", {0: "LABEL_0"})
    arguments = dict(q_ls=["q"], pred_ls=[ANSWERS[0]], ret_psg=[PASSAGES[0]], hhem_model=str(folder),
                     hhem_device="cpu", save_path=str(tmp_path / "out"))  # fmt: skip
    for judge_llm in [None, {"api_key": "${ULTRA_TEST_UNSET_KEY}"}]:
        result = call(**arguments, **({} if judge_llm is None else {"judge_llm": judge_llm}))
        assert result["method"] == "hhem" and result["items"][0]["status"] == "ok"
        assert "judge_llm" not in Path(result["result_path"]).read_text()


def test_without_a_model_the_llm_faithfulness_judge_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_TEST_JUDGE_KEY", SECRET)
    with OpenAIStub(responder=ragas_responder) as stub:
        result = call(
            q_ls=["q"], pred_ls=["a yes; b no"], ret_psg=[["p"]], judge_cache="", save_path=str(tmp_path),
            judge_llm=llm_settings(stub, api_key="${ULTRA_TEST_JUDGE_KEY}"),
        )  # fmt: skip
    assert {served.authorization for served in stub.served} == {f"Bearer {SECRET}"}  # the fallback expands its key
    assert result["method"] == "llm_faithfulness" and "faithfulness judge" in result["note"]
    assert result["items"][0]["faithfulness"] == pytest.approx(0.5)
    saved = json.loads(Path(result["result_path"]).read_text())
    assert saved["tool"] == "faithfulness_judge"
    assert (saved["method"], saved["note"]) == ("llm_faithfulness", result["note"])  # the file says which method
    assert saved["items"][0]["faithfulness"] == pytest.approx(0.5)


def test_the_fallback_names_an_unset_key(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("ULTRA_TEST_UNSET_KEY", raising=False)
    with pytest.raises(ToolFailure, match="environment variable ULTRA_TEST_UNSET_KEY is not set"):
        call(q_ls=["q"], pred_ls=["a"], ret_psg=[["p"]], judge_cache="", save_path=str(tmp_path),
             judge_llm={"base_url": "http://127.0.0.1:9/v1", "api_key": "${ULTRA_TEST_UNSET_KEY}"})  # fmt: skip
    assert list(tmp_path.iterdir()) == []
