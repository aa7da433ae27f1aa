"""A checked NeMo job -> an ordinary pipeline file and the settings of its parameter file.

The pipeline reaches every tool by name, as any YAML pipeline does: ``benchmark.get_data``; for
``beir`` and ``squad`` tasks BM25 retrieval (the retriever server's default) and, when a metric
needs answers, generation with the generation server's configured model (as ``rag_full``); then
one step per metric family (``metrics.METRICS``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ultra_client.compat.nemo.datasets import TaskData
from ultra_client.compat.nemo.job import Endpoint, Job, Task
from ultra_client.compat.nemo.metrics import Metric
from ultra_client.errors import UltraError
from ultra_kit.settings import defaults

RETRIEVAL_TOP_K = 5  # passages retrieved per question when no recall_k / ndcg_cut_k asks for more
SECRET = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")
NEEDS_IN_WORDS = {
    "answers": "answers",
    "reference": "reference answers",
    "contexts": "contexts",
    "qrels": "judged documents (qrels)",
}
GENERATION_STEPS: list[Any] = [
    "prompt.qa_rag_boxed",
    "generation.generation_init",
    {"generation.generate": {"output": {"result_path": "generation_path"}, "timeout": 3600}},
    "custom.output_extract_from_boxed",
]


@dataclass
class Compiled:
    """The pipeline (``servers``, ``pipeline``), its settings, the secrets it references and where each score is."""

    servers: dict[str, str] = field(default_factory=dict)
    steps: list[Any] = field(default_factory=list)
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)  # environment variable -> the job's literal key
    scores: dict[str, tuple[str, str]] = field(default_factory=dict)  # metric label -> (variable, key)

    def add(self, server: str, *steps: Any, **settings: Any) -> None:
        self.servers.setdefault(server, f"servers/{server}")
        self.steps.extend(steps)
        self.settings.setdefault(server, {}).update(settings)


def compile_task(job: Job, task: Task, data: TaskData, stem: str) -> Compiled:
    """The pipeline of one task over its prepared data."""
    provides = set(data.provides) | ({"answers", "contexts"} if data.corpus else set())
    for metric in task.metrics:
        _check_needs(job, task, metric, provides)
    out = Compiled()
    benchmark = {**defaults("benchmark")["benchmark"], "name": task.name, "path": str(data.path)}
    out.add("benchmark", "benchmark.get_data", benchmark={**benchmark, "format": data.format, "key_map": data.key_map})
    ks = [m.k for m in task.metrics if m.k is not None]
    if data.corpus is not None:
        out.add(
            "retriever",
            "retriever.retriever_init",
            "retriever.retriever_index",
            "retriever.retriever_search",
            backend="bm25",
            corpus_path=str(data.corpus),
            index_path=f"output/index/nemo_{stem}",
            top_k=max([RETRIEVAL_TOP_K, *ks]),
        )
        if any("answers" in m.spec.needs for m in task.metrics):
            for server in ("prompt", "generation", "custom"):
                out.servers[server] = f"servers/{server}"
            out.steps.extend(GENERATION_STEPS)
    retrieval = [m for m in task.metrics if m.trec_name]
    if retrieval:
        out.add(
            "evaluation",
            {"evaluation.evaluate_trec": {"input": {"run": "run_path"}, "output": _renamed("eval_res", retrieval[0])}},
            qrels_path=str(data.qrels),
            ir_metrics=sorted({m.trec_name for m in retrieval}),
            ks=[],
            names="trec_eval",
        )
    contexts = {} if data.corpus else {"ret_psg": "ctx_ls"}
    for metric in task.metrics:
        out.scores[metric.label] = metric.score
        if metric.trec_name or any(metric.spec.tool in str(step) for step in out.steps):
            continue
        server, _ = metric.spec.tool.split(".")
        output = _renamed("eval_res" if server == "evaluation" else "aggregate", metric)
        if server == "judge":
            step = {"input": contexts, "output": output} if "contexts" in metric.spec.needs and contexts else {}
            out.add("judge", {metric.spec.tool: step or {"output": output}})
            out.settings["judge"]["judge_llm"] = _judge_llm(job, task, metric, out.secrets)
        else:
            embeddings = _embeddings(job, task, out.secrets)
            out.add(server, {metric.spec.tool: {"output": output}}, similarity_embeddings=embeddings)
    return out


def _renamed(result: str, metric: Metric) -> dict[str, str]:
    variable, _ = metric.score
    return {result: variable, "result_path": f"{variable.removesuffix('_scores')}_path"}


def _check_needs(job: Job, task: Task, metric: Metric, provides: set[str]) -> None:
    missing = [need for need in metric.spec.needs if need not in provides]
    if missing:
        lacking = " and ".join(NEEDS_IN_WORDS[need] for need in missing)
        raise UltraError(
            f"{job.path}: {task.where}.metrics.{metric.label}: {metric.type} needs {lacking}, which a "
            f"{task.type} task's dataset does not give here ({_what_gives(missing)})"
        )


def _what_gives(missing: list[str]) -> str:
    if "qrels" in missing:
        return "retrieval metrics need a beir or squad task; a ragas task's contexts are scored by context_precision"
    if "reference" in missing:
        return "reference answers come with a squad task, or a ragas file's ground_truths / reference column"
    return "a ragas file needs its answer / response and contexts / retrieved_contexts columns"


def base_url(url: str, *suffixes: str) -> str:
    """NeMo's endpoint url without its route (``.../v1/chat/completions`` -> ``.../v1``)."""
    url = url.rstrip("/")
    for suffix in suffixes:
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


