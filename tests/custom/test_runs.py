"""rankings_to_run: a run {qid: {docid: score}} from aligned rankings, refused when the lists do not line up."""

from __future__ import annotations

import anyio
import pytest

from servers.custom.runs import rankings_run
from servers.custom.server import SPEC
from servers.custom.tools.runs import rankings_to_run
from ultra_base.errors import InputError
from ultra_kit.inprocess import call_local_tool, local_tools


def test_recorded_scores_are_kept_and_a_ranking_without_them_is_scored_by_rank() -> None:
    made = rankings_to_run(["q1", "q2", "q3"], [["a", "b"], ["c", "d", "e"], ["f", "g"]], [[0.9, 0.4], [], [0.7, None]])
    assert made["run"] == {"q1": {"a": 0.9, "b": 0.4}, "q2": {"c": 3.0, "d": 2.0, "e": 1.0}, "q3": {"f": 2.0, "g": 1.0}}
    assert made["run_info"] == {"queries": 3, "queries_without_ranking": [], "scored_by_rank": 2, "dropped_docids": 0}
    assert rankings_to_run(["q"], [["x", "y"]])["run"] == {"q": {"x": 2.0, "y": 1.0}}  # no scores at all


def test_empty_and_repeated_docids_are_dropped_and_empty_rankings_left_out() -> None:
    made = rankings_to_run(["q1", "q2", "q3"], [["a", "", "b", "a"], [], ["c"]])
    assert made["run"] == {"q1": {"a": 4.0, "b": 2.0}, "q3": {"c": 1.0}}  # the first "a" keeps rank 1
    assert made["run_info"] == {
        "queries": 2,
        "queries_without_ranking": ["q2"],
        "scored_by_rank": 2,
        "dropped_docids": 2,
    }


@pytest.mark.parametrize(
    ("id_ls", "ret_ids", "ret_scores", "message"),
    [
        ([], [], None, "id_ls is empty"),
        (["q1", "q2"], [["a"]], None, "ret_ids has 1 rankings for 2 ids in id_ls"),
        (["q1"], [["a"]], [[1.0], [2.0]], "ret_scores has 2 lists for 1 ids in id_ls"),
        (["q1"], [["a", "b"]], [[1.0]], "ret_scores of item 0 (id_ls[0] = 'q1') has 1 scores for 2 docids"),
        (["q1", "q1"], [["a"], ["b"]], None, "id_ls[1] = 'q1' is repeated"),
        (["q1", 7], [["a"], ["b"]], None, "id_ls[1] must be a non-empty string, got int 7"),
        (["q1", ""], [["a"], ["b"]], None, "id_ls[1] must be a non-empty string"),
        (["q1"], [["a", 3]], None, "ret_ids[0][1] of item 0 (id_ls[0] = 'q1') must be a string, got int 3"),
        (["q1"], ["ab"], None, "ret_ids of item 0 (id_ls[0] = 'q1') must be a list of docids, got str"),
        (["q1", "q2"], [[], [""]], None, "no item has a ranking"),
    ],
)
def test_misaligned_or_malformed_lists_are_refused(id_ls, ret_ids, ret_scores, message) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        rankings_run(id_ls, ret_ids, ret_scores)


def test_through_the_server_a_misaligned_list_is_a_clear_error() -> None:
    tool = local_tools(SPEC)["rankings_to_run"]
    with pytest.raises(Exception, match="ret_ids has 1 rankings for 2 ids in id_ls; they must be aligned"):
        anyio.run(call_local_tool, tool, {"id_ls": ["q1", "q2"], "ret_ids": [["a"]]})
    with pytest.raises(Exception, match="id_ls") as refused:
        anyio.run(call_local_tool, tool, {"id_ls": [1], "ret_ids": [["a"]]})
    assert "Traceback" not in str(refused.value)
