"""The Java harnesses in tools/java refuse bad arguments by name before they look for a JDK or a checkout."""

import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "java" / "time_consistent_hash.py"


def _load():
    spec = importlib.util.spec_from_file_location("time_consistent_hash", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("argv", "named"), [(["--repo", ".", "--calls", "0"], "--calls"), ([], "--repo")])
def test_the_timing_harness_names_a_bad_argument_and_exits_2(argv, named, capsys):
    with pytest.raises(SystemExit) as stopped:
        _load().main(argv)
    assert stopped.value.code == 2 and named in capsys.readouterr().err
