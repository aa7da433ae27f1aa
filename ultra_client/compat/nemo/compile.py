"""A checked NeMo job -> an ordinary pipeline file and the settings of its parameter file.

The pipeline reaches every tool by name, as any YAML pipeline does, with the stages and metric steps
of ``translation.yaml``: the dataset; for ``beir`` and ``squad`` tasks BM25 retrieval (the retriever
server's default) and, when a metric needs answers, generation with the generation server's
configured model (as ``rag_full``); then one step per metric family.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ultra_base.variable_counts import reference
from ultra_client.compat.nemo.datasets import TaskData
from ultra_client.compat.nemo.job import Endpoint, Job, Task
from ultra_client.compat.nemo.metrics import STAGES, Metric
from ultra_client.errors import UltraError
from ultra_kit.settings import defaults

CHAT_ROUTES = ("/chat/completions", "/completions")  # NeMo's judge_llm url ends in one of them
RETRIEVAL_TOP_K = 5  # passages retrieved per question when no recall_k / ndcg_cut_k asks for more
NEEDS_IN_WORDS = {
    "answers": "answers",
    "reference": "reference answers",
    "contexts": "contexts",
    "qrels": "judged documents (qrels)",
    "embeddings": "embeddings",
}


@dataclass
class Compiled:
    """The pipeline (``servers``, ``pipeline``), its settings, the secrets it references and where each score is."""

    servers: dict[str, str] = field(default_factory=dict)
    steps: list[Any] = field(default_factory=list)
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)  # environment variable -> the job's literal key
    scores: dict[str, tuple[str, str]] = field(default_factory=dict)  # metric label -> (variable, key)

    def add(self, steps: list[Any], **settings: Any) -> None:
        """Steps (``server.tool`` or ``{server.tool: {input, output, timeout}}``), their servers, and settings
        of the first step's server."""
        for step in steps:
            self.servers.setdefault(_server(step), f"servers/{_server(step)}")
        self.steps.extend(steps)
        if settings:
            self.settings.setdefault(_server(steps[0]), {}).update(settings)


def _server(step: Any) -> str:
    return _step_name(step).split(".", 1)[0]


def compile_task(job: Job, task: Task, data: TaskData, stem: str) -> Compiled:
    """The pipeline of one task over its prepared data."""
    provides = set(data.provides) | ({"answers", "contexts"} if data.corpus else set())
    if task.judge_embeddings is None or _embeddings_with_llm(task):
        provides.add("embeddings")
    for metric in task.metrics:
        _check_needs(job, task, metric, provides)
    out = Compiled()
    benchmark = {**defaults("benchmark")["benchmark"], "name": task.name, "path": str(data.path)}
    out.add(STAGES["load"], benchmark={**benchmark, "format": data.format, "key_map": data.key_map})
    if data.corpus is not None:
        top_k = max([RETRIEVAL_TOP_K, *(m.k for m in task.metrics if m.k is not None)])
        retriever = {"corpus_path": str(data.corpus), "index_path": f"output/index/nemo_{stem}", "top_k": top_k}
        out.add(STAGES["retrieve"], backend="bm25", **retriever)
        if any("answers" in m.spec.needs for m in task.metrics):
            out.add(STAGES["answer"])
    contexts = {} if data.corpus else {"ret_psg": "ctx_ls"}  # a ragas task: the contexts given
    for metric in task.metrics:
        out.scores[metric.label] = metric.score
        if metric.spec.step in {_step_name(step) for step in out.steps}:
            continue  # one step scores every metric it gives (recall_5 and ndcg_cut_10 alike)
        variable, _ = metric.score
        given = {**metric.spec.input, **(contexts if "contexts" in metric.spec.needs else {})}
        step: dict[str, Any] = {"input": given} if given else {}
        step["output"] = {metric.spec.result: variable, "result_path": f"{variable.removesuffix('_scores')}_path"}
        if metric.spec.setting == "ir_metrics":
            out.add(STAGES["judged"], qrels_path=str(data.qrels))
        out.add([{metric.spec.step: step}], **_settings(job, task, metric, data, out.secrets))
    return out


def _step_name(step: Any) -> str:
    return str(step if isinstance(step, str) else next(iter(step)))


