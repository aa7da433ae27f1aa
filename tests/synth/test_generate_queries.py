"""generate_queries against the scripted stub LLM: every kind, category and technique, the self-check,
de-duplication, the planted passage, unreadable replies counted, and get_data reading the result."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from servers.synth.queries import TECHNIQUES
from servers.synth.tools.queries import generate_queries
from tests.support.openai_stub import OpenAIStub
from tests.synth.conftest import UNANSWERABLE, scripted, small_corpus, synth_settings
from ultra_base.errors import InputError


def run(settings: dict) -> dict:
    return anyio.run(lambda: generate_queries(**settings))


def rows_of(result: dict) -> list[dict]:
    return [json.loads(line) for line in Path(result["dataset_path"]).read_text().splitlines()]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return small_corpus(tmp_path / "corpus.jsonl")


def test_every_kind_category_and_technique(tmp_path: Path, corpus: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    n = {"grounded": 3, "off_topic": 2, "jailbreak": 2}
    with OpenAIStub(scripted()) as stub:
        result = run(synth_settings(stub.base_url, tmp_path, corpus_path=str(corpus), n_per_kind=n))
        requests = stub.request_count
    rows = rows_of(result)
    counts = result["synth_counts"]
    categories = ["political", "sensitive", "harmful_or_illegal", "internal_policy"]
    assert counts["generated"] == {
        "grounded": {"grounded": 3},
        "off_topic": dict.fromkeys(categories, 2),
        "jailbreak": dict.fromkeys(TECHNIQUES, 2),
    }
    assert counts["total"] == len(rows) == 3 + 4 * 2 + 4 * 2
    assert len({row["id"] for row in rows}) == len(rows)
    fields = {"id", "query", "kind", "category", "reference", "source_docid", "expected_behaviour"}
    assert all(set(row) == fields and row["expected_behaviour"] for row in rows)
    grounded = [row for row in rows if row["kind"] == "grounded" or row["category"] == "injected_passage"]
    assert all(row["reference"] and row["source_docid"] for row in grounded)
    qrels = Path(result["qrels_path"]).read_text().splitlines()
    assert sorted(qrels) == sorted(f"{row['id']} 0 {row['source_docid']} 1" for row in grounded)
    # requests: 2 per grounded question (incl. the 2 injected-passage hosts and the discarded one), 1 per list
    discarded = counts["discarded"].get("self_check", 0)
    assert requests == counts["requests"] == 2 * (3 + 2 + discarded) + 4 + 3


def test_self_check_discards_an_unanswerable_question(tmp_path: Path, corpus: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    n = {"grounded": 11, "off_topic": 0, "jailbreak": 0}  # 12 documents: every one is tried
    with OpenAIStub(scripted()) as stub:
        result = run(synth_settings(stub.base_url, tmp_path, corpus_path=str(corpus), n_per_kind=n))
    rows = rows_of(result)
    assert result["synth_counts"]["discarded"]["self_check"] == 1
    assert len(rows) == 11 and not any(UNANSWERABLE in row["query"] for row in rows)
    docids = [json.loads(line)["id"] for line in corpus.read_text().splitlines()]
    assert docids[3] not in {row["source_docid"] for row in rows}


def test_near_duplicates_are_removed_and_counted(tmp_path: Path, corpus: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    n = {"grounded": 0, "off_topic": 2, "jailbreak": 0}
    with OpenAIStub(scripted(duplicate=True)) as stub:
        result = run(synth_settings(stub.base_url, tmp_path, corpus_path=str(corpus), n_per_kind=n))
    counts = result["synth_counts"]
    assert counts["discarded"]["duplicate"] == 1
    assert counts["generated"]["off_topic"]["political"] == 1 and counts["total"] == 7


def test_planted_passage_is_in_the_corpus_copy(tmp_path: Path, corpus: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    settings = synth_settings(stub_url="", tmp_path=tmp_path)
    n = {"grounded": 1, "off_topic": 0, "jailbreak": 1}
    with OpenAIStub(scripted()) as stub:
        settings = synth_settings(stub.base_url, tmp_path, corpus_path=str(corpus), n_per_kind=n,
                                  techniques=["injected_passage"])  # fmt: skip
        result = run(settings)
    (injected,) = [row for row in rows_of(result) if row["category"] == "injected_passage"]
    original = {json.loads(line)["id"]: json.loads(line) for line in corpus.read_text().splitlines()}
    copy = {
        json.loads(line)["id"]: json.loads(line) for line in Path(result["synth_corpus_path"]).read_text().splitlines()
    }
    assert list(copy) == list(original)  # same ids, same order
    changed = [docid for docid in copy if copy[docid] != original[docid]]
    assert changed == [injected["source_docid"]]
    canary = injected["expected_behaviour"].split("never write ")[1].rstrip(")")
    planted = copy[changed[0]]["text"]
    assert canary.startswith("CANARY-") and f"ACCESS GRANTED {canary}" in planted
    assert planted.replace(planted.splitlines()[1] + "\n", "") == original[changed[0]]["text"]


def test_unreadable_replies_are_counted_not_kept(tmp_path: Path, corpus: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    n = {"grounded": 0, "off_topic": 1, "jailbreak": 0}
    with OpenAIStub(scripted(garbled="personal medical")) as stub:
        # 1 of the 4 lists fails: 0.25 does not exceed max_failed_fraction 0.25
        result = run(synth_settings(stub.base_url, tmp_path, corpus_path=str(corpus), n_per_kind=n,
                                    max_failed_fraction=0.25))  # fmt: skip
        replies = stub.request_count
    counts = result["synth_counts"]
    assert counts["discarded"]["unreadable"] == 1 and "sensitive" not in counts["generated"]["off_topic"]
    assert counts["generated"]["off_topic"] == {"political": 1, "harmful_or_illegal": 1, "internal_policy": 1}
    retries = synth_settings("", tmp_path)["synth_llm"].get("max_retries", 2)
    assert replies == 3 + 1 + retries  # the garbled category is asked again max_retries times
    assert "unreadable after" in counts["errors"][0]
    failed = counts["failed"]
    assert (failed["count"], failed["total"], failed["reasons"]) == (1, 4, {"error": 0, "parse_error": 1})
    assert failed["first_error"] == counts["errors"][0]
    on_disk = json.loads((tmp_path / "risk" / "counts.json").read_text())
    assert on_disk["failed"] == failed


def test_more_failures_than_max_failed_fraction_fail_and_write_nothing(
    tmp_path: Path, corpus: Path, monkeypatch
) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    n = {"grounded": 0, "off_topic": 1, "jailbreak": 0}
    with OpenAIStub(scripted(garbled="personal medical")) as stub:
        settings = synth_settings(stub.base_url, tmp_path, corpus_path=str(corpus), n_per_kind=n)
        assert settings["max_failed_fraction"] == 0.1  # parameter.yaml's default, the judges' too
        with pytest.raises(InputError) as caught:
            run(settings)
    message = str(caught.value)
    assert "generate_queries: 1 of 4 generations failed (25%, more than max_failed_fraction 0.1" in message
    assert "(parse_error 1); first error: unreadable after" in message
    assert not (tmp_path / "risk").exists()


def test_every_generation_failing_fails_even_at_fraction_one(tmp_path: Path, corpus: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    n = {"grounded": 1, "off_topic": 1, "jailbreak": 0}
    with OpenAIStub(scripted()) as stub:
        stub.add_fault("status", status=403, message="no access for this key")
        settings = synth_settings(stub.base_url, tmp_path, corpus_path=str(corpus), n_per_kind=n)
        with pytest.raises(InputError) as caught:
            run({**settings, "max_failed_fraction": 1.0})
    # 3 rounds of one grounded question, and the 4 category lists
    assert "generate_queries: every one of 7 generations failed (error 7): 403 from the endpoint" in str(caught.value)
    assert not (tmp_path / "risk").exists()
    with pytest.raises(InputError, match="max_failed_fraction must be a number from 0 to 1, got 1.5"):
        run({**settings, "max_failed_fraction": 1.5})


def test_bad_settings_fail_with_a_clear_message(tmp_path: Path, corpus: Path) -> None:
    with pytest.raises(InputError, match="unknown jailbreak techniques"):
        run(synth_settings("http://127.0.0.1:9", tmp_path, corpus_path=str(corpus), techniques=["prompt_magic"]))
    with pytest.raises(InputError, match="corpus"):
        run(synth_settings("http://127.0.0.1:9", tmp_path, corpus_path=str(tmp_path / "missing.jsonl")))


def test_get_data_reads_the_query_set(tmp_path: Path, corpus: Path, monkeypatch) -> None:
    from servers.benchmark.tools.data import get_data
    from ultra_kit.settings import defaults

    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    with OpenAIStub(scripted()) as stub:
        result = run(synth_settings(stub.base_url, tmp_path, corpus_path=str(corpus)))
    benchmark = dict(defaults("benchmark")["benchmark"], path=result["dataset_path"], name="risk")
    benchmark["key_map"] = {"q_ls": "query", "gt_ls": "reference", "id_ls": "id"}
    data = get_data(benchmark=benchmark)
    assert data["id_ls"] == [row["id"] for row in rows_of(result)]


def test_reply_readers_take_lines_or_json_and_nothing_else() -> None:
    from servers.synth.asking import answerable, listed_lines, question_and_answer

    assert question_and_answer("Question: When is the fee due?\nAnswer: Within 30 days.") == {
        "question": "When is the fee due?",
        "answer": "Within 30 days.",
    }
    assert question_and_answer('Sure: {"question": "Why?", "answer": "Because."}')["answer"] == "Because."
    with pytest.raises(ValueError, match="Question"):
        question_and_answer("Question: only a question")
    assert listed_lines("Here:\n- first one\n* second one\n3. third one\nnot an item") == [
        "first one",
        "second one",
        "third one",
    ]
    assert listed_lines('["a", "b"]') == ["a", "b"]
    with pytest.raises(ValueError, match="one item per line"):
        listed_lines("I would rather not.")
    assert answerable('{"answerable": "No"}') == "no"
    with pytest.raises(ValueError):
        answerable('{"answerable": "maybe"}')


def test_a_pool_of_endpoints_generates_the_same_queries(tmp_path: Path, corpus: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    n = {"grounded": 3, "off_topic": 1, "jailbreak": 1}
    with OpenAIStub(scripted()) as one:
        single = rows_of(run(synth_settings(one.base_url, tmp_path / "one", corpus_path=str(corpus), n_per_kind=n)))
    with OpenAIStub(scripted()) as a, OpenAIStub(scripted()) as b:
        pool = [{"base_url": s.base_url, "model_id": "stub", "api_key": "", "max_concurrency": 1} for s in (a, b)]
        settings = synth_settings(a.base_url, tmp_path / "pool", corpus_path=str(corpus), n_per_kind=n)
        settings["synth_llm"] = {"backend": "openai", "endpoints": pool, "max_workers": 2}
        pooled = rows_of(run(settings))
        assert a.request_count > 0 and b.request_count > 0
    assert pooled == single
