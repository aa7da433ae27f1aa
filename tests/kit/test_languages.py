"""The shared language table and detector (``ultra_kit.languages``)."""

from __future__ import annotations

import pytest

from ultra_base.errors import InputError
from ultra_kit.languages import NAMES, check_language, in_language_script, language_name


def test_names_are_linguas_languages() -> None:
    lingua = pytest.importorskip("lingua")
    assert {lang.iso_code_639_1.name.lower(): lang.name.title() for lang in lingua.Language.all()} == NAMES


def test_check_language_accepts_codes_and_auto_and_lists_them_otherwise() -> None:
    assert check_language(" ZH ") == "zh" and check_language("auto") == "auto" and language_name("ar") == "Arabic"
    with pytest.raises(InputError, match="unknown language 'cn'.*zh.*'auto'"):
        check_language("cn")
    with pytest.raises(InputError, match="unknown language 'auto'") as error:
        check_language("auto", allow_auto=False)
    assert "'auto'" not in str(error.value).split(":", 1)[1]


def test_script_check_looks_at_letters_only() -> None:
    assert in_language_script("巴黎 Paris", "zh") is True
    assert in_language_script("Paris is the capital", "zh") is False
    assert in_language_script("1998, 42%", "ar") is None
    assert in_language_script("مرحبا", "ar") is True and in_language_script("Hallo", "de") is True
