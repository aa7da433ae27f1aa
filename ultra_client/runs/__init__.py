"""Tracked runs: the SQLite index under the output folder (``index``) and ``ultra runs`` (``cli``)."""