def _key(endpoint: Endpoint, variable: str, secrets: dict[str, str]) -> str:
    """The api_key as the parameter file holds it: ``${VAR}`` as written, a literal key as a reference to
    ``variable``, which ``ultra run`` sets in its own environment (the key is never written to a file)."""
    key = endpoint.api_key or ""
    if not key or SECRET.match(key):
        return key
    secrets[variable] = key
    return f"${{{variable}}}"


def _judge_llm(job: Job, task: Task, metric: Metric, secrets: dict[str, str]) -> dict[str, Any]:
    llm = task.judge_llm
    if llm is None:
        raise UltraError(f"{job.path}: {task.where}.params.judge_llm: {metric.type} needs a judge_llm; it is missing")
    url = base_url(llm.url, "/chat/completions", "/completions")
    mapping = {**defaults("judge")["judge_llm"], "backend": "openai", "base_url": url, "model_id": llm.model_id}
    mapping.update(api_key=_key(llm, "NEMO_JUDGE_LLM_API_KEY", secrets), **task.limits)
    embeddings = task.judge_embeddings
    if embeddings is not None:
        if base_url(embeddings.url, "/embeddings") != url and {"answer_relevancy", "answer_correctness"} & {
            m.type for m in task.metrics
        }:
            raise UltraError(
                f"{job.path}: {embeddings.where}.url: answer_relevancy and answer_correctness take their embeddings "
                f"from judge_llm's endpoint here ({url}), so judge_embeddings must be served there too; "
                f"judge_embeddings at another host serves answer_similarity only"
            )
        mapping["embedding_model"] = embeddings.model_id
    return mapping


def _embeddings(job: Job, task: Task, secrets: dict[str, str]) -> dict[str, Any]:
    mapping = dict(defaults("evaluation")["similarity_embeddings"])
    endpoint = task.judge_embeddings
    if endpoint is not None:
        key = _key(endpoint, "NEMO_JUDGE_EMBEDDINGS_API_KEY", secrets)
        mapping.update(backend="openai", base_url=base_url(endpoint.url, "/embeddings"), model_id=endpoint.model_id)
        mapping.update(api_key=key, **task.limits)
    return mapping
