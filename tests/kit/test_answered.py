"""``ultra_kit.answered``: failed items (None) left out, aligned lists cut the same way, ids kept with their items."""

from __future__ import annotations

import pytest

from ultra_base.errors import InputError
from ultra_kit.answered import answered_items


def test_without_id_ls_the_items_kept_keep_their_positions_as_ids() -> None:
    preds, kept, failed = answered_items(["a", None, "c"], gt_ls=["A", "B", "C"], id_ls=None)
    assert preds == ["a", "c"] and kept["gt_ls"] == ["A", "C"]
    assert kept["id_ls"] == [0, 2] and failed == [1]  # not 0..1: item "c" is still item 2


def test_with_ids_and_nothing_failed_everything_is_as_given() -> None:
    preds, kept, failed = answered_items(["a", None], id_ls=["x", "y"], q_ls=["qx", "qy"])
    assert preds == ["a"] and kept == {"id_ls": ["x"], "q_ls": ["qx"]} and failed == ["y"]
    assert answered_items(["a"], id_ls=None) == (["a"], {"id_ls": None}, [])


def test_a_list_of_another_length_is_refused_rather_than_misaligned() -> None:
    with pytest.raises(InputError, match="gt_ls has 2 items but pred_ls has 3"):
        answered_items(["a", None, "c"], gt_ls=["A", "C"])
