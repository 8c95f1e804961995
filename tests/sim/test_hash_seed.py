"""One seed, one result, in every process: Python gives each process its own string hashing, so a set of queues
(the client passes them around as Java's HashSet) iterates in a different order from one process to the next. No
such order may reach a result."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "scenario_fingerprints.py"


def test_every_fingerprint_is_the_same_under_two_string_hash_seeds():
    # hash seeds 0 and 1 lay out a set of orderly_broker_restart's queues in different orders (checked when the
    # recorder logged a lockAll's queues in set order, which this test caught)
    runs = [
        subprocess.Popen(
            [sys.executable, str(TOOL)],
            env=dict(os.environ, PYTHONHASHSEED=seed),
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for seed in ("0", "1")
    ]
    prints = [json.loads(run.communicate(timeout=600)[0]) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    stored = json.loads((ROOT / "tests" / "data" / "scenario_fingerprints.json").read_text(encoding="utf-8"))
    assert prints[0] == prints[1] == stored
