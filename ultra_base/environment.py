"""The names of the environment variables ultra-eval reads, declared once (the values are the user's)."""

from __future__ import annotations

PROJECT_ROOT_ENV = "ULTRA_HOME"  # the project folder (a server started with it works there)
OUTPUT_ROOT = "output"  # results go under <working directory>/output/
READ_ROOTS_ENV = "ULTRA_READ_ROOTS"  # more folders tools may read, os.pathsep-separated
ESTIMATE_ENV = "ULTRA_LLM_ESTIMATE"  # ultra run --estimate: the ledger of unsent requests (ultra_llm.estimate)
ALLOW_OUTSIDE_READS_ENV = "ULTRA_ALLOW_OUTSIDE_READS"  # 1: tools read any file (a trusted local user)
SECRET_NAMES_ENV = "ULTRA_SECRET_VARS"  # comma-separated variable names whose values a server must not echo
