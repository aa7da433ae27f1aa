"""ultra annotate's JSON API over real HTTP against a real uvicorn server on 127.0.0.1: labels written to SQLite
the moment they are given, undo, the CSRF / Host / size refusals, a killed server, two annotators at once,
overlap, and the export read back by ppi and judge_agreement."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import threading

import anyio
import httpx
import pytest

from servers.evaluation.server import SPEC as EVALUATION
from servers.judge.server import SPEC as JUDGE
from tests.client.annotate.serving import Client, annotate_server, write_dataset
from tests.conftest import run_ultra
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools


def rows(store):
    with sqlite3.connect(store) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM labels ORDER BY id")]


def test_label_undo_and_refusals(tmp_path) -> None:
    data = write_dataset(tmp_path)
    store = tmp_path / "output" / "labels.sqlite"
    with annotate_server(tmp_path, str(data), "--scale", "binary", "--annotator", "ann") as (base, _):
        client = Client(base)
        first = client.next()
        assert client.next()["item_id"] == first["item_id"]  # a reload gets the same item back
        assert "judge" not in first  # hidden unless asked for
        assert client.http.get("/api/next?judge=1").json()["item"]["judge"]["reasoning"].startswith("reason")
        assert client.label(first["item_id"], 1).status_code == 200
        (row,) = rows(store)  # written at once
        assert (row["key"], row["annotator"], row["kind"], row["value"], row["undone"]) == (
            first["item_id"],
            "ann",
            "label",
            1.0,
            0,
        )
        assert len(row["content_hash"]) == 16 and len(row["scale_hash"]) == 16 and row["time"].endswith("+00:00")
        second = client.next()
        assert second["item_id"] != first["item_id"]
        assert client.post("/api/undo", {}).json()["item_id"] == first["item_id"]
        assert rows(store)[0]["undone"] == 1
        assert client.next()["item_id"] == first["item_id"]  # undone: the item comes back
        assert client.label(first["item_id"], 0).status_code == 200
        assert client.label(first["item_id"], 7).status_code == 400  # not on the scale
        assert client.post("/api/label", {"item_id": first["item_id"], "value": 1}, csrf=False).status_code == 403
        foreign = httpx.get(base + "/api/progress", headers={"Host": "evil.example:80"})
        assert foreign.status_code == 421
        big = client.post("/api/flag", {"item_id": second["item_id"], "comment": "x" * 20_000})
        assert big.status_code == 413
        assert client.post("/api/label", {"item_id": "A::q99", "value": 1}).status_code == 404
        other = next(f"A::q{i}" for i in range(12) if f"A::q{i}" not in (first["item_id"], second["item_id"]))
        assert client.label(other, 1).status_code == 409  # never handed out to this annotator
        assert client.post("/api/flag", {"item_id": second["item_id"], "comment": "unreadable"}).status_code == 200
        progress = client.http.get("/api/progress").json()
        assert (progress["labels"], progress["mine"], progress["flagged"], progress["labels_wanted"]) == (1, 1, 1, 12)
    current = [r for r in rows(store) if not r["undone"]]
    assert [(r["key"], r["kind"], r["value"], r["comment"]) for r in current] == [
        (first["item_id"], "label", 0.0, None),
        (second["item_id"], "flag", None, "unreadable"),
    ]


def test_killed_server_loses_nothing_and_labels_nothing_twice(tmp_path) -> None:
    data = write_dataset(tmp_path)
    args = (str(data), "--scale", "binary", "--annotator", "ann", "--select", "uniform")
    done = []
    with annotate_server(tmp_path, *args) as (base, process):
        client = Client(base)
        for _ in range(3):
            item = client.next()
            client.label(item["item_id"], 1)
            done.append(item["item_id"])
        held = client.next()["item_id"]
        process.send_signal(signal.SIGKILL)
        process.wait()
    with annotate_server(tmp_path, *args) as (base, _):
        client = Client(base)
        assert client.next()["item_id"] == held  # the claim survives the crash
        while (item := client.next()) is not None:
            client.label(item["item_id"], 0)
            done.append(item["item_id"])
    labelled = [r["key"] for r in rows(tmp_path / "output" / "labels.sqlite")]
    assert len(labelled) == 12 == len(set(labelled)) and labelled[:3] == done[:3]


def label_all(base: str, seen: list[str], turns: threading.Barrier) -> None:
    """Label every item this annotator is given, in step with the other (``turns``: each waits for the other's
    label before asking again), so that both ask while items are left however the threads are scheduled; the
    first to run out releases the other."""
    client = Client(base)
    try:
        while (item := client.next()) is not None:
            assert client.label(item["item_id"], 1).status_code == 200
            seen.append(item["item_id"])
            with contextlib.suppress(threading.BrokenBarrierError):
                turns.wait(timeout=60)
    finally:
        turns.abort()


@pytest.mark.parametrize(("overlap", "select"), [(0.0, "uniform"), (1.0, "uniform"), (0.0, "active")])
def test_two_annotators_at_once_share_the_items(tmp_path, overlap, select) -> None:
    data = write_dataset(tmp_path, n=30)
    common = (str(data), "--scale", "binary", "--select", select, "--overlap", str(overlap), "--budget", "15",
              "--fit-after", "5")  # fmt: skip
    seen: dict[str, list[str]] = {"a": [], "b": []}
    with annotate_server(tmp_path, *common, "--annotator", "a") as (base_a, _), \
            annotate_server(tmp_path, *common, "--annotator", "b") as (base_b, _):  # fmt: skip
        turns = threading.Barrier(2)
        threads = [
            threading.Thread(target=label_all, args=(b, seen[n], turns)) for n, b in (("a", base_a), ("b", base_b))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    stored = [(r["key"], r["annotator"]) for r in rows(tmp_path / "output" / "labels.sqlite")]
    assert len(stored) == len(set(stored))  # no annotator labelled an item twice
    with sqlite3.connect(tmp_path / "output" / "labels.sqlite") as db:
        drawn = {key for (key,) in db.execute("SELECT key FROM items WHERE drawn = 1")}
        undecided = db.execute("SELECT COUNT(*) FROM items WHERE drawn IS NULL").fetchone()[0]
    assert undecided == 0
    if select == "active":
        assert sorted(seen["a"] + seen["b"]) == sorted(drawn) and 5 <= len(drawn) < 30  # each drawn item once
    elif overlap == 0:
        assert sorted(seen["a"] + seen["b"]) == sorted(f"A::q{i}" for i in range(30))  # each item once
        assert seen["a"] and seen["b"]
    else:
        assert sorted(seen["a"]) == sorted(seen["b"]) == sorted(f"A::q{i}" for i in range(30))


def test_export_round_trips_into_ppi_and_judge_agreement(tmp_path, monkeypatch) -> None:
    data = write_dataset(tmp_path, n=40)
    with annotate_server(tmp_path, str(data), "--scale", "umbrela", "--annotator", "ann", "--budget", "25") as (
        base, _):  # fmt: skip
        client = Client(base)
        given = {}
        while (item := client.next()) is not None:
            value = int(item["id"][1:]) % 4
            client.label(item["item_id"], value)
            given[item["id"]] = value
    store = tmp_path / "output" / "labels.sqlite"
    with sqlite3.connect(store) as db:
        probs = dict(db.execute("SELECT item_id, prob FROM items WHERE drawn = 1").fetchall())
        select = db.execute("SELECT value FROM meta WHERE key = 'select'").fetchone()[0]
    assert select == "active" and set(given) == set(probs) and 10 <= len(given) < 40
    done = run_ultra("annotate", "--export", "output/export", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "output" / "export"
    labels = [json.loads(line) for line in (out / "human_labels.jsonl").read_text().splitlines()]
    assert {r["item_id"]: r["label"] for r in labels} == given
    assert json.loads((out / "sampling_probs.json").read_text())["A"] == pytest.approx(probs)  # all drawn labelled
    assert json.loads((out / "human_samples.json").read_text())["A"] == {k: [v] for k, v in given.items()}
    judged = {"A": {json.loads(line)["id"]: json.loads(line)["judge"] for line in data.read_text().splitlines()}}
    monkeypatch.chdir(tmp_path)
    ppi = local_tools(EVALUATION)["ppi"]
    from_files = anyio.run(call_local_tool, ppi, {"judged": judged, "human_path": str(out / "human_labels.jsonl"),
                                                  "sampling_probs": str(out / "sampling_probs.json")})  # fmt: skip
    from_store = anyio.run(call_local_tool, ppi, {"judged": judged, "human_path": str(store)})
    assert from_files["ppi_res"]["A"]["method"].startswith("active")
    assert from_store["ppi_res"]["A"]["estimate"] == pytest.approx(from_files["ppi_res"]["A"]["estimate"])
    qrels = (out / "qrels.human.txt").read_text().splitlines()
    assert sorted(qrels) == sorted(f"A 0 {k} {v}" for k, v in given.items())
    agreement = anyio.run(call_local_tool, local_tools(JUDGE)["judge_agreement"], {
        "llm_qrels_path": str(out / "qrels.human.txt"), "human_qrels_path": str(out / "qrels.human.txt"),
        "run_paths": []})  # fmt: skip
    assert agreement["num_pairs"] == len(given) and agreement["kappa_graded"] == pytest.approx(1.0)
    llm = tmp_path / "output" / "qrels.llm.txt"  # the judge grades every third item one higher than people did
    llm.write_text("".join(f"A 0 {k} {min(3, v + (int(k[1:]) % 3 == 0))}\n" for k, v in given.items()))
    settings = {"llm_qrels_path": str(llm), "run_paths": []}
    exported = anyio.run(call_local_tool, local_tools(JUDGE)["judge_agreement"],
                         {**settings, "human_qrels_path": str(out / "qrels.human.txt")})  # fmt: skip
    direct = anyio.run(call_local_tool, local_tools(JUDGE)["judge_agreement"],
                       {**settings, "human_qrels_path": str(store)})  # fmt: skip
    assert direct["confusion"] == exported["confusion"] and direct["kappa_graded"] == exported["kappa_graded"]
    assert direct["num_pairs"] == len(given) and direct["exact_agreement"] < 1


def test_compare_judged_reads_the_store_as_the_export(tmp_path, monkeypatch) -> None:
    """Two systems labelled by two people: compare_judged given the store itself equals it given the export."""
    from ultra_client.annotate.export import export
    from ultra_client.annotate.scales import read_scale
    from ultra_client.annotate.source import Item
    from ultra_client.annotate.store import LabelStore

    monkeypatch.chdir(tmp_path)
    items = [Item(system, f"q{i}", f"Q{i}?", f"answer {i}") for system in ("A", "B") for i in range(12)]
    store = LabelStore(tmp_path / "output" / "labels.sqlite", read_scale("umbrela"))
    queue = [{"position": k, "prob": None, "drawn": True, "copies": 2} for k in range(len(items))]
    store.setup(items, queue, {"select": "uniform", "seed": 0, "budget": 24, "source": "x"})
    for item in items:
        base = (int(item.item_id[1:]) % 4) if item.system == "A" else (int(item.item_id[1:]) % 2)
        store.record("ann", item.key, "label", float(base), None)
        store.record("bob", item.key, "label", float(min(3, base + 1)), None)
    store.close()
    out = export("output/labels.sqlite", "output/export")
    tool = local_tools(EVALUATION)["compare_judged"]
    settings = {"n_resamples": 2000, "seed": 1, "alpha": 0.05}
    exported = json.loads((tmp_path / "output" / "export" / "human_samples.json").read_text())
    from_export = anyio.run(call_local_tool, tool, {**settings, "samples": exported, "save_path": "output/c1.json"})
    direct = anyio.run(call_local_tool, tool, {**settings, "samples": "output/labels.sqlite",
                                               "save_path": "output/c2.json"})  # fmt: skip
    assert direct["comparisons"] == from_export["comparisons"] and "human_samples" in out
    (pair,) = direct["comparisons"].values()
    # A: each item's two labels b and min(3, b + 1), b = i % 4, mean 1.875; B (b = i % 2): 1.0
    assert (pair["mean_a"], pair["mean_b"], pair["samples_per_item"]) == (1.875, 1.0, [2, 2])
    with pytest.raises(ToolFailure, match="label store"):
        anyio.run(call_local_tool, tool, {**settings, "samples": "output/export/human_labels.jsonl"})
