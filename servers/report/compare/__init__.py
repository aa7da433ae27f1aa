"""Paired comparison of runs (``ultra compare`` and the report's comparison section)."""
