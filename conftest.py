"""Root pytest hooks: report how long the notebook suite (nbval items) took; make hypothesis reproducible."""

from __future__ import annotations

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
