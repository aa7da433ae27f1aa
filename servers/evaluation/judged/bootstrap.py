"""Paired comparison of two systems whose items carry k judge samples each: the hierarchical bootstrap (resample
queries, then judge samples within each query) lives in the library, ``ultra_trec.significance.compare_samples``
(shared with the report's ``compare``); this module names it for the evaluation server's ``compare_judged``."""

from __future__ import annotations

from ultra_trec.significance import compare_samples, resampled_differences

__all__ = ["compare_samples", "resampled_differences"]
