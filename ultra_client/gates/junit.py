"""The gate's verdicts as JUnit XML, the report format CI systems read (GitHub Actions, GitLab, Jenkins).

The common shape (Jenkins' and GitLab's readers): ``<testsuites>`` holding one ``<testsuite name tests
failures errors skipped time timestamp>`` holding one ``<testcase classname name time>`` per condition;
a failed condition has a ``<failure message type>`` child, one that could not be evaluated an ``<error>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

from ultra_client.errors import write_output
from ultra_client.gates import ERROR, FAIL
from ultra_client.gates.direction import word
from ultra_client.gates.verdict import Verdict
from ultra_client.summary.lines import cell
from ultra_kit.files import atomic_write_text


def junit_xml(verdicts: list[Verdict], suite: str) -> str:
    """The XML document (UTF-8 declaration included) for the verdicts of one gate over run ``suite``."""
    failures = sum(1 for v in verdicts if v.status == FAIL)
    errors = sum(1 for v in verdicts if v.status == ERROR)
    counts = {"tests": str(len(verdicts)), "failures": str(failures), "errors": str(errors)}
    root = ET.Element("testsuites", name="ultra gate", **counts, time="0")
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    testsuite = ET.SubElement(root, "testsuite", name=suite, **counts, skipped="0", time="0", timestamp=stamp)
    for verdict in verdicts:
        case = ET.SubElement(testsuite, "testcase", classname=f"ultra.gate.{suite}", name=verdict.describe(), time="0")
        details = (
            f"value {cell(verdict.value)}, baseline {cell(verdict.baseline)}, {word(verdict.higher_is_better)} is "
            f"better; {verdict.message or verdict.status}"
            f" ({verdict.condition.where})"
        )
        if verdict.status == FAIL:
            ET.SubElement(case, "failure", message=verdict.message or "failed", type="GateFailed").text = details
        elif verdict.status == ERROR:
            ET.SubElement(case, "error", message=verdict.message, type="GateNotEvaluated").text = details
        else:
            ET.SubElement(case, "system-out").text = details
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: str | Path, verdicts: list[Verdict], suite: str) -> Path:
    """Write the JUnit XML atomically (no half-written report for the CI to read); return its path."""
    target = Path(path)
    write_output(target, lambda p: atomic_write_text(p, junit_xml(verdicts, suite)))
    return target
