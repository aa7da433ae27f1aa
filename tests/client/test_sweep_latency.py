"""``ultra sweep``'s terminal table shows a target's latency beside the ranked metric."""

from __future__ import annotations

from ultra_client.sweep.report import terminal_table


def _row(trial: int, rank: int, value: float, **extra: float | None) -> dict:
    row = {"trial": trial, "rank": rank, "best": rank == 1, "status": "ok", "wall_seconds": 1.0, "error": None}
    return {**row, "target.target.settings.top_k": trial, "answer_scores.f1": value, "p_value_holm": None, **extra}


def test_latency_columns_follow_the_metric_when_trials_have_them() -> None:
    flat = [
        _row(2, 1, 0.8, **{"latency.p50": 0.12345, "latency.p95": 0.5}),
        _row(1, 2, 0.6, **{"latency.p50": 0.0512, "latency.p95": None}),
    ]
    lines = terminal_table(flat, ["target.target.settings.top_k"], "answer_scores.f1").splitlines()
    header = lines[0].split()
    assert header == ["rank", "trial", "target.target.settings.top_k", "answer_scores.f1", "p", "(Holm)",
                      "latency.p50", "latency.p95", "seconds", "status"]  # fmt: skip
    assert lines[1].split()[3:7] == ["0.8", "-", "0.1235", "0.5"]
    assert lines[2].split()[3:7] == ["0.6", "-", "0.0512", "-"]


def test_no_latency_column_without_a_target() -> None:
    flat = [_row(1, 1, 0.8)]
    assert "latency" not in terminal_table(flat, ["target.target.settings.top_k"], "answer_scores.f1")


def test_ranking_on_latency_itself_shows_it_once() -> None:
    flat = [_row(1, 1, 0.8, **{"latency.p50": 0.1, "latency.p95": 0.2})]
    header = terminal_table(flat, [], "latency.p95").splitlines()[0]
    assert header.split().count("latency.p95") == 1 and "latency.p50" in header
