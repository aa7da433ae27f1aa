"""The disagreements page: how far annotators agree, how the judge's verdicts meet the people's labels, and the items
they disagree on most with the judge's reasoning (figures from ``ultra_kit.labels.agreement``).

Three ways to see it: the annotate server serves it live at ``/disagreements``, ``ultra annotate SOURCE
--disagreements FILE`` writes it as a self-contained file, and the report shows ``section`` for a label store it
is given. The page has no script and its policy allows none; every text from the store or SOURCE is escaped
(answers, comments and reasoning are hostile). Each figure carries its full value in ``data-value``.
"""

from __future__ import annotations

from html import escape
from typing import Any

Texts = dict[str, tuple[str, str]]  # item key -> (question, answer), where the caller has them

POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'"
STYLE = """body{font:15px/1.45 system-ui,sans-serif;max-width:70rem;margin:1rem auto;padding:0 1rem;color:#111}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #888;padding:.2rem .5rem;text-align:right}
th{background:#eee}.text{text-align:left;white-space:pre-wrap;max-width:40rem}.diag{font-weight:bold;
border-width:2px}.meta{color:#444}section{border-top:2px solid #111;margin-top:1rem}"""
TEXT_CHARS = 1200  # question, answer and reasoning are cut to this many characters on the page


def figure(value: float | None, name: str) -> str:
    """A figure shown to 3 decimals with its full value in ``data-value``; "n/a" when undefined."""
    if value is None:
        return f'<td data-name="{name}" data-value="">n/a</td>'
    return f'<td data-name="{name}" data-value="{value!r}">{value:.3f}</td>'


def _cut(text: str) -> str:
    return escape(text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…")


def _label(value: float | None, scale: dict[str, Any]) -> str:
    if value is None:
        return "n/a"
    names = dict(zip(scale["values"], scale["labels"], strict=True))
    name = names.get(value)
    return escape(f"{value:g}" + (f" ({name})" if name and name != f"{value:g}" else ""))


def section(report: dict[str, Any], texts: Texts | None, *, top: int, level: int = 2) -> str:
    """The page's body: the figures, the confusion matrix, the ``top`` largest disagreements; headings at ``level``."""
    scale, judge, alpha = report["scale"], report["judge"], report["alpha"]
    who = ", ".join(f"{escape(name)} ({n})" for name, n in sorted(report["annotators"].items())) or "nobody yet"
    parts = [
        f'<p class="meta">Scale <strong>{escape(scale["name"])}</strong> · {report["items_labelled"]} items labelled'
        f" by {who}</p>",
        f"<h{level}>Between annotators</h{level}>",
        f'<p class="meta">Krippendorff\'s alpha over the {alpha["units"]} items two or more people labelled '
        "(n/a: none yet, or no variation).</p>",
        '<table id="alpha"><tr><th>level</th><th>alpha</th></tr>'
        + "".join(
            f"<tr><th>{level}</th>{figure(alpha[level], 'alpha_' + level)}</tr>"
            for level in ("nominal", "ordinal", "interval")
        )  # fmt: skip
        + "</table>",
        f"<h{level}>Judge and people</h{level}>",
    ]
    if not judge["pairs"]:
        parts.append("<p>No labelled item has a judge score: nothing to compare.</p>")
    else:
        parts += [
            f'<p class="meta">Over the {judge["pairs"]} labelled items the judge scored: the people\'s label is their '
            "majority (a tie goes to the lower value), the judge's score snapped to the nearest value on the scale."
            "</p>",
            '<table id="kappa"><tr><th>exact agreement</th><th>Cohen\'s kappa</th>'
            "<th>quadratic-weighted kappa</th></tr>"
            f"<tr>{figure(judge['exact_agreement'], 'exact_agreement')}{figure(judge['kappa'], 'kappa')}"
            f"{figure(judge['kappa_quadratic'], 'kappa_quadratic')}</tr></table>",
            _matrix(judge, scale),
        ]
    rows = report["disagreements"][:top]
    parts.append(f"<h{level}>Largest disagreements</h{level}>")
    parts.append(f"<p class=\"meta\">{len(report['disagreements'])} items where the "
                 f"judge's verdict is not the people's label; the {len(rows)} with the largest gap |judge - people's "
                 "mean| first.</p>")  # fmt: skip
    parts.append('<table id="disagreements"><tr><th>item</th><th>people</th><th>judge</th><th>gap</th>'
                 + ('<th class="text">question / answer</th>' if texts is not None else "")
                 + '<th class="text">judge\'s reasoning</th></tr>'
                 + "".join(_disagreement(row, scale, texts) for row in rows) + "</table>")  # fmt: skip
    return "\n".join(parts)


def _matrix(judge: dict[str, Any], scale: dict[str, Any]) -> str:
    head = "".join(f"<th>{_label(v, scale)}</th>" for v in judge["labels"])
    body = "".join(
        f"<tr><th>{_label(value, scale)}</th>"
        + "".join(
            f'<td data-cell="{i},{j}"{" class=diag" if i == j else ""}>{count}</td>' for j, count in enumerate(row)
        )
        + "</tr>"
        for i, (value, row) in enumerate(zip(judge["labels"], judge["matrix"], strict=True))
    )
    return (f'<table id="confusion"><caption>rows: people · columns: judge</caption><tr><th></th>{head}</tr>'
            f"{body}</table>")  # fmt: skip


def _disagreement(row: dict[str, Any], scale: dict[str, Any], texts: Texts | None) -> str:
    people = "<br>".join(f"{escape(p['annotator'])}: {_label(p['value'], scale)}"
                         + (f" — {_cut(p['comment'])}" if p["comment"] else "") for p in row["people"])  # fmt: skip
    text = ""
    if texts is not None:
        pair = texts.get(row["key"])
        shown = f"Q: {pair[0]}\n\nA: {pair[1]}" if pair else "(not in SOURCE)"
        text = f'<td class="text">{_cut(shown)}</td>'
    return (f'<tr data-key="{escape(row["key"])}"><td class="text">{escape(row["key"])}</td><td>{people}</td>'
            f"<td>{row['judge']:g} → {_label(row['judge_on_scale'], scale)}</td>"
            f'<td>{row["gap"]:.3f}</td>{text}<td class="text">{_cut(row["reasoning"]) or "—"}</td></tr>')  # fmt: skip


def page(report: dict[str, Any], texts: Texts | None, *, top: int, title: str) -> str:
    """The whole page, self-contained."""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body><h1>{escape(title)}</h1>"
            f"{section(report, texts, top=top)}</body></html>\n")  # fmt: skip