def _settings(job: Job, task: Task, metric: Metric, data: TaskData, secrets: dict[str, str]) -> dict[str, Any]:
    """The settings of the step that scores ``metric``, by the setting the table names."""
    if metric.spec.setting == "ir_metrics":
        measures = sorted({m.measure for m in task.metrics if m.spec.setting == "ir_metrics"})
        return {"qrels_path": str(data.qrels), "ir_metrics": measures, "ks": [], "names": "trec_eval"}
    if metric.spec.setting == "judge_llm":
        return {"judge_llm": _judge_llm(job, task, metric, secrets)}
    return {metric.spec.setting: _embeddings(task, secrets)}


def _check_needs(job: Job, task: Task, metric: Metric, provides: set[str]) -> None:
    missing = [need for need in metric.spec.needs if need not in provides]
    where = f"{job.path}: {task.where}.metrics.{metric.label}: {metric.type}"
    if "embeddings" in missing:
        raise UltraError(
            f"{where} takes its embeddings from judge_llm's endpoint here (judge_llm.embedding_model = "
            "judge_embeddings.model_id), so judge_embeddings must be served there too (the same host as "
            "judge_llm's url); judge_embeddings at another host serves answer_similarity only"
        )
    if missing:
        lacking = " and ".join(NEEDS_IN_WORDS[need] for need in missing)
        raise UltraError(
            f"{where} needs {lacking}, which a {task.type} task's dataset does not give here ({_what_gives(missing)})"
        )


def _what_gives(missing: list[str]) -> str:
    if "qrels" in missing:
        return "retrieval metrics need a beir or squad task; a ragas task's contexts are scored by context_precision"
    if "reference" in missing:
        return "reference answers come with a squad task, or a ragas file's ground_truths / reference column"
    return "a ragas file needs its answer / response and contexts / retrieved_contexts columns"


def _embeddings_with_llm(task: Task) -> bool:
    """judge_embeddings is served where judge_llm is (or there is no judge_llm to compare with)."""
    if task.judge_llm is None or task.judge_embeddings is None:
        return True
    return base_url(task.judge_embeddings.url, "/embeddings") == base_url(task.judge_llm.url, *CHAT_ROUTES)


def base_url(url: str, *suffixes: str) -> str:
    """NeMo's endpoint url without its route (``.../v1/chat/completions`` -> ``.../v1``)."""
    url = url.rstrip("/")
    for suffix in suffixes:
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


def _key(endpoint: Endpoint, variable: str, secrets: dict[str, str]) -> str:
    """The api_key as the parameter file holds it: exactly one ``${VAR}`` (``ultra_base.variable_counts.reference``)
    as written, anything else as a literal key, referenced as ``variable``, which ``ultra run`` sets in its own
    environment (the key is never written to a file)."""
    key = endpoint.api_key or ""
    if not key or reference(key) is not None:
        return key
    secrets[variable] = key
    return f"${{{variable}}}"


def _judge_llm(job: Job, task: Task, metric: Metric, secrets: dict[str, str]) -> dict[str, Any]:
    llm = task.judge_llm
    if llm is None:
        raise UltraError(f"{job.path}: {task.where}.params.judge_llm: {metric.type} needs a judge_llm; it is missing")
    url = base_url(llm.url, *CHAT_ROUTES)
    mapping = {**defaults("judge")["judge_llm"], "backend": "openai", "base_url": url, "model_id": llm.model_id}
    mapping.update(api_key=_key(llm, "NEMO_JUDGE_LLM_API_KEY", secrets), **task.limits)
    if task.judge_embeddings is not None:
        mapping["embedding_model"] = task.judge_embeddings.model_id
    return mapping


def _embeddings(task: Task, secrets: dict[str, str]) -> dict[str, Any]:
    mapping = dict(defaults("evaluation")["similarity_embeddings"])
    endpoint = task.judge_embeddings
    if endpoint is not None:
        key = _key(endpoint, "NEMO_JUDGE_EMBEDDINGS_API_KEY", secrets)
        mapping.update(backend="openai", base_url=base_url(endpoint.url, "/embeddings"), model_id=endpoint.model_id)
        mapping.update(api_key=key, **task.limits)
    return mapping
