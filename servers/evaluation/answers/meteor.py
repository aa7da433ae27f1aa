"""METEOR through NLTK (the ``meteor`` extra), with the WordNet data found locally, never downloaded.

NLTK's METEOR matches words exactly, by Porter stem and by WordNet synonym, so it needs the
WordNet 3.0 database. It is looked for, in order:

1. ``wordnet_path`` when given: a directory holding WordNet's ``index.*``/``data.*`` files;
2. NLTK's own data (``corpora/wordnet`` under any ``nltk.data.path`` entry or ``$NLTK_DATA``);
3. ``/usr/share/wordnet``, where Debian's ``wordnet-base`` and ``wordnet-sense-index`` put it.

Debian's copy lacks the small ``lexnames`` file NLTK's reader opens; it is WordNet's fixed list of
45 lexicographer file names (``man 5 lexnames``), supplied here from memory.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, readable_path, require

DEBIAN_WORDNET = "/usr/share/wordnet"
_REQUIRED_FILES = ("index.noun", "data.noun", "index.verb", "data.verb", "noun.exc", "verb.exc")

_LEXNAMES = [
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling",
    "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object", "noun.person",
    "noun.phenomenon", "noun.plant", "noun.possession", "noun.process", "noun.quantity", "noun.relation",
    "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body", "verb.change", "verb.cognition",
    "verb.communication", "verb.competition", "verb.consumption", "verb.contact", "verb.creation",
    "verb.emotion", "verb.motion", "verb.perception", "verb.possession", "verb.social", "verb.stative",
    "verb.weather", "adj.ppl",
]  # fmt: skip
_CATEGORY = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
LEXNAMES_TEXT = "".join(
    f"{index:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for index, name in enumerate(_LEXNAMES)
)

MISSING_WORDNET = (
    "METEOR needs the WordNet 3.0 database, which was not found. Provide it in one of these ways: "
    "(1) on Debian/Ubuntu: apt-get install wordnet-base wordnet-sense-index (installs /usr/share/wordnet); "
    "(2) python -m nltk.downloader wordnet (needs network access); "
    "(3) set the evaluation setting wordnet_path to a directory holding WordNet's index.* and data.* files."
)


def has_wordnet_files(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` holds the WordNet database files METEOR needs."""
    return all((Path(directory) / name).is_file() for name in _REQUIRED_FILES)


@lru_cache(maxsize=4)
def _directory_reader(directory: str) -> Any:
    """An NLTK WordNet reader over a plain WordNet directory (supplying ``lexnames`` if absent).

    Loading takes seconds (NLTK indexes every lemma), so one reader per directory is kept.
    """
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class DirectoryWordNetReader(WordNetCorpusReader):
        def open(self, file: str) -> Any:
            if file == "lexnames" and not (Path(directory) / "lexnames").is_file():
                return io.StringIO(LEXNAMES_TEXT)
            return super().open(file)

        def map_wn(self, version: str = "wordnet") -> None:
            # The synset mapping serves only multilingual (OMW) look-ups, and it would load NLTK's
            # own "wordnet" corpus, which is what is missing here. Debian ships WordNet 3.0 itself.
            return None

    # NLTK only reads corpora under its data roots (nltk.pathsec); register this one.
    if directory not in nltk.data.path:
        nltk.data.path.append(directory)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available": not used here
        return DirectoryWordNetReader(directory, None)


def load_wordnet(wordnet_path: str) -> Any:
    """An NLTK WordNet reader from ``wordnet_path``, NLTK's data or Debian's; InputError if none."""
    require("nltk", extra="meteor")
    if wordnet_path:
        directory = str(readable_path(wordnet_path, setting="wordnet_path").resolve())
        if not has_wordnet_files(directory):
            raise InputError(f"wordnet_path {wordnet_path!r} holds no WordNet database files. {MISSING_WORDNET}")
        return _directory_reader(directory)
    import nltk

    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        if has_wordnet_files(DEBIAN_WORDNET):
            return _directory_reader(DEBIAN_WORDNET)
        raise InputError(MISSING_WORDNET) from None
    from nltk.corpus import wordnet

    wordnet.ensure_loaded()
    return wordnet


def wordnet_available(wordnet_path: str) -> bool:
    """Whether METEOR can run here (NLTK installed and WordNet data found)."""
    try:
        load_wordnet(wordnet_path)
    except InputError:
        return False
    return True


def english_only(languages: Sequence[str]) -> None:
    """METEOR matches English stems and WordNet synonyms: refuse items in any other language."""
    others = sorted({lang for lang in languages if lang not in ("en", "und")})
    if others:
        raise InputError(
            f"meteor is English only (Porter stems and WordNet synonyms), but the items are in: {', '.join(others)}; "
            "drop meteor from metrics, or use bleu, rouge-l or f1 for these languages"
        )


def meteor_scores(
    predictions: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]], *, wordnet_path: str
) -> list[float]:
    """NLTK ``meteor_score`` (default alpha 0.9, beta 3, gamma 0.5; max over references) per item.

    Predictions and references are given as token lists (the caller decides the tokenisation).
    """
    wordnet = load_wordnet(wordnet_path)
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import meteor_score

    stemmer = PorterStemmer()
    return [
        float(meteor_score([list(r) for r in refs], list(pred), stemmer=stemmer, wordnet=wordnet))
        for pred, refs in zip(predictions, references, strict=True)
    ]
