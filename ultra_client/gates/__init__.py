"""Gates: conditions on a run's scalar results that decide ``ultra run``'s exit status (docs/ci.md).

``spec`` (a ``gate:`` block or file, checked at file:line), ``verdict`` (the conditions judged against a run
folder and a baseline), ``junit`` (JUnit XML for CI systems) and ``cli`` (``ultra run --gate`` and
``ultra gate RUN``).
"""

from __future__ import annotations

PASS, FAIL, ERROR = "pass", "fail", "error"
EXIT_CODES = {PASS: 0, FAIL: 1, ERROR: 2}  # a gate that cannot be evaluated outranks a failed one
FAILED_FRACTION = "failed_fraction"  # judged items that failed, of all judged items, over the whole run
