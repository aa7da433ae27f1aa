"""``ultra call`` as a user types it: values from files, type errors as sentences, --version, closed pipes,
an unknown server (issue 15, items 3 and 5)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.background import Finished, spare_ultra
from tests.support.together import at_once
from ultra_kit.factory import __version__ as servers_version

PREDICTIONS = [f"passage {i}: " + "the Eiffel Tower stands in Paris on the Champ de Mars " * 2 for i in range(2000)]


def test_a_2000_item_value_is_too_long_for_a_command_line_but_not_for_args_file(tmp_path: Path) -> None:
    golds = [["Eiffel Tower"]] * len(PREDICTIONS)
    with pytest.raises(OSError):  # the problem: "Argument list too long" (one argument above 128 KiB)
        run_ultra("call", "evaluation.evaluate", f"pred_ls={json.dumps(PREDICTIONS)}", cwd=tmp_path)
    (tmp_path / "args.json").write_text(json.dumps({"pred_ls": PREDICTIONS, "gt_ls": golds, "metrics": ["em"]}))
    (tmp_path / "metrics.yaml").write_text("[em, acc]\n")
    result = run_ultra(
        "call", "evaluation.evaluate", "--args-file", "args.json", "metrics=@metrics.yaml", cwd=tmp_path, timeout=300
    )
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)["eval_res"]
    # metrics=@metrics.yaml applies on top of the file's [em]; every prediction contains "Eiffel Tower" but is no match
    assert set(scores) == {"em", "acc", "avg_em", "avg_acc"}
    assert len(scores["acc"]) == 2000 and scores["avg_acc"] == 1.0 and scores["avg_em"] == 0.0


@pytest.mark.parametrize("transport", [[], ["--stdio"]])
def test_key_at_file_reads_yaml_and_json_values(tmp_path: Path, transport: list[str]) -> None:
    (tmp_path / "preds.json").write_text(json.dumps(["The Eiffel Tower, in Paris", "Berlin"]))
    (tmp_path / "golds.yaml").write_text(yaml.safe_dump([["Eiffel Tower"], ["Berlin", "Berlin, Germany"]]))
    result = run_ultra(
        "call",
        "evaluation.evaluate",
        *transport,
        "pred_ls=@preds.json",
        "gt_ls=@golds.yaml",
        "metrics=[em, f1]",
        f"save_path={tmp_path / 'out'}",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)["eval_res"]
    assert scores["em"] == [0.0, 1.0] and scores["f1"] == [pytest.approx(2 / 3), 1.0]


def test_dotted_key_from_a_file_and_file_errors(tmp_path: Path) -> None:
    data = ROOT / "data" / "sample_qa.jsonl"
    (tmp_path / "map.yaml").write_text("{q_ls: question}\n")
    (tmp_path / "list.yaml").write_text("[a, b]\n")
    (tmp_path / "typo.json").write_text('{"pred_lss": []}')
    ran = at_once({  # four calls that only read their files, at once
        "result": lambda: run_ultra("call", "benchmark.get_data", f"benchmark.path={data}",
                                    "benchmark.key_map=@map.yaml", cwd=tmp_path),
        "missing": lambda: run_ultra("call", "evaluation.evaluate", "metrics=@nothere.json", cwd=tmp_path),
        "not_mapping": lambda: run_ultra("call", "evaluation.evaluate", "--args-file", "list.yaml", cwd=tmp_path),
        "unknown": lambda: run_ultra("call", "evaluation.evaluate", "--args-file", "typo.json", cwd=tmp_path),
    })  # fmt: skip
    result = ran["result"]
    assert result.returncode == 0, result.stderr
    first = json.loads(data.read_text().splitlines()[0])
    assert json.loads(result.stdout)["q_ls"][0] == first["question"]

    missing = ran["missing"]
    assert missing.returncode == 1 and "argument 'metrics': nothere.json: file not found" in missing.stderr
    not_mapping = ran["not_mapping"]
    assert not_mapping.returncode == 1 and "list.yaml: --args-file holds a mapping" in not_mapping.stderr
    unknown = ran["unknown"]
    assert unknown.returncode == 1 and "--args-file: 'evaluate' has no parameter 'pred_lss'" in unknown.stderr
    assert "Traceback" not in missing.stderr + not_mapping.stderr + unknown.stderr


TYPE_ERRORS = [
    ("evaluation.evaluate_trec", "ir_metrics=map", "`ir_metrics` must be a list of strings, got a string ('map')"),
    ("evaluation.evaluate_trec", "ks=[1, x]", "`ks[1]` must be an integer, got a string ('x')"),
    ("evaluation.evaluate_trec", "max_depth=[3]", "`max_depth` must be an integer or null, got a list"),
    ("benchmark.get_data", "benchmark.limit=many", "`benchmark.limit` must be an integer, got a string ('many')"),
]


def type_error_call(target: str, transport: tuple[str, ...], argument: str) -> pytest.MarkDecorator:
    """``ultra call TARGET TRANSPORT ARGUMENT`` in a folder of its own: a spare background run (tests/support)."""
    return spare_ultra(lambda folder: ("call", target, *transport, argument))


@pytest.mark.parametrize(
    ("target", "argument", "sentence", "transport"),
    [pytest.param(target, argument, sentence, transport, marks=type_error_call(target, transport, argument),
                  id=f"{target}-{argument}-{'stdio' if transport else 'in-process'}")
     for transport in ((), ("--stdio",)) for target, argument, sentence in TYPE_ERRORS],
)  # fmt: skip
def test_type_errors_are_one_sentence(
    background_run: Finished, transport: tuple[str, ...], target: str, argument: str, sentence: str
) -> None:
    result = background_run.done
    assert result.returncode == 1
    tool = target.split(".")[1]
    assert result.stderr == f"error: {target} failed: Error executing tool {tool}: {sentence}\n"


def test_version_is_the_package_version(tmp_path: Path) -> None:
    result = run_ultra("--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"ultra {importlib.metadata.version('ultra-eval')}\n"
    assert result.stdout == f"ultra {servers_version}\n"


@pytest.mark.parametrize(
    "args",
    [["tools", "benchmark", "--json"], ["call", "evaluation.evaluate", "pred_ls=[a]", "gt_ls=[[a]]", "metrics=[em]"]],
)
def test_a_closed_pipe_ends_quietly(tmp_path: Path, args: list[str]) -> None:
    """The reader closes the pipe before anything is written (as `| head -c 0` would): no traceback."""
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "ultra.py"), *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    process.stdout.close()
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 141, stderr
    assert stderr == ""


SERVERS = [p for p in (ROOT / "servers").glob("*/__init__.py") if p.parent.name != "core"]


def test_unknown_server_names_the_path_once_and_lists_the_servers(tmp_path: Path) -> None:
    result = run_ultra("tools", "nosuch", cwd=ROOT)
    assert result.returncode == 1
    assert result.stderr.count(str(ROOT / "nosuch")) == 1
    assert result.stderr == (
        f"error: server 'nosuch' does not exist: it is not a built-in server and there is no server package at "
        f"{ROOT / 'nosuch'}; the built-in servers: {', '.join(sorted(p.parent.name for p in SERVERS))}\n"
    )
    call = run_ultra("call", "nosuch.tool", cwd=tmp_path)
    assert call.returncode == 1 and f"no server package at {tmp_path / 'nosuch'}; the built-in" in call.stderr
