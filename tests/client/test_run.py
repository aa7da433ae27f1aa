"""End to end: ``ultra build`` and ``ultra run`` on the toy server (a real stdio subprocess).

The client runs in-process here to keep the suite fast; tests/client/test_cli.py runs it as a subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.client.conftest import write_pipeline

FLOW = """\
  - toy.make_items
  - toy.append_mark:
      output: {items: marked}
      input: {items: items}
  - loop:
      times: 3
      steps:
        - toy.append_mark
  - branch:
      router: [toy.route_all]
      branches:
        upper: [toy.upper]
        lower: [toy.lower]
  - toy.count:
      input: {items: marked}
      output: {count: marked_count}
  - branch:
      router: [toy.route_each]
      branches:
        short: [toy.lower]
        long: [toy.append_mark]
"""


def only_run_folder(project: Path) -> Path:
    (folder,) = [p for p in (project / "output").iterdir() if p.is_dir()]
    return folder


def test_full_run_writes_memory_logs_and_progress(toy_project: Path, ultra) -> None:
    pipeline = write_pipeline(toy_project, "flow", FLOW)
    params = toy_project / "pipes" / "parameters" / "flow_parameter.yaml"
    built = ultra("build", str(pipeline), cwd=toy_project)
    assert built.returncode == 0, built.stderr
    assert yaml.safe_load(params.read_text()) == {"toy": {"words": "upper", "mark": "!", "target": "upper"}}
    params.write_text("toy:\n  words: upper\n  mark: '+'\n  target: upper\n", encoding="utf-8")
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 0, result.stderr
    folder = only_run_folder(toy_project)
    memory = json.loads((folder / "memory.json").read_text())
    # make_items -> ['upper']; marked = ['upper+']; the loop appends 3 marks to items -> ['upper+++'];
    # route 'upper' upper-cases items -> ['UPPER+++']; count(marked) = 1;
    # per item: 'UPPER+++' is long -> append_mark -> 'UPPER++++'
    assert memory["marked"] == ["upper+"]
    assert memory["items"] == ["UPPER++++"]
    assert memory["marked_count"] == 1
    assert memory["route"] == ["long"]
    assert (folder / "logs" / "toy.stderr.log").exists()
    assert yaml.safe_load((folder / "parameters.yaml").read_text())["toy"]["mark"] == "+"
    assert "[ultra] toy.count" in result.stderr and "(1/1)" in result.stderr
    assert f"done: output/{folder.name}" in result.stdout


def test_string_route_to_unknown_branch(toy_project: Path, ultra) -> None:
    pipeline = write_pipeline(toy_project, "flow", FLOW)
    params = toy_project / "pipes" / "parameters" / "flow_parameter.yaml"
    params.parent.mkdir()
    params.write_text("toy:\n  words: a b\n  mark: '+'\n  target: sideways\n", encoding="utf-8")
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 1
    assert "the router chose branch 'sideways'; branches are ['lower', 'upper']" in result.stderr


def test_per_item_branch_merges_back_in_order(toy_project: Path, ultra) -> None:
    steps = (
        "  - toy.make_items\n"
        "  - branch:\n      router: [toy.route_each]\n"
        "      branches:\n        short: [toy.upper]\n        long: [toy.append_mark]\n"
    )
    pipeline = write_pipeline(toy_project, "items", steps)
    params = toy_project / "pipes" / "parameters" / "items_parameter.yaml"
    params.parent.mkdir()
    params.write_text("toy:\n  words: ab abcdef xyz longer\n  mark: '!'\n", encoding="utf-8")
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 0, result.stderr
    memory = json.loads((only_run_folder(toy_project) / "memory.json").read_text())
    assert memory["items"] == ["AB", "abcdef!", "XYZ", "longer!"]
    assert memory["route"] == ["short", "long", "short", "long"]


def test_secrets_are_expanded_for_the_tool_and_written_nowhere(toy_project: Path, ultra, monkeypatch) -> None:
    secret = "sk-test-1234567890abcdefghij"
    pipeline = write_pipeline(toy_project, "secret", "  - toy.key_length\n")
    built = ultra("build", str(pipeline), cwd=toy_project)
    assert built.returncode == 0, built.stderr
    monkeypatch.setenv("TOY_SECRET", secret)
    params = toy_project / "pipes" / "parameters" / "secret_parameter.yaml"
    assert yaml.safe_load(params.read_text()) == {"toy": {"api_key": "${TOY_SECRET}"}}
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 0, result.stderr
    folder = only_run_folder(toy_project)
    assert json.loads((folder / "memory.json").read_text()) == {"key_length": len(secret)}
    everything = [params, *folder.rglob("*")]
    for path in everything:
        if path.is_file():
            assert secret not in path.read_text(errors="replace"), path
    assert secret not in result.stdout + result.stderr


def test_unset_secret_is_named(toy_project: Path, ultra, monkeypatch) -> None:
    monkeypatch.delenv("TOY_SECRET", raising=False)
    pipeline = write_pipeline(toy_project, "secret", "  - toy.key_length\n")
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 1
    assert "secret_parameter.yaml: environment variable TOY_SECRET is not set" in result.stderr


def test_rebuild_keeps_edits_and_reports_changes(toy_project: Path, ultra) -> None:
    pipeline = write_pipeline(toy_project, "edit", "  - toy.make_items\n")
    assert ultra("build", str(pipeline), cwd=toy_project).returncode == 0
    params = toy_project / "pipes" / "parameters" / "edit_parameter.yaml"
    assert yaml.safe_load(params.read_text()) == {"toy": {"words": "upper"}}
    params.write_text("toy:\n  words: my words\n", encoding="utf-8")
    pipeline.write_text(pipeline.read_text() + "  - toy.append_mark\n")
    rebuilt = ultra("build", str(pipeline), cwd=toy_project)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert yaml.safe_load(params.read_text()) == {"toy": {"words": "my words", "mark": "!"}}
    assert "added: toy.mark" in rebuilt.stdout


def test_step_timeout(toy_project: Path, ultra) -> None:
    pipeline = write_pipeline(toy_project, "slow", "  - toy.nap:\n      timeout: 1\n")
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 1
    assert "step 'toy.nap' timed out after 1 s" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (only_run_folder(toy_project) / "memory.json").exists()


def test_dead_server_shows_its_log_tail(toy_project: Path, ultra) -> None:
    pipeline = write_pipeline(toy_project, "crash", "  - toy.crash\n")
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 1
    assert "server 'toy'" in result.stderr
    assert "toy server: crashing on purpose" in result.stderr
    assert "Traceback" not in result.stderr.split("--- last lines of")[0]


def test_tool_error_names_pipeline_line_and_tools_message(toy_project: Path, ultra) -> None:
    pipeline = write_pipeline(toy_project, "reject", "  - toy.make_items\n  - toy.reject\n")
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 1
    assert "reject.yaml:5: step 'toy.reject' failed" in result.stderr
    assert "upper:7: expected something else here" in result.stderr


def test_files_written_by_tools_are_brought_into_the_run_folder(toy_project: Path, ultra) -> None:
    pipeline = write_pipeline(toy_project, "files", "  - toy.make_items\n  - toy.write_file\n")
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 0, result.stderr
    folder = only_run_folder(toy_project)
    saved = folder / "files" / "items.txt"
    assert not saved.is_symlink() and saved.read_text() == "upper"
    assert json.loads((folder / "memory.json").read_text())["items"] == ["files/items.txt"]


def test_run_notes_settings_missing_from_the_parameter_file(toy_project: Path, ultra) -> None:
    pipeline = write_pipeline(toy_project, "stale", "  - toy.make_items\n  - toy.append_mark\n")
    params = toy_project / "pipes" / "parameters" / "stale_parameter.yaml"
    params.parent.mkdir()
    params.write_text("toy:\n  words: a bb\n", encoding="utf-8")
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 0, result.stderr
    assert "has no value for toy.mark; the servers' defaults apply" in result.stderr
    memory = json.loads((only_run_folder(toy_project) / "memory.json").read_text())
    assert memory["items"] == ["a!", "bb!"]
