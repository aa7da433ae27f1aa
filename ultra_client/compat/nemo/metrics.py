"""NeMo's RAG metric names -> our tool and setting: the one table the translation, its errors and the docs read.

A NeMo metric is ``{"type": NAME}``; a retrieval metric carries its cutoff in the name (``recall_5``,
``ndcg_cut_10``). Each entry says which step scores it, what the item needs (answers, reference
answers, contexts, judged documents) and where the step's result holds the mean over items.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class MetricSpec:
    """How one NeMo metric is scored here."""

    tool: str  # server.tool of the step that scores it
    needs: tuple[str, ...]  # of: answers, reference, contexts, qrels
    score: str  # where the mean is, in the step's renamed outputs: "<variable>.<key>" ({k} for a cutoff)
    note: str  # the translation in words (docs/compat-nemo.md shows it)


# NAME (or NAME_{k} for a cutoff) -> its translation. A new metric is one entry here.
METRICS: dict[str, MetricSpec] = {
    "recall_{k}": MetricSpec(
        "evaluation.evaluate_trec", ("qrels",), "retrieval_scores.recall_{k}", "trec_eval recall_k over the qrels"
    ),
    "ndcg_cut_{k}": MetricSpec(
        "evaluation.evaluate_trec",
        ("qrels",),
        "retrieval_scores.ndcg_cut_{k}",
        "trec_eval ndcg_cut_k over the task's qrels",
    ),
    "faithfulness": MetricSpec(
        "judge.faithfulness", ("answers", "contexts"), "faithfulness_scores.faithfulness", "judge_llm"
    ),
    "answer_relevancy": MetricSpec(
        "judge.answer_relevancy",
        ("answers",),
        "answer_relevancy_scores.answer_relevancy",
        "judge_llm; embeddings judge_embeddings.model_id on judge_llm's endpoint",
    ),
    "answer_correctness": MetricSpec(
        "judge.answer_correctness",
        ("answers", "reference"),
        "answer_correctness_scores.answer_correctness",
        "judge_llm; embeddings judge_embeddings.model_id on judge_llm's endpoint",
    ),
    "answer_similarity": MetricSpec(
        "evaluation.semantic_similarity",
        ("answers", "reference"),
        "similarity_scores.avg_semantic_similarity",
        "semantic_similarity with similarity_embeddings = judge_embeddings",
    ),
    "context_precision": MetricSpec(
        "judge.context_precision",
        ("contexts", "reference"),
        "context_precision_scores.context_precision",
        "judge_llm",
    ),
    "context_recall": MetricSpec(
        "judge.context_recall", ("contexts", "reference"), "context_recall_scores.context_recall", "judge_llm"
    ),
}

CUTOFF = re.compile(r"^(?P<stem>[a-z_]+?)_(?P<k>[0-9]+)$")


@dataclass(frozen=True)
class Metric:
    """A metric of the job: its name in the job (the result key), its NeMo type, and its translation."""

    label: str
    type: str
    spec: MetricSpec
    k: int | None = None

    @property
    def score(self) -> tuple[str, str]:
        """(variable, key) of the mean in the run's memory."""
        variable, key = self.spec.score.format(k=self.k).split(".", 1)
        return variable, key

    @property
    def trec_name(self) -> str | None:
        """The evaluate_trec measure of a retrieval metric (trec_eval's own name, e.g. ``recall_5``)."""
        return self.spec.score.split(".", 1)[1].format(k=self.k) if "qrels" in self.spec.needs else None


def lookup(label: str, name: str) -> Metric | None:
    """The metric called ``name`` (a NeMo type), or None if there is no such metric."""
    if name in METRICS and "{k}" not in name:
        return Metric(label, name, METRICS[name])
    match = CUTOFF.match(name)
    if match and int(match["k"]) > 0 and f"{match['stem']}_{{k}}" in METRICS:
        return Metric(label, name, METRICS[f"{match['stem']}_{{k}}"], int(match["k"]))
    return None


def known_names() -> list[str]:
    """The metric names as the docs and errors show them (``recall_<k>``)."""
    return [name.replace("{k}", "<k>") for name in METRICS]


def did_you_mean(name: str) -> str:
    """'did you mean X?' for an unknown metric name (cutoff names tried with the name's own number), or ''."""
    digits = re.findall(r"[0-9]+", name)
    k = digits[-1] if digits else "5"
    candidates = [pattern.format(k=k) for pattern in METRICS]
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"did you mean {close[0]}? " if close else ""
