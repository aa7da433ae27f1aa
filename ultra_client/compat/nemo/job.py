"""Read a NeMo Evaluator RAG job (JSON) into checked parts; every mistake names the file and the JSON path.

A job is ``{"type": "rag", "name", "namespace", "tasks": {NAME: {type, dataset: {files_url}, params,
metrics}}}``. Every field is either translated or an error naming it: nothing is ignored.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, closest
from ultra_client.compat.nemo.metrics import Metric, did_you_mean, known_names, lookup
from ultra_client.errors import UltraError
from ultra_kit.llm_mapping import capped_limit

TASK_TYPES = ("beir", "squad", "ragas")
JOB_KEYS = ("type", "name", "namespace", "description", "tasks")
TASK_KEYS = ("type", "dataset", "params", "metrics")
PARAM_KEYS = ("judge_llm", "judge_embeddings", "judge_timeout", "judge_max_retries", "judge_max_workers")
ENDPOINT_KEYS = ("url", "model_id", "api_key", "format")
FORMATS = ("nim", "openai")  # NeMo's api_endpoint formats that speak the OpenAI chat/embeddings API, as ours
# NeMo's judge limits -> the keys of our LLM mappings (ultra_llm.settings.LIMIT_KEYS)
LIMITS = {"judge_timeout": "timeout", "judge_max_retries": "max_retries", "judge_max_workers": "max_workers"}


@dataclass(frozen=True)
class Endpoint:
    """A NeMo ``api_endpoint``: where (JSON path) it was written, its url, model and key as written."""

    where: str
    url: str
    model_id: str
    api_key: str | None = field(repr=False)


@dataclass(frozen=True)
class Task:
    """One checked task."""

    name: str
    type: str
    where: str  # tasks.NAME
    files_url: str
    metrics: list[Metric]
    judge_llm: Endpoint | None = None
    judge_embeddings: Endpoint | None = None
    limits: dict[str, int | float] = field(default_factory=dict)  # timeout, max_retries, max_workers


@dataclass(frozen=True)
class Job:
    """A checked NeMo RAG job."""

    path: Path
    name: str
    namespace: str
    tasks: list[Task]


class JobReader:
    """Checks one job file; ``fail`` raises the error at a JSON path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> UltraError:
        return UltraError(f"{self.path}: {where}: {message}")

    def mapping(self, value: Any, where: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object with keys {list(allowed)}, got {type(value).__name__}")
        for key in value:
            if key not in allowed:
                near = closest(str(key), allowed)
                hint = f"did you mean '{near}'? " if near else ""
                raise self.fail(
                    f"{where}.{key}", f"'{key}' is not supported here; {hint}supported keys: {list(allowed)}"
                )
        for key in required:
            if key not in value:
                raise self.fail(where, f"'{key}' is missing")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"expected a non-empty string, got {json.dumps(value)}")
        return value

    def job(self, data: Any) -> Job:
        data = self.mapping(data, "$", JOB_KEYS, ("type", "tasks"))
        if data["type"] != "rag":
            raise self.fail("$.type", f"only NeMo's 'rag' evaluation type is translated, not {data['type']!r}")
        tasks = data["tasks"]
        if not isinstance(tasks, dict) or not tasks:
            raise self.fail("$.tasks", "expected an object with one task, {NAME: {type, dataset, params, metrics}}")
        if len(tasks) > 1:
            raise self.fail(
                "$.tasks",
                f"{len(tasks)} tasks ({', '.join(tasks)}); one task per job is translated here: "
                "write one job file per task",
            )
        return Job(
            self.path,
            str(data.get("name") or self.path.stem),
            str(data.get("namespace") or ""),
            [self.task(str(name), body) for name, body in tasks.items()],
        )

    def task(self, name: str, body: Any) -> Task:
        where = f"$.tasks.{name}"
        body = self.mapping(body, where, TASK_KEYS, ("type", "dataset", "metrics"))
        if body["type"] not in TASK_TYPES:
            raise self.fail(f"{where}.type", f"unknown task type {body['type']!r}; known: {list(TASK_TYPES)}")
        dataset = self.mapping(body["dataset"], f"{where}.dataset", ("files_url",), ("files_url",))
        params = self.mapping(body.get("params") or {}, f"{where}.params", PARAM_KEYS)
        limits = {LIMITS[key]: self.limit(params[key], f"{where}.params.{key}", LIMITS[key])
                  for key in LIMITS if key in params}  # fmt: skip
        return Task(
            name=name,
            type=body["type"],
            where=where,
            files_url=self.text(dataset["files_url"], f"{where}.dataset.files_url"),
            metrics=self.metrics(body["metrics"], f"{where}.metrics"),
            judge_llm=self.endpoint(params.get("judge_llm"), f"{where}.params.judge_llm"),
            judge_embeddings=self.endpoint(params.get("judge_embeddings"), f"{where}.params.judge_embeddings"),
            limits=limits,
        )

    def limit(self, value: Any, where: str, name: str) -> int | float:
        """judge_llm's ``timeout`` (a finite number of seconds > 0), or its ``max_retries`` / ``max_workers``: a
        count within the judge server's ``caps`` (servers/judge/parameter.yaml), checked as the judge checks
        judge_llm, so a job the judge would refuse is refused here, before anything is compiled."""
        if name != "timeout":
            try:
                return capped_limit(value, name, server="judge", setting="judge_llm")
            except InputError as exc:
                raise self.fail(where, str(exc)) from None
        finite = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not finite or value <= 0:
            raise self.fail(where, f"expected a finite number of seconds > 0, got {json.dumps(value)}")
        return value

    def endpoint(self, value: Any, where: str) -> Endpoint | None:
        if value is None:
            return None
        body = self.mapping(value, where, ("api_endpoint",), ("api_endpoint",))
        api = self.mapping(body["api_endpoint"], f"{where}.api_endpoint", ENDPOINT_KEYS, ("url", "model_id"))
        if api.get("format", "nim") not in FORMATS:
            raise self.fail(
                f"{where}.api_endpoint.format",
                f"{api['format']!r} is not translated; {list(FORMATS)} (OpenAI-compatible endpoints) are",
            )
        key = api.get("api_key")
        if key is not None and not isinstance(key, str):
            raise self.fail(f"{where}.api_endpoint.api_key", 'expected a string such as "${NVIDIA_API_KEY}"')
        return Endpoint(
            f"{where}.api_endpoint",
            self.text(api["url"], f"{where}.api_endpoint.url"),
            self.text(api["model_id"], f"{where}.api_endpoint.model_id"),
            key,
        )

    def metrics(self, value: Any, where: str) -> list[Metric]:
        if not isinstance(value, dict) or not value:
            raise self.fail(where, 'expected an object of metrics, e.g. {"recall_5": {"type": "recall_5"}}')
        found = []
        for label, entry in value.items():
            spot = f"{where}.{label}"
            entry = self.mapping(entry, spot, ("type",), ("type",))
            name = self.text(entry["type"], f"{spot}.type")
            metric = lookup(str(label), name)
            if metric is None:
                raise self.fail(
                    f"{spot}.type",
                    f"unknown metric {name!r}; {did_you_mean(name)}the metrics translated: {', '.join(known_names())}",
                )
            found.append(metric)
        return found


def read_job(path: Path, data: Any) -> Job:
    """The checked job of ``data`` (the parsed JSON of ``path``)."""
    return JobReader(path).job(data)
