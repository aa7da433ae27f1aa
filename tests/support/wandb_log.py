"""Read back what W&B wrote for an offline run: the records of its ``run-<id>.wandb`` transaction log.

wandb 0.31 writes no ``files/config.yaml`` or ``files/wandb-summary.json`` in offline mode (their contents are
only in the ``.wandb`` log) and ships no Python reader of that log (its reader is inside the Go ``wandb-core``).
The log is LevelDB's log format behind a 7-byte W&B header: 32 KiB blocks of chunks, each ``crc32 (of the chunk's
type byte, then its data) | length | type`` (full, first, middle, last); a record is a ``wandb.proto`` ``Record``.
Every chunk's checksum is verified, so a misread log fails here rather than passing as an empty one.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

HEADER = b":W&B" + struct.pack("<HB", 0xBEE1, 0)
BLOCK = 32768
CHUNK = struct.Struct("<IHB")
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def records(path: Path) -> list[Any]:
    """Every ``Record`` of a ``.wandb`` log, in order."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data.startswith(HEADER), f"{path}: not a W&B transaction log"
    found, pending, at = [], b"", len(HEADER)
    while at + CHUNK.size <= len(data):
        if BLOCK - at % BLOCK < CHUNK.size:  # a block's tail too short for a chunk header is padding
            at += BLOCK - at % BLOCK
            continue
        checksum, length, kind = CHUNK.unpack_from(data, at)
        chunk = data[at + CHUNK.size : at + CHUNK.size + length]
        at += CHUNK.size + length
        if kind == 0 and length == 0:  # zero padding at the end of the file
            continue
        assert zlib.crc32(chunk, zlib.crc32(bytes([kind]))) == checksum, f"{path}: bad checksum at byte {at}"
        pending += chunk
        if kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            found.append(record)
            pending = b""
    return found


def offline_run(path: Path) -> dict[str, Any]:
    """``{run, config, summary, artifacts}`` of an offline run folder: the run record, its config and summary as
    JSON values (later updates win; W&B's own ``_wandb`` / ``_runtime`` entries left out), its artifact records."""
    (log,) = path.glob("run-*.wandb")
    run, config, summary, artifacts = None, {}, {}, []
    for record in records(log):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            run = record.run
            config |= {item.key: json.loads(item.value_json) for item in record.run.config.update}
        elif kind == "config":
            config |= {item.key: json.loads(item.value_json) for item in record.config.update}
        elif kind == "summary":
            summary |= {item.key: json.loads(item.value_json) for item in record.summary.update if item.key}
        elif kind == "artifact":
            artifacts.append(record.artifact)
    config.pop("_wandb", None)
    summary.pop("_runtime", None)
    return {"run": run, "config": config, "summary": summary, "artifacts": artifacts}
