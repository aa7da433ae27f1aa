"""``ultra export wandb``: a run folder logged as a W&B offline run and read back from what W&B wrote
(its ``.wandb`` log: ``tests/support/wandb_log.py``), with no network; and its clear errors."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from tests.client.test_gates import eval_trec_project
from tests.conftest import ROOT, run_ultra
from tests.support.extras import requires

pytestmark = requires("wandb", "the wandb extra is not installed: pip install 'ultra-eval[wandb]'")


class Listener:
    """A local TCP port standing in for W&B's server and any proxy: it counts the connections it gets."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            connection.close()


def wandb_env(tmp_path: Path, listener: Listener) -> dict[str, str]:
    """W&B's folders inside ``tmp_path``, no API key, and every way out pointed at ``listener``."""
    env = {name: str(tmp_path / "wandb-home" / name.lower()) for name in ("WANDB_CONFIG_DIR", "WANDB_DATA_DIR")}
    env |= {"WANDB_CACHE_DIR": str(tmp_path / "wandb-home" / "cache"), "HOME": str(tmp_path / "wandb-home")}
    env |= {"WANDB_BASE_URL": listener.url, "HTTP_PROXY": listener.url, "HTTPS_PROXY": listener.url}
    return env | {"WANDB_API_KEY": "", "NO_PROXY": ""}


def test_a_run_round_trips_through_a_wandb_offline_run(tmp_path: Path) -> None:
    pipeline = eval_trec_project(tmp_path)
    params = tmp_path / "examples" / "parameters" / "eval_trec_parameter.yaml"
    written = yaml.safe_load(params.read_text())
    written["evaluation"]["save_path"] = "${ULTRA_TEST_SAVE_DIR}"  # its value must never reach W&B
    params.write_text(yaml.safe_dump(written))
    label = {"ULTRA_TEST_SAVE_DIR": str(tmp_path / "folder-that-stays-out-of-wandb")}
    done = run_ultra("run", str(pipeline), "--output-dir", str(tmp_path / "runs"), cwd=tmp_path, env=label)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "runs").glob("eval_trec_*")

    listener = Listener()
    env = wandb_env(tmp_path, listener) | label
    args = ("export", "wandb", str(folder), "--project", "nightly", "--dir", str(tmp_path / "wb"), "--mode", "offline")
    exported = run_ultra(*args, cwd=ROOT, env=env)
    assert exported.returncode == 0, exported.stderr
    assert listener.connections == 0  # offline: nothing went out
    line, hint = exported.stdout.splitlines()
    run_id, local = line.removeprefix(f"{folder}: wandb run ").split(" ", 1)
    local = Path(local.strip("()"))
    assert local.parent == tmp_path / "wb" / "wandb" and local.name.endswith(f"-{run_id}")
    assert local.name.startswith("offline-run-") and hint == f"upload later with: wandb sync {local}"

    from tests.support.wandb_log import offline_run

    logged = offline_run(local)
    run = logged["run"]
    assert (run.run_id, run.project, run.display_name) == (run_id, "nightly", folder.name)
    assert (run.run_group, run.job_type) == ("eval_trec", "evaluation")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert list(run.tags) == ["pipeline:eval_trec", f"git:{commit.strip()}"]

    memory = json.loads((folder / "memory.json").read_text())
    expected = {f"eval_res.{k}": v for k, v in memory["eval_res"].items()}
    expected |= {f"counts.{k}": v for k, v in memory["counts"].items()} | {"failed_fraction": 0}
    assert logged["summary"] == pytest.approx(expected, abs=1e-12)
    assert logged["summary"]["eval_res.ndcg@10"] == memory["eval_res"]["ndcg@10"]

    config = logged["config"]
    assert config["evaluation"] == written["evaluation"]  # as written: save_path is "${ULTRA_TEST_SAVE_DIR}"
    assert config["evaluation"]["relevance_level"] == 1 and config["evaluation"]["ks"] == [1, 5, 10, 20, 50, 100]
    assert config["ultra"]["pipeline"] == "eval_trec" and config["ultra"]["git_commit"] == commit.strip()
    assert config["ultra"]["run_folder"] == str(folder)
    assert config["ultra"]["duration_seconds"] == json.loads((folder / "timings.json").read_text())["total_seconds"]
    for path in local.rglob("*"):  # the variable's value is nowhere in what W&B wrote
        assert not path.is_file() or b"folder-that-stays-out-of-wandb" not in path.read_bytes(), path

    (artifact,) = logged["artifacts"]
    assert (artifact.name, artifact.type) == (folder.name, "ultra-run")
    entries = {entry.path: entry for entry in artifact.manifest.contents}
    assert set(entries) == {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    for name in ("memory.json", "parameters.yaml"):  # the staged copy W&B uploads on sync, and its digest
        content = (folder / name).read_bytes()
        assert Path(entries[name].local_path).read_bytes() == content
        assert entries[name].digest == base64.b64encode(hashlib.md5(content).digest()).decode()
    assert Path(entries["memory.json"].local_path).is_relative_to(tmp_path / "wandb-home")

    online = run_ultra(*args[:-1], "online", cwd=ROOT, env=env)  # no API key: refused, with what to do
    assert online.returncode == 1 and "Traceback" not in online.stderr
    assert "W&B refused the run: No API key configured" in online.stderr and "`wandb login`" in online.stderr


def test_wandb_stays_unloaded_until_an_export_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(ROOT / "ultra.py"), "export", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert done.returncode == 0 and "{mlflow,wandb}" in done.stdout
    imported = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "argparse" in imported and not [name for name in imported if name.split(".")[0] in ("wandb", "mlflow")]


def test_a_folder_that_is_not_a_finished_run_or_an_mlflow_option_is_refused(tmp_path: Path) -> None:
    (tmp_path / "eval_trec_20261126_101010").mkdir()
    args = ("export", "wandb", str(tmp_path / "eval_trec_20261126_101010"), "--dir", str(tmp_path / "wb"))
    done = run_ultra(*args, cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "eval_trec_20261126_101010: not a finished run folder of ultra run" in done.stderr
    assert not (tmp_path / "wb").exists() and not (tmp_path / "wandb").exists()
    mixed = run_ultra(*args, "--tracking-uri", f"file:{tmp_path / 'mlruns'}", cwd=tmp_path)
    assert mixed.returncode == 1 and "Traceback" not in mixed.stderr
    assert "--tracking-uri is an option of ultra export mlflow, not of ultra export wandb" in mixed.stderr


def test_without_wandb_installed_the_error_says_how_to_install_it(tmp_path: Path) -> None:
    shim = tmp_path / "shim" / "wandb"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError(\"No module named 'wandb'\")\n")
    env = {"PYTHONPATH": os.pathsep.join([str(shim.parent), str(ROOT)])}
    done = run_ultra("export", "wandb", str(tmp_path), cwd=tmp_path, env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "ultra export wandb needs Weights & Biases' client: pip install 'ultra-eval[wandb]'" in done.stderr
