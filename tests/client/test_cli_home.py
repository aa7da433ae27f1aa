"""``$ULTRA_HOME`` for ``ultra run`` and in-process ``ultra call`` (as stdio servers honour it), and ``ultra serve``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ROOT, run_ultra

ROWS = [{"question": f"q{i}", "golden_answers": [f"a{i}"], "id": f"id{i}"} for i in range(3)]


def home_and_elsewhere(tmp_path: Path) -> tuple[Path, Path]:
    """A project folder with its own data/sample_qa.jsonl (3 rows, unlike the shipped one), and another folder."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    (home / "data").mkdir(parents=True)
    elsewhere.mkdir()
    (home / "data" / "sample_qa.jsonl").write_text("\n".join(json.dumps(row) for row in ROWS) + "\n")
    return home, elsewhere


def test_run_resolves_relative_setting_paths_against_ultra_home(tmp_path: Path) -> None:
    home, elsewhere = home_and_elsewhere(tmp_path)
    (elsewhere / "p.yaml").write_text(
        f"servers:\n  benchmark: {ROOT}/servers/benchmark\npipeline:\n  - benchmark.get_data\n"
    )
    (elsewhere / "params.yaml").write_text("benchmark:\n  benchmark:\n    path: data/sample_qa.jsonl\n")
    for mode in ([], ["--stdio"]):
        done = run_ultra(
            "run", "p.yaml", "--param", "params.yaml", "--output-dir", "runs", *mode,
            cwd=elsewhere, env={"ULTRA_HOME": str(home)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        folder = Path(done.stdout.split("done: ")[1].split()[0])
        assert folder.parent == elsewhere / "runs"  # a path typed here still means here
        memory = json.loads((folder / "memory.json").read_text())
        assert memory["q_ls"] == ["q0", "q1", "q2"]  # the project's data, not the shipped sample


def test_call_in_process_resolves_against_ultra_home_and_reads_at_files_from_here(tmp_path: Path) -> None:
    home, elsewhere = home_and_elsewhere(tmp_path)
    (elsewhere / "key_map.json").write_text(json.dumps({"q_ls": "id"}))
    done = run_ultra(
        "call", "benchmark.get_data", "benchmark.path=data/sample_qa.jsonl", "benchmark.key_map=@key_map.json",
        cwd=elsewhere, env={"ULTRA_HOME": str(home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["q_ls"] == ["id0", "id1", "id2"]


def test_serve_an_unknown_server_lists_the_servers(tmp_path: Path) -> None:
    done = run_ultra("serve", "nosuch", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "server 'nosuch' does not exist" in done.stderr
    assert "the built-in servers: benchmark, custom, evaluation" in done.stderr
