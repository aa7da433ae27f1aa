"""Judged numbers with their uncertainty: prediction-powered means (``ppi``), judge-noise-aware comparisons
(``bootstrap``), and the readers of judge scores and human labels (``inputs``)."""
