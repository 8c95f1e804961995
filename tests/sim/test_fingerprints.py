"""The ready-made scenarios give exactly the results they gave when the fingerprints were stored.

A refactor of the simulator must leave every digest as it is (``tools/scenario_fingerprints.py``);
a change meant to alter behaviour rewrites them with ``--write`` and says so in its commit.
"""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import scenario_fingerprints as fp  # noqa: E402

STORED = json.loads(fp.STORE.read_text(encoding="utf-8"))


def test_every_case_has_a_stored_fingerprint():
    assert sorted(STORED) == sorted(fp.CASES)


@pytest.mark.parametrize("case", sorted(fp.CASES))
def test_scenario_result_is_unchanged(case):
    name, overrides = fp.CASES[case]
    result = fp.simulate(fp.scenarios.ALL[name](**overrides), seed=fp.SEED)
    assert result.produced > 0
    assert fp.fingerprint(result) == STORED[case], f"{case}: the simulator's results changed"
