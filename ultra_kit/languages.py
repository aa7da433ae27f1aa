"""Languages shared by the servers: ISO 639-1 codes and names, and an offline language detector.

The codes are those lingua (``lingua-language-detector``, Apache-2.0, the ``languages`` extra) detects;
lingua ships its models in its wheel, so nothing is downloaded. It is imported on first use only: the
first detection loads the models of the candidate languages (about 1 GB of memory for all 75, and
seconds to tens of seconds), later ones are fast. Short texts (a name, a number) are often
undetermined or confused with a close language (Hindi and Marathi, Spanish and Galician-like
neighbours); full sentences are detected reliably (see docs/metrics.md, Languages).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

from ultra_base.errors import InputError, require

AUTO = "auto"
UNDETERMINED = "und"  # ISO 639-2 "undetermined": no language could be detected (digits only, say)

# ISO 639-1 code -> English name, for every language lingua detects (tests check this against lingua).
NAMES: dict[str, str] = {
    "af": "Afrikaans", "ar": "Arabic", "az": "Azerbaijani", "be": "Belarusian", "bg": "Bulgarian", "bn": "Bengali",
    "bs": "Bosnian", "ca": "Catalan", "cs": "Czech", "cy": "Welsh", "da": "Danish", "de": "German", "el": "Greek",
    "en": "English", "eo": "Esperanto", "es": "Spanish", "et": "Estonian", "eu": "Basque", "fa": "Persian",
    "fi": "Finnish", "fr": "French", "ga": "Irish", "gu": "Gujarati", "he": "Hebrew", "hi": "Hindi",
    "hr": "Croatian", "hu": "Hungarian", "hy": "Armenian", "id": "Indonesian", "is": "Icelandic", "it": "Italian",
    "ja": "Japanese", "ka": "Georgian", "kk": "Kazakh", "ko": "Korean", "la": "Latin", "lg": "Ganda",
    "lt": "Lithuanian", "lv": "Latvian", "mi": "Maori", "mk": "Macedonian", "mn": "Mongolian", "mr": "Marathi",
    "ms": "Malay", "nb": "Bokmal", "nl": "Dutch", "nn": "Nynorsk", "pa": "Punjabi", "pl": "Polish",
    "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak", "sl": "Slovene", "sn": "Shona",
    "so": "Somali", "sq": "Albanian", "sr": "Serbian", "st": "Sotho", "sv": "Swedish", "sw": "Swahili",
    "ta": "Tamil", "te": "Telugu", "th": "Thai", "tl": "Tagalog", "tn": "Tswana", "tr": "Turkish", "ts": "Tsonga",
    "uk": "Ukrainian", "ur": "Urdu", "vi": "Vietnamese", "xh": "Xhosa", "yo": "Yoruba", "zh": "Chinese",
    "zu": "Zulu",
}  # fmt: skip

# The scripts (first word of a letter's Unicode name) a language is written in; LATIN when not listed.
SCRIPTS: dict[str, tuple[str, ...]] = {
    "zh": ("CJK",), "ja": ("CJK", "HIRAGANA", "KATAKANA"), "ko": ("HANGUL", "CJK"), "th": ("THAI",),
    "ar": ("ARABIC",), "fa": ("ARABIC",), "ur": ("ARABIC",), "he": ("HEBREW",), "el": ("GREEK",),
    "hi": ("DEVANAGARI",), "mr": ("DEVANAGARI",), "bn": ("BENGALI",), "gu": ("GUJARATI",), "pa": ("GURMUKHI",),
    "ta": ("TAMIL",), "te": ("TELUGU",), "ka": ("GEORGIAN",), "hy": ("ARMENIAN",),
    "ru": ("CYRILLIC",), "uk": ("CYRILLIC",), "bg": ("CYRILLIC",), "be": ("CYRILLIC",), "mk": ("CYRILLIC",),
    "sr": ("CYRILLIC", "LATIN"), "kk": ("CYRILLIC",), "mn": ("CYRILLIC",),
}  # fmt: skip


def check_language(language: Any, *, setting: str = "language", allow_auto: bool = True) -> str:
    """``language`` lower-cased if it is a known ISO 639-1 code (or ``auto``); else an error listing them."""
    code = str(language).strip().lower()
    if code in NAMES or (allow_auto and code == AUTO):
        return code
    also = " or 'auto' (detect each item's language)" if allow_auto else ""
    raise InputError(f"unknown {setting} {language!r}: give an ISO 639-1 code ({', '.join(NAMES)}){also}")


def language_name(code: str) -> str:
    """The English name of a language code (``Chinese`` for ``zh``); the code itself if unknown."""
    return NAMES.get(code, code)


@lru_cache(maxsize=8192)
def _letter_script(char: str) -> str | None:
    if not char.isalpha():
        return None
    return unicodedata.name(char, "UNKNOWN").split()[0]


def in_language_script(text: str, language: str) -> bool | None:
    """Whether some letter of ``text`` is in a script of ``language``; None when ``text`` has no letter."""
    scripts = {_letter_script(char) for char in text} - {None}
    if not scripts:
        return None
    return bool(scripts & set(SCRIPTS.get(language, ("LATIN",))))


def script_warning(texts: list[str], language: str, *, setting: str = "language") -> str | None:
    """A warning when most texts (of those with letters) have no letter in ``language``'s script: they are
    scored by that language's rules (a Chinese answer under English word matching scores 0). None else."""
    if language == AUTO:
        return None
    found = [in_language_script(text, language) for text in texts if isinstance(text, str)]
    judged = [flag for flag in found if flag is not None]
    other = judged.count(False)
    if not judged or other * 2 <= len(judged):
        return None
    scripts = "/".join(SCRIPTS.get(language, ("LATIN",))).lower()
    return (
        f"{other} of {len(judged)} texts have no letter in {language_name(language)}'s script ({scripts}), yet "
        f"{setting} is {language!r}: they are scored by its rules; set {setting} to their language, or 'auto'"
    )


