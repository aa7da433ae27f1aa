"""``evaluate``: predictions scored against golden answers with QA metrics.

It takes its data as variables from earlier pipeline steps (``benchmark.get_data`` maps ``pred_ls``
and ``gt_ls``) and writes one JSON file under ``save_path`` holding the per-item lists, the
``avg_<metric>`` means (UltraRAG's shape), the settings and the versions, and ``id_ls``, the item
ids the per-item lists are aligned with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from servers.evaluation.answers import metrics as answers
from servers.evaluation.answers.evaluate import run_evaluate
from servers.evaluation.results import EvaluateResult, SavePathParam
from ultra_kit.factory import tool_hints
from ultra_kit.progress import progress_from_context

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

GoldInput = str | list[str | list[str]]


@tool_hints(read_only=False, idempotent=True)
def evaluate(
    *,
    pred_ls: Annotated[
        list[str | None], Field(description="predictions, one per item; None = the system failed (skipped, counted)")
    ],
    gt_ls: Annotated[
        list[GoldInput],
        Field(
            description="golds per item: a string, a list of aliases, or a list of answer sets (lists of aliases); "
            '[] or "" = no answer (SQuAD v2)'
        ),
    ],
    id_ls: Annotated[
        list[Any] | None,
        Field(description="item ids, written with the per-item values in the result file (default: positions 0..n-1)"),
    ] = None,
    q_ls: Annotated[
        list[Any] | None,
        Field(
            description="questions, one per item (a text, or conversation turns whose texts are read): language "
            "auto detects each item's language in them (else in gt_ls)"
        ),
    ] = None,
    metrics: Annotated[Sequence[str], Field(description=f"answer metrics: {answers.describe_names()}")],
    normalize: Annotated[str, Field(description="squad, ultrarag or mlqa (English; other languages follow MLQA)")],
    language: Annotated[
        str,
        Field(
            description="ISO 639-1 code of the answers (MLQA's normalisation for it; zh/ja/th one token per "
            "character) or 'auto' (detect each item's language; extra languages)"
        ),
    ],
    rouge_stemmer: Annotated[bool, Field(description="Porter stemming inside rouge-1/2/l (rouge-score use_stemmer)")],
    wordnet_path: Annotated[
        str, Field(description="meteor: a WordNet directory; '' = NLTK data or /usr/share/wordnet")
    ],
    language_min_confidence: Annotated[
        float, Field(description="answer_language: flag only answers detected in another language this surely (0-1)")
    ],
    save_path: SavePathParam,
    ctx: Context | None = None,
) -> EvaluateResult:
    """Score predictions against golden answers with QA metrics (UltraRAG's `evaluate`, exact ROUGE).

    The metrics are listed with the `metrics` field; each is the maximum over an item's golds,
    except stringem (mean over answer sets) and bleu (all golds are references). An item without
    an answer scores 1 if the prediction normalises to nothing (SQuAD v2), with HasAns/NoAns means.
    Returns eval_res with a per-item list per metric and avg_<metric>, and writes it with id_ls to a JSON file.
    An item whose prediction is None (target.ask: the system failed) is left out and listed in
    settings.failed_items.
    """
    return run_evaluate(
        pred_ls,
        gt_ls,
        id_ls=id_ls,
        q_ls=q_ls,
        metrics=metrics,
        normalize=normalize,
        language=language,
        rouge_stemmer=rouge_stemmer,
        wordnet_path=wordnet_path,
        language_min_confidence=language_min_confidence,
        save_path=save_path,
        progress=progress_from_context(ctx),
    )


TOOLS = [evaluate]
