"""Every metric's declared kind matches the values it produces (binary: 0 or 1 per item; graded: a few
grades; continuous: finite numbers; a count: whole numbers), over every entry of the registries, so a
new entry is checked too. Metrics whose optional package or data is missing here are skipped by name."""

from __future__ import annotations

import importlib.util
import math

import pytest

from servers.evaluation.answers import metrics as answers
from servers.evaluation.answers.meteor import wordnet_available
from servers.evaluation.mtrag import metrics as mtrag
from tests.evaluation.helpers import SETTINGS, score_answers, score_mtrag
from tests.trec.test_cutoffs import QRELS, RUN
from ultra_trec.engine import evaluate
from ultra_trec.measures import FAMILIES, Measure

PREDICTIONS = ["Paris is the capital", "", "the cat sat", "forty two", "Berlin", "no idea at all here"]
GOLDS = [["Paris"], [], ["a cat sat on the mat", "the cat"], ["42", "forty-two"], ["Bonn"], [["idea"], ["here"]]]
# what each extra needs here besides its package: the metric is skipped when it is absent
EXTRA_PACKAGES = {"bleu": "sacrebleu", "meteor": "nltk", "languages": "lingua", "bertscore": "transformers"}


def fits(kind: str, values: list[float]) -> bool:
    finite = all(isinstance(v, int | float) and math.isfinite(v) for v in values)
    if kind == "binary":
        return finite and set(values) <= {0, 1}
    if kind == "graded":
        return finite and len(set(values)) <= 10
    if kind == "count":
        return finite and all(float(v).is_integer() and v >= 0 for v in values)
    return finite and kind == "continuous"


def available(metric: answers.Metric | mtrag.MtragMetric) -> bool:
    package = EXTRA_PACKAGES.get(metric.extra or "")
    if package and importlib.util.find_spec(package) is None:
        return False
    return metric.name != "meteor" or wordnet_available(SETTINGS["wordnet_path"])


def test_the_kind_check_refuses_what_a_wrong_kind_would_give() -> None:
    assert fits("binary", [0, 1.0]) and not fits("binary", [0, 0.5])
    assert fits("count", [3, 0]) and not fits("count", [1.5]) and not fits("continuous", [math.nan])


@pytest.mark.parametrize("name", list(answers.METRICS))
def test_each_answer_metric_gives_values_of_its_kind(name: str) -> None:
    metric = answers.METRICS[name]
    if not available(metric):
        pytest.skip(f"{name}: its extra {metric.extra} (or its data) is not installed here")
    values = score_answers(PREDICTIONS, GOLDS, [name], language="en")[name]
    assert len(values) == len(PREDICTIONS) and fits(metric.kind, values), (metric.kind, values)


@pytest.mark.parametrize("name", [m.name for m in mtrag.METRICS.values() if not m.extra])
def test_each_lexical_mtrag_metric_gives_values_of_its_kind(name: str) -> None:
    metric = mtrag.METRICS[name]
    result = score_mtrag(
        PREDICTIONS[:3], ["Paris", "nothing", "the cat"], [["Paris is nice"], [], ["a cat"]], mtrag_metrics=[name]
    )
    own = result[f"{name}_max"] if metric.per_passage else result[name]
    assert fits(metric.kind, [v for v in own if v is not None]), (metric.kind, own)


@pytest.mark.parametrize("family", list(FAMILIES.values()), ids=list(FAMILIES))
def test_each_measure_family_gives_values_of_its_kind(family) -> None:
    measure = (
        Measure(family.name, 10 if family.param == "rank" else 0.5)
        if family.cutoff == "required"
        else Measure(family.name)
    )
    result = evaluate(QRELS, RUN, [measure])
    if family.kind == "text":
        assert all(isinstance(v, str) for v in result.text[measure.name])
        return
    assert fits(family.kind, [result.aggregate[measure.name]]), (family.kind, result.aggregate[measure.name])
