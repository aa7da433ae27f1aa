"""``evaluate`` in other languages: MLQA conformance on the shipped XQuAD slice, mixed segmentation,
ROUGE and BLEU tokenisation, METEOR's refusal, ``auto`` detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servers.evaluation.answers.languages import mixed_segmentation, mlqa_normalize
from servers.evaluation.answers.rouge import multilingual_tokenize
from tests.evaluation import mlqa_reference as mlqa
from tests.evaluation.helpers import score_answers
from ultra_base.errors import InputError

SLICE = Path(__file__).resolve().parents[2] / "data" / "multilingual" / "xquad_slice.jsonl"
RECORDS = [json.loads(line) for line in SLICE.read_text(encoding="utf-8").splitlines()]
MLQA_LANGUAGES = ["zh", "ar", "de", "es", "hi", "vi", "en"]


def test_slice_holds_forty_parallel_questions_per_language() -> None:
    by_language: dict[str, list[str]] = {}
    for record in RECORDS:
        by_language.setdefault(record["language"], []).append(record["id"].rsplit("-", 1)[0])
    assert sorted(by_language) == sorted(["zh", "ar", "de", "es", "hi", "vi", "th", "en"])
    assert all(ids == by_language["en"] and len(ids) == 40 for ids in by_language.values())


@pytest.mark.parametrize("language", MLQA_LANGUAGES)
def test_em_f1_equal_mlqa_official_formulas_item_by_item(language: str) -> None:
    records = [r for r in RECORDS if r["language"] == language]
    preds = [r["pred_answer"] for r in records]
    golds = [r["golden_answers"] for r in records]
    # English: normalize mlqa is MLQA's en (the default squad keeps SQuAD's ASCII punctuation).
    got = score_answers(preds, golds, ["em", "f1"], language=language, normalize="mlqa")
    want_em = [float(mlqa.best(mlqa.exact, p, g, language)) for p, g in zip(preds, golds, strict=True)]
    want_f1 = [float(mlqa.best(mlqa.f1, p, g, language)) for p, g in zip(preds, golds, strict=True)]
    assert got["em"] == pytest.approx(want_em, abs=1e-12, rel=0)
    assert got["f1"] == pytest.approx(want_f1, abs=1e-12, rel=0)
    assert 0 < got["avg_em"] < 1 and 0 < got["avg_f1"] < 1  # the perturbations make both vary
    assert got["avg_f1"] == pytest.approx(sum(want_f1) / len(want_f1), abs=1e-12)


def test_english_default_stays_squad_and_differs_from_mlqa_only_by_unicode_punctuation() -> None:
    pred, gold = "\u201cThe Eiffel tower\u201d", "Eiffel Tower"
    assert score_answers([pred], [[gold]], ["em"])["em"] == [0.0]  # SQuAD keeps curly quotes
    assert score_answers([pred], [[gold]], ["em"], normalize="mlqa")["em"] == [1.0]


def test_chinese_example_of_the_issue_scores_f1_and_rouge1_one() -> None:
    got = score_answers(["巴黎是法国的首都"], [["法国的首都是巴黎"]], ["em", "f1", "rouge-1", "rouge-l"], language="zh")
    assert got["f1"] == [1.0] and got["rouge-1"] == [1.0] and got["em"] == [0.0]
    assert got["rouge-l"] == [0.625]  # LCS 法国的首都 = 5 of 8 characters each way
    english_rules = score_answers(["巴黎是法国的首都"], [["法国的首都是巴黎"]], ["f1", "rouge-1"])
    assert english_rules["f1"] == [0.0] and english_rules["rouge-1"] == [0.0]  # the bug the issue measured


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Python是一种编程语言 version 3.11", "python 是 一 种 编 程 语 言 version 311"),
        ("GPT-4模型在2023年发布。", "gpt4 模 型 在 2023 年 发 布"),
        ("iPhone 15 Pro的价格", "iphone 15 pro 的 价 格"),
        ("《红楼梦》by Cao Xueqin", "红 楼 梦 by cao xueqin"),
    ],
)
def test_mixed_segmentation_on_mixed_chinese_english(text: str, tokens: str) -> None:
    assert mlqa_normalize(text, "zh") == tokens == mlqa.normalise(text, "zh")


def test_japanese_and_thai_are_character_level_our_extension() -> None:
    assert mixed_segmentation("東京はtokyo", "ja") == ["東", "京", "は", "tokyo"]
    assert mlqa_normalize("กรุงเทพ มหานคร", "th") == "ก ร ุ ง เ ท พ ม ห า น ค ร"
    got = score_answers(["東京は日本の首都"], [["日本の首都は東京"]], ["f1", "rouge-1"], language="ja")
    assert got == {**got, "f1": [1.0], "rouge-1": [1.0]}


def test_articles_of_each_mlqa_language_are_removed() -> None:
    assert mlqa_normalize("Die Hauptstadt", "de") == "hauptstadt"
    assert mlqa_normalize("Los Angeles", "es") == "angeles"
    assert mlqa_normalize("الكتاب", "ar") == "كتاب"
    assert mlqa_normalize("những con mèo", "vi") == "con mèo"
    assert mlqa_normalize("The cat", "fr") == "the cat"  # no article list outside MLQA's languages


def test_rouge_keeps_every_script_and_indic_vowel_signs() -> None:
    assert multilingual_tokenize("नमस्ते दुनिया!") == ["नमस्ते", "दुनिया"]
    assert multilingual_tokenize("مرحبا، بالعالم") == ["مرحبا", "بالعالم"]
    assert multilingual_tokenize("Straße 1990年") == ["straße", "1990", "年"]
    got = score_answers(["सौर ऊर्जा"], [["ऊर्जा"]], ["rouge-1"], language="hi")
    assert got["rouge-1"] == [pytest.approx(2 * 0.5 * 1 / 1.5)]


def test_bleu_uses_sacrebleus_chinese_tokenizer_and_names_it() -> None:
    sacrebleu = pytest.importorskip("sacrebleu")
    pred, gold = "巴黎是法国的首都", "法国的首都是巴黎"
    got = score_answers([pred], [[gold]], ["bleu"], language="zh")
    assert "tok:zh" in got["bleu_signature"]
    assert got["bleu"] == [sacrebleu.sentence_bleu(pred, [gold], tokenize="zh").score / 100]
    assert "tok:13a" in score_answers([pred], [[gold]], ["bleu"])["bleu_signature"]


def test_meteor_refuses_other_languages() -> None:
    with pytest.raises(InputError, match="meteor is English only.*zh"):
        score_answers(["巴黎"], [["巴黎"]], ["meteor"], language="zh")


def test_unknown_language_lists_the_codes() -> None:
    with pytest.raises(InputError, match="unknown language 'cn'.*'auto'"):
        score_answers(["a"], [["a"]], ["em"], language="cn")


def test_detection_on_the_slice_questions_is_at_least_095() -> None:
    pytest.importorskip("lingua")
    from ultra_kit.languages import detect_languages

    found = detect_languages([r["question"] for r in RECORDS])
    accuracy = sum(lang == r["language"] for lang, r in zip(found, RECORDS, strict=True)) / len(RECORDS)
    print(f"lingua on {len(RECORDS)} XQuAD questions in 8 languages: accuracy {accuracy:.4f}")
    assert accuracy >= 0.95


def test_auto_detects_per_item_reports_languages_and_scores_as_the_true_language() -> None:
    pytest.importorskip("lingua")
    records = [r for r in RECORDS if r["language"] in ("zh", "ar", "de")][::4]
    preds, golds = [r["pred_answer"] for r in records], [r["golden_answers"] for r in records]
    questions = [r["question"] for r in records]
    got = score_answers(preds, golds, ["em", "f1"], language="auto", questions=questions)
    assert got["language_ls"] == [r["language"] for r in records]
    assert got["languages"] == {"zh": 10, "ar": 10, "de": 10}
    for language in ("zh", "ar", "de"):
        index = [i for i, r in enumerate(records) if r["language"] == language]
        alone = score_answers([preds[i] for i in index], [golds[i] for i in index], ["f1"], language=language)
        assert [got["f1"][i] for i in index] == alone["f1"]
    numbers = score_answers(["1998"], [["1998"]], ["em"], language="auto")
    assert numbers["language_ls"] == ["und"] and numbers["em"] == [1.0]


def test_auto_with_mixed_languages_pretokenises_bleu_and_names_both_tokenizers() -> None:
    pytest.importorskip("lingua")
    sacrebleu = pytest.importorskip("sacrebleu")
    preds, golds = ["巴黎是法国的首都", "Berlin is the capital"], [["法国的首都是巴黎"], ["the capital is Berlin"]]
    got = score_answers(preds, golds, ["bleu"], language="auto")
    assert got["language_ls"] == ["zh", "en"] and "tok:zh+13a" in got["bleu_signature"]
    assert got["bleu"][0] == pytest.approx(sacrebleu.sentence_bleu(preds[0], golds[0], tokenize="zh").score / 100)
    assert got["bleu"][1] == pytest.approx(sacrebleu.sentence_bleu(preds[1], golds[1]).score / 100)


def test_answer_language_flags_english_answers_to_other_languages_questions() -> None:
    pytest.importorskip("lingua")
    english = {r["id"].rsplit("-", 1)[0]: r["question"] for r in RECORDS if r["language"] == "en"}
    others = [r for r in RECORDS if r["language"] != "en"]
    questions = [r["question"] for r in others]
    no_gold: list[list[str]] = [[] for _ in others]
    # Answering each question with itself: in its language; with its English twin: not.
    own = score_answers(questions, no_gold, ["answer_language"], language="auto", questions=questions)
    switched = [english[r["id"].rsplit("-", 1)[0]] for r in others]
    swapped = score_answers(switched, no_gold, ["answer_language"], language="auto", questions=questions)
    flagged = 1 - swapped["avg_answer_language"]
    print(f"answer_language: {flagged:.3f} of English answers flagged, {1 - own['avg_answer_language']:.3f} false")
    assert own["avg_answer_language"] >= 0.98 and flagged >= 0.8
    assert swapped["answer_language_ls"].count("en") >= 0.9 * len(others)
    other_script = [
        v for v, r in zip(swapped["answer_language"], others, strict=True) if r["language"] in "zh ar hi th"
    ]
    assert sum(other_script) / len(other_script) <= 0.05  # non-Latin languages: nearly every switch is caught
    fixed = score_answers(
        ["巴黎是法国的首都", "Paris is the capital of France."], [[], []], ["answer_language"], language="zh"
    )
    assert fixed["answer_language"] == [1.0, 0.0]


def test_japanese_bleu_uses_mecab_when_installed_and_names_it() -> None:
    pytest.importorskip("sacrebleu")
    from servers.evaluation.answers.bleu import bleu_tokenizer, mecab_installed

    got = score_answers(["東京は日本の首都です"], [["日本の首都は東京です"]], ["bleu"], language="ja")
    expected = "ja-mecab" if mecab_installed() else "char"
    assert bleu_tokenizer("ja") == expected and f"tok:{expected}" in got["bleu_signature"]
    assert "tok:char" in score_answers(["กรุงเทพ"], [["กรุงเทพ"]], ["bleu"], language="th")["bleu_signature"]


def test_ultrarag_style_outside_english_replaces_punctuation_by_a_space() -> None:
    got = score_answers(["北京,上海"], [["北京 上海"]], ["em"], language="zh", normalize="ultrarag")
    assert got["em"] == [1.0]
    assert score_answers(["True"], [["yes"]], ["em"], language="de", normalize="ultrarag")["em"] == [1.0]


@pytest.mark.anyio
async def test_the_tool_takes_language_and_records_it(tmp_path) -> None:
    from mcp import Client

    from servers.evaluation.server import SPEC

    arguments = {"pred_ls": ["巴黎是法国的首都"], "gt_ls": [["法国的首都是巴黎"]], "metrics": ["f1", "rouge-1"]}
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("evaluate", {**arguments, "language": "zh", "save_path": str(tmp_path)})
        refused = await client.call_tool("evaluate", {**arguments, "language": "xx", "save_path": str(tmp_path)})
    data = result.structured_content
    assert data["eval_res"]["f1"] == [1.0] and data["eval_res"]["rouge-1"] == [1.0]
    assert data["settings"]["language"] == "zh"
    assert json.loads(Path(data["result_path"]).read_text(encoding="utf-8"))["settings"]["language"] == "zh"
    assert refused.is_error and "unknown language 'xx'" in refused.content[0].text
