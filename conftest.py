"""Root pytest hooks: report how long the notebook suite (nbval items) took; make hypothesis reproducible; fail a
Chinese chapter's cell whose figure shows English."""

from __future__ import annotations

import re

import pytest
from hypothesis import settings

# The same examples on every run and every machine (a property test that fails, fails every time), and no
# example database written into the reader's checkout.
settings.register_profile("rmqlib", derandomize=True, database=None)
settings.load_profile("rmqlib")

_notebook_time: dict[str, float] = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    if path.endswith(".ipynb"):
        _notebook_time[path] = _notebook_time.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _notebook_time:
        return
    total = sum(_notebook_time.values())
    terminalreporter.write_sep("-", "notebook timings")
    for path, seconds in sorted(_notebook_time.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{seconds:6.1f} s  {path}")
    terminalreporter.write_line(f"notebook suite: {len(_notebook_time)} notebooks, {total:.1f} s")


# ---------------------------------------------------------------- the Chinese edition's figures
# A label of a figure drawn by a Chinese chapter must be Chinese: it fails its cell when it has no CJK character but
# an English word. Java and RocketMQ names (CONSISTENT_HASH), client ids, broker and topic names and settings
# written as name=value stay as they are.
_CJK = re.compile(r"[\u4e00-\u9fff]")
_KEPT = re.compile(r"<[^>]+>|`[^`]*`|%\{[^}]*\}|\b\w+=\S+|\b[A-Z][A-Z0-9_]{2,}\b|\S*[@_\-]\S*|\bTopic\w*")
_WORD = re.compile(r"\b[a-z]{3,}\b")


def _english_labels(outputs) -> list[str]:
    found = []
    for output in outputs:
        figure = output.get("data", {}).get("application/vnd.plotly.v1+json")
        if not figure:
            continue
        layout = figure.get("layout", {})
        labels = [layout.get("title")] + [
            value.get("title") for key, value in layout.items() if key.startswith(("xaxis", "yaxis"))
        ]
        labels = [label.get("text") if isinstance(label, dict) else label for label in labels]
        labels += [trace.get("name") for trace in figure.get("data", [])]
        labels += [note.get("text") for note in layout.get("annotations", []) or []]
        found += [
            label
            for label in labels
            if isinstance(label, str) and not _CJK.search(label) and _WORD.search(_KEPT.sub(" ", label))
        ]
    return found


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    outputs = getattr(item, "test_outputs", None)
    if report.when != "call" or not report.passed or not outputs or "/zh/" not in item.nodeid.replace("\\", "/"):
        return
    english = _english_labels(outputs)
    if english:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid}: a figure of the Chinese edition shows English: {english}. "
            "Add the Chinese to rmqlib/viz/messages.py (ZH, or PATTERNS for text with numbers)."
        )