_DETECTOR = None


def detector() -> Any:
    """The process-wide lingua detector over all its languages (built on first use; extra ``languages``)."""
    global _DETECTOR
    if _DETECTOR is None:
        lingua = require("lingua", extra="languages")
        _DETECTOR = lingua.LanguageDetectorBuilder.from_all_languages().build()
    return _DETECTOR


def detect_languages(texts: list[str]) -> list[str | None]:
    """The ISO 639-1 code of each text's language, or None when lingua cannot tell (no letters, say)."""
    found = detector().detect_languages_in_parallel_of(list(texts)) if texts else []
    return [None if lang is None else lang.iso_code_639_1.name.lower() for lang in found]


def detect_with_confidence(texts: list[str]) -> list[tuple[str | None, float]]:
    """Each text's most likely language (None when lingua cannot tell) and its confidence in [0, 1]."""
    values = detector().compute_language_confidence_values_in_parallel(list(texts)) if texts else []
    return [(v[0].language.iso_code_639_1.name.lower(), v[0].value) if v else (None, 0.0) for v in values]


def other_language(texts: list[str], expected: list[str], min_confidence: float) -> tuple[list[bool], list[str]]:
    """Per text, whether it is not in its expected language, and the language detected (``und`` if none).

    Not in it: no letter of the language's script (a Chinese question answered in Latin letters only),
    or detected as another language with at least ``min_confidence``. A text without letters, too
    short to tell, or expected ``und``, is never flagged.
    """
    found = detect_with_confidence(list(texts))
    flags = []
    for text, (lang, confidence), want in zip(texts, found, expected, strict=True):
        other_script = want != UNDETERMINED and in_language_script(text, want) is False
        confident = lang is not None and want != UNDETERMINED and lang != want and confidence >= min_confidence
        flags.append(other_script or confident)
    return flags, [lang or UNDETERMINED for lang, _ in found]


def append_to_system(messages: list[dict[str, str]], line: str) -> list[dict[str, str]]:
    """Chat ``messages`` with ``line`` appended to the system message (or a system message put first)."""
    if messages and messages[0]["role"] == "system":
        return [{**messages[0], "content": f"{messages[0]['content']}\n\n{line}"}, *messages[1:]]
    return [{"role": "system", "content": line}, *messages]
