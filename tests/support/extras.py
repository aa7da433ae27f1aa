"""Skip a test module whose optional package is absent, without importing the package at collection.

``pytest.importorskip`` at module level imports the package while pytest collects, which costs seconds
for mlflow, wandb, nltk or openai on every run, selected or not; ``find_spec`` only looks it up.
"""

from __future__ import annotations

import importlib.util

import pytest


def requires(module: str, reason: str | None = None) -> pytest.MarkDecorator:
    """A ``skipif`` marker: skip when ``module`` cannot be found (its parent package is imported to look)."""
    try:
        present = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        present = False
    return pytest.mark.skipif(not present, reason=reason or f"{module} is not installed")
