"""An answer item (``Item``): one prediction with its golds, normalised and tokenised lazily and once;
the golds read as answer sets (``answer_sets``), the inputs checked (``check_inputs``), and what a
metric kernel reads (``Batch``) and returns (``Scored``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from servers.evaluation.answers.normalize import normalize_gold
from servers.evaluation.answers.per_language import LanguageRules
from servers.evaluation.answers.rouge import RougeText
from ultra_base.errors import InputError

Gold = str | Sequence[str] | Sequence[Sequence[str]]


@dataclass(frozen=True)
class Scored:
    """A metric's value per item, and any extra result keys (corpus_bleu)."""

    values: list[float]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Batch:
    """All items of one call, and the settings a metric may read."""

    items: list[Item]
    wordnet_path: str
    language_min_confidence: float


class Item:
    """One prediction with its golds, normalised and tokenised lazily and only once."""

    def __init__(self, prediction: str, answer_sets: list[list[str]], rules: LanguageRules):
        self.prediction = prediction
        self.answer_sets = answer_sets
        self.golds = [alias for answer_set in answer_sets for alias in answer_set]
        self.language = rules.language
        self._normalize = rules.normalize
        self._rouge = rules.rouge
        self._mlqa = rules.mlqa

    @cached_property
    def pred_norm(self) -> str:
        return self._normalize(self.prediction)

    @cached_property
    def pred_tokens(self) -> list[str]:
        return self.pred_norm.split()

    @cached_property
    def gold_norms(self) -> dict[str, str]:
        """Each distinct gold alias -> its normalised text."""
        return {gold: normalize_gold(gold, self._normalize) for gold in self.golds}

    @cached_property
    def matched_golds(self) -> list[str]:
        """The normalised golds EM, acc and F1 compare with, as the official scripts treat a gold that normalises to
        nothing ("A", "?", "。", Spanish "La"): SQuAD v2's drops it, and an item left with no gold is compared with
        the empty answer (a prediction that normalises to nothing scores 1); MLQA's keeps it (it equals such a
        prediction). The other metrics read ``gold_norms``, where such a gold keeps its raw text."""
        norms = list(dict.fromkeys(self._normalize(gold) for gold in self.golds))
        if self._mlqa:
            return norms
        return [norm for norm in norms if norm] or [""]

    @cached_property
    def gold_tokens(self) -> list[list[str]]:
        return [norm.split() for norm in dict.fromkeys(self.gold_norms.values())]

    @cached_property
    def pred_rouge(self) -> RougeText:
        return self._rouge.text(self.pred_norm)

    @cached_property
    def gold_rouge(self) -> list[RougeText]:
        return [self._rouge.text(norm) for norm in dict.fromkeys(self.gold_norms.values())]

    @cached_property
    def overlap(self) -> list[tuple[float, float, float]]:
        """SQuAD (precision, recall, f1) against each of ``matched_golds``."""
        empty_agrees = not self._mlqa  # SQuAD v2: an empty gold and an empty prediction agree; MLQA: F1 0
        return [token_overlap(self.pred_tokens, gold.split(), empty_agrees) for gold in self.matched_golds]


def token_overlap(
    prediction: Sequence[str], gold: Sequence[str], empty_agrees: bool = False
) -> tuple[float, float, float]:
    """SQuAD token precision, recall and F1 (multiset intersection); zeros when nothing is shared. With
    ``empty_agrees`` (SQuAD v2's script), a side without tokens scores 1 if the other has none either, else 0."""
    if empty_agrees and (not prediction or not gold):
        agree = float(not prediction and not gold)
        return agree, agree, agree
    common = Counter(prediction) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0, 0.0, 0.0
    precision = same / len(prediction)
    recall = same / len(gold)
    return precision, recall, 2 * precision * recall / (precision + recall)


def answer_sets(gold: Any, index: int) -> list[list[str]]:
    """An item's golds as answer sets: a string is one set; in a list, a string is its own set.

    Empty (white-space) aliases and empty sets are dropped, as SQuAD v2's script drops empty golds;
    ``[]`` back means the item has no answer.
    """
    if isinstance(gold, str):
        sets = [[gold]]
    elif isinstance(gold, (list, tuple)):
        sets = []
        for entry in gold:
            if isinstance(entry, str):
                sets.append([entry])
            elif isinstance(entry, (list, tuple)) and all(isinstance(a, str) for a in entry):
                sets.append(list(entry))
            else:
                raise InputError(
                    f"gt_ls[{index}]: expected a string, a list of strings or a list of lists of strings, "
                    f"found the entry {entry!r}"
                )
    else:
        raise InputError(
            f'gt_ls[{index}]: expected a gold answer (a string or a list; [] or "" for no answer), found {gold!r}'
        )
    sets = [[alias for alias in answer_set if alias.strip()] for answer_set in sets]
    return [answer_set for answer_set in sets if answer_set]


def check_inputs(pred_ls: Any, gt_ls: Any) -> None:
    """Predictions and golds must be equally long, non-empty lists; predictions strings."""
    if not isinstance(pred_ls, (list, tuple)) or not isinstance(gt_ls, (list, tuple)):
        raise InputError("pred_ls and gt_ls must be lists (one entry per item)")
    if not pred_ls:
        raise InputError("pred_ls is empty: there is nothing to evaluate")
    if len(pred_ls) != len(gt_ls):
        raise InputError(
            f"pred_ls has {len(pred_ls)} predictions but gt_ls has {len(gt_ls)} golds; they are aligned by "
            "position and must have equal length"
        )
    for index, prediction in enumerate(pred_ls):
        if not isinstance(prediction, str):
            raise InputError(f"pred_ls[{index}] is a {type(prediction).__name__}, expected a string")
