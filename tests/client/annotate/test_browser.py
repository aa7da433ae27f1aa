"""The labelling page in a real headless Chromium (Debian's, over the DevTools pipe): keys label, undo, move back
and relabel, a reload resumes, the judge's verdict shows only when asked for, a hostile answer runs nothing, and
two annotators at once over one store label each drawn item once.
The SQLite rows are checked after each step. ``ULTRA_ANNOTATE_SCREENSHOT=PATH`` saves the docs' screenshot."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from tests.client.annotate.serving import HOSTILE, annotate_server, write_dataset
from tests.support.chromium import Browser, chromium_missing

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

SHOWN = "document.getElementById('where').textContent"


def current(store: Path) -> list[tuple]:
    """Per item the latest action not undone (a relabel supersedes the earlier label), in the order given."""
    with sqlite3.connect(store) as db:
        actions = db.execute("SELECT key, kind, value, comment FROM labels WHERE undone = 0 ORDER BY id").fetchall()
    latest = {row[0]: row for row in actions}
    return sorted(latest.values(), key=actions.index)


def test_keyboard_labelling_in_chromium(tmp_path) -> None:
    data = write_dataset(tmp_path, n=6)
    store = tmp_path / "output" / "labels.sqlite"
    args = (str(data), "--scale", "binary", "--annotator", "kb", "--select", "uniform", "--seed", "1")
    with annotate_server(tmp_path, *args) as (base, _), Browser() as browser:
        tab = browser.visit(base + "/")
        browser.wait_until(tab, "document.body.dataset.ready === '1'")
        first = browser.evaluate(tab, SHOWN).strip("()")
        assert browser.evaluate(tab, "document.getElementById('judge').hidden") is True
        browser.press(tab, "1")
        browser.wait_until(tab, f"{SHOWN} !== '({first})'")
        assert current(store) == [(first, "label", 1.0, None)]
        second = browser.evaluate(tab, SHOWN).strip("()")
        browser.press(tab, "0")
        browser.wait_until(tab, f"{SHOWN} !== '({second})'")
        browser.press(tab, "u")  # undo the 0 on the second item: it comes back
        browser.wait_until(tab, f"{SHOWN} === '({second})'")
        assert current(store) == [(first, "label", 1.0, None)]
        browser.press(tab, "k")  # back to the first item, relabel it 0
        browser.wait_until(tab, f"{SHOWN} === '({first})'")
        assert "your label: 1" in browser.evaluate(tab, "document.getElementById('status').textContent")
        browser.press(tab, "0")
        browser.wait_until(tab, f"{SHOWN} !== '({first})'")
        assert current(store) == [(first, "label", 0.0, None)]
        skipped = browser.evaluate(tab, SHOWN)
        browser.press(tab, "s")  # skip; the count may change before the next item is shown: wait for both
        browser.wait_until(tab, "document.getElementById('count').textContent.includes('skipped 1')")
        browser.wait_until(tab, f"{SHOWN} !== {skipped!r}")
        shown = browser.evaluate(tab, SHOWN).strip("()")
        browser.press(tab, "f")
        browser.wait_until(tab, "document.activeElement.id === 'comment'")
        browser.evaluate(tab, "document.getElementById('comment').value = 'answer cut off'")
        browser.press(tab, "Enter")
        browser.wait_until(tab, "document.getElementById('count').textContent.includes('flagged 1')")
        assert current(store)[-1] == (shown, "flag", None, "answer cut off")
        browser.press(tab, "v")  # the judge's verdict, on demand
        browser.wait_until(tab, "!document.getElementById('judge').hidden")
        assert "reason" in browser.evaluate(tab, "document.getElementById('verdict').textContent")
        if os.environ.get("ULTRA_ANNOTATE_SCREENSHOT"):
            Path(os.environ["ULTRA_ANNOTATE_SCREENSHOT"]).write_bytes(browser.screenshot(tab))
        tab = browser.visit(base + "/")  # a reload resumes where the person was
        browser.wait_until(tab, "document.body.dataset.ready === '1'")
        assert "flagged 1" in browser.evaluate(tab, "document.getElementById('count').textContent")
        # label the rest, whatever comes, until the page says nothing is left; the hostile item among them
        for _ in range(10):
            if "Nothing left" in browser.evaluate(tab, "document.getElementById('question').textContent"):
                break
            if "onerror" in browser.evaluate(tab, "document.getElementById('answer').textContent"):
                assert browser.evaluate(tab, "document.getElementById('answer').textContent") == HOSTILE
            shown = browser.evaluate(tab, SHOWN)
            browser.press(tab, "1")
            browser.wait_until(tab, f"{SHOWN} !== {shown!r}")
        assert browser.evaluate(tab, "window.pwned === undefined && document.querySelectorAll('img').length === 0")
    kinds = [row[1] for row in current(store)]
    assert kinds.count("label") == 4 and kinds.count("skip") == 1 and kinds.count("flag") == 1


def test_two_annotators_at_once_in_chromium_under_active_selection(tmp_path) -> None:
    """Two people, each on their own server over one store, label by keyboard in turns; active selection (the
    default with judge scores) decides items as they go. Each drawn item is labelled once, by one of them."""
    data = write_dataset(tmp_path, n=24)
    store = tmp_path / "output" / "labels.sqlite"
    common = (str(data), "--scale", "binary", "--budget", "12", "--fit-after", "4")
    with annotate_server(tmp_path, *common, "--annotator", "ann") as (base_a, _), \
            annotate_server(tmp_path, *common, "--annotator", "bob") as (base_b, _), Browser() as browser:  # fmt: skip
        tabs = {name: browser.visit(base + "/") for name, base in (("ann", base_a), ("bob", base_b))}
        for tab in tabs.values():
            browser.wait_until(tab, "document.body.dataset.ready === '1'")
        left = set(tabs)
        for _ in range(40):
            for name in sorted(left):
                tab = tabs[name]
                if "Nothing left" in browser.evaluate(tab, "document.getElementById('question').textContent"):
                    left.discard(name)
                    continue
                shown = browser.evaluate(tab, SHOWN)
                browser.press(tab, "1")
                browser.wait_until(tab, f"{SHOWN} !== {shown!r}")
            if not left:
                break
        assert not left
    with sqlite3.connect(store) as db:
        labels = db.execute("SELECT key, annotator FROM labels WHERE undone = 0 AND kind = 'label'").fetchall()
        drawn = {key for (key,) in db.execute("SELECT key FROM items WHERE drawn = 1")}
        select = db.execute("SELECT value FROM meta WHERE key = 'select'").fetchone()[0]
        undecided = db.execute("SELECT COUNT(*) FROM items WHERE drawn IS NULL").fetchone()[0]
    keys = [key for key, _ in labels]
    assert select == "active" and undecided == 0 and len(keys) == len(set(keys)) and set(keys) == drawn
    assert {who for _, who in labels} == {"ann", "bob"} and len(drawn) < 24
