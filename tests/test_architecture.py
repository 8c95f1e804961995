"""Arrows point down: the core never imports the simulation, the figures or their libraries."""

import subprocess
import sys

import pytest

CORE = [
    "rmqlib",
    "rmqlib.model",
    "rmqlib.hashring",
    "rmqlib.strategies",
    "rmqlib.allocation",
    "rmqlib.protocol",
    "rmqlib.client",
    "rmqlib.broker",
    "rmqlib.proxy",
    "rmqlib.cli",
    "rmqlib.kafka",
]
FORBIDDEN = ["simpy", "plotly", "ipywidgets", "anywidget", "rmqlib.sim", "rmqlib.viz", "tqdm"]


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_simulation_or_plotting(module):
    code = (
        f"import sys, {module}\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r} or m in {FORBIDDEN!r})\n"
        "print(','.join(bad))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "", f"{module} pulls in {done.stdout.strip()}"


def test_simulation_imports_no_plotting():
    code = (
        "import sys, rmqlib.sim\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('plotly', 'ipywidgets'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
