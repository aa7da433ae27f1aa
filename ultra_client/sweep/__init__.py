"""``ultra sweep``: run a pipeline over a grid, random or Bayesian search of its settings.

``cli`` (options and output), ``spec`` (what is searched, checked), ``search`` (the trial order),
``run`` (servers started once, trials run), ``trials`` (one trial's run and its files), ``results``
(ranking and paired tests) and ``report`` (terminal table and plots). A study shared by many workers:
``storage`` (Optuna's storage and the study's stored sweep), ``worker`` (claims, heartbeats, retries),
``status`` (progress and rows read back from the storage) and ``shared`` (``--status``, ``--report``, ``--workers``).
"""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {  # the only place a sweep option's default is written
    "seed": 42,  # the seed of --random and --bayes (and nothing else)
    "minimize": None,  # rank by the metric in its declared direction: highest first, lowest for a lower-is-better one
    "output_dir": "output/{stem}_sweep",  # {stem}: the pipeline file's name without .yaml
    "max_trials": 10_000,  # a grid or --random/--bayes N above this is refused before anything runs
    "heartbeat": 10,  # seconds between a shared study's heartbeats; a trial silent for 3 times that is retried
}
