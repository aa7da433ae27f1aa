"""METEOR through NLTK with WordNet data found locally; skipped (not faked) where WordNet is absent."""

from __future__ import annotations

import pytest

from servers.evaluation.answers import meteor
from tests.evaluation.helpers import SETTINGS, score_answers
from tests.support.extras import requires
from ultra_base.errors import InputError

pytestmark = requires("nltk")
needs_wordnet = pytest.mark.skipif(
    not meteor.wordnet_available(SETTINGS["wordnet_path"]),
    reason="WordNet data absent: apt-get install wordnet-base wordnet-sense-index (or nltk.download('wordnet'))",
)


@needs_wordnet
def test_meteor_equals_nltk_meteor_on_normalised_tokens() -> None:
    from nltk.translate.meteor_score import meteor_score

    wordnet = meteor.load_wordnet(SETTINGS["wordnet_path"])
    preds = ["The automobile is parked outside.", "He runs quickly", "completely unrelated words"]
    golds = [["The car is parked outside"], ["he was running fast", "He ran quickly"], ["a cat"]]
    result = score_answers(preds, golds, ["meteor"])
    for i, (pred, refs) in enumerate(zip(preds, golds, strict=False)):
        expected = meteor_score(
            [r.lower().replace(".", "").replace("the ", "").split() for r in refs],
            pred.lower().replace(".", "").replace("the ", "").split(),
            wordnet=wordnet,
        )
        assert result["meteor"][i] == pytest.approx(expected, abs=1e-12)


@needs_wordnet
def test_wordnet_synonyms_count_as_matches() -> None:
    wordnet = meteor.load_wordnet(SETTINGS["wordnet_path"])
    # NLTK matches synonyms after stemming both sides, so use words that are their own Porter stems.
    assert "car" in {lemma for synset in wordnet.synsets("auto") for lemma in synset.lemma_names()}
    with_synonym = score_answers(["auto parked outside"], ["car parked outside"], ["meteor"])["meteor"][0]
    with_other = score_answers(["elephant parked outside"], ["car parked outside"], ["meteor"])["meteor"][0]
    assert with_synonym > with_other


@needs_wordnet
def test_debian_wordnet_directory_is_readable_by_nltk() -> None:
    if not meteor.has_wordnet_files(meteor.DEBIAN_WORDNET):
        pytest.skip("Debian's /usr/share/wordnet is absent")
    reader = meteor.load_wordnet(meteor.DEBIAN_WORDNET)
    assert reader.get_version() == "3.0"
    assert reader.synsets("dog")[0].lexname() == "noun.animal"  # needs the supplied lexnames


def test_missing_wordnet_says_how_to_provide_it(tmp_path) -> None:
    with pytest.raises(InputError, match="wordnet-base wordnet-sense-index"):
        meteor.load_wordnet(str(tmp_path))


def test_missing_wordnet_everywhere_is_a_clear_error(monkeypatch, tmp_path) -> None:
    import nltk

    def not_found(resource: str, *args, **kwargs):
        raise LookupError(resource)

    monkeypatch.setattr(nltk.data, "find", not_found)
    monkeypatch.setattr(meteor, "DEBIAN_WORDNET", str(tmp_path))
    with pytest.raises(InputError, match="apt-get install wordnet-base wordnet-sense-index"):
        score_answers(["a"], ["a"], ["meteor"])


def test_lexnames_text_is_wordnets_list() -> None:
    lines = meteor.LEXNAMES_TEXT.splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1" and lines[44] == "44\tadj.ppl\t3"
    assert lines[29] == "29\tverb.body\t2"
