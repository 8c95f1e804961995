"""Root pytest hooks: report how long the notebook suite (nbval items) took; make hypothesis reproducible; start
nbval's kernels on IPC files; fail a Chinese chapter's cell whose figure shows English."""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
import uuid
from pathlib import Path

import nbval.kernel
import pytest
from hypothesis import settings
from jupyter_client.manager import KernelManager

# The same examples on every run and every machine (a property test that fails, fails every time), and no
# example database written into the reader's checkout.
settings.register_profile("rmqlib", derandomize=True, database=None)
settings.load_profile("rmqlib")

# nbval's kernels listen on IPC files in a folder of this process, not on TCP ports. With the suite on every core,
# a port that jupyter_client found free can be taken before the kernel binds it; that kernel dies unseen (nbval
# sends its stderr to /dev/null) and nbval waits out the whole startup timeout, failing every cell of the notebook.
_KERNEL_SOCKETS = Path(tempfile.mkdtemp(prefix="rmqlib-kernels-"))
atexit.register(shutil.rmtree, _KERNEL_SOCKETS, ignore_errors=True)


class _IpcKernelManager(KernelManager):
    """A KernelManager whose kernel talks over its own IPC files (the browser tests start JupyterLab's the same way)."""

    def __init__(self, **kwargs):
        super().__init__(transport="ipc", ip=str(_KERNEL_SOCKETS / uuid.uuid4().hex[:12]), **kwargs)


nbval.kernel.KernelManager = _IpcKernelManager  # what nbval.kernel.start_new_kernel builds

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
