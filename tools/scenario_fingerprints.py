"""Fingerprints of the ready-made scenarios: one digest of everything a run records, per scenario and seed.

``python tools/scenario_fingerprints.py`` prints them; ``--write`` stores them in
``tests/data/scenario_fingerprints.json``, which ``tests/sim/test_fingerprints.py`` compares against.
Rewrite the file only for a change that is meant to change what the simulator does, and say so in the commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from rmqlib.sim import scenarios, simulate
from rmqlib.sim.result import SimResult

STORE = Path(__file__).resolve().parents[1] / "tests" / "data" / "scenario_fingerprints.json"
SEED = 7
# the ready-made scenarios, plus the modes they do not cover on their own
CASES = {name: (name, {}) for name in scenarios.ALL}
CASES.update(
    {
        "steady_state/broadcasting": ("steady_state", {"message_model": "BROADCASTING"}),
        "crash/no_real_time_notify": ("crash", {"real_time_notify": False}),
        "scale_out/short_polling": ("scale_out", {"long_polling": False}),
        "crash/exponential": ("crash", {"consume_time_dist": "exponential", "start_jitter_ms": 500}),
        "broker_outage/orderly": ("broker_outage", {"consume_mode": "ORDERLY"}),
        "broker_outage_with_slave/orderly": ("broker_outage_with_slave", {"consume_mode": "ORDERLY"}),
        "topic_grows/broadcasting": ("topic_grows", {"message_model": "BROADCASTING"}),
    }
)


def _trimmed(series) -> list[int]:
    """A load series without its trailing empty buckets (how long a list runs is not a result)."""
    series = list(series)
    while series and series[-1] == 0:
        series.pop()
    return series


def fingerprint(result: SimResult) -> str:
    """sha256 over what the run recorded: deliveries, ownership, consumption, events, load, counters."""
    record = {
        "produced": result.produced,
        "duplicates": result.duplicates,
        "delivered": sorted(result.delivered.items()),
        "ownership": {q: [list(i) for i in v] for q, v in sorted(result.ownership.items())},
        "locks": {q: [list(i) for i in v] for q, v in sorted(result.lock_ownership.items())},
        "consumption": {q: [list(b) for b in v] for q, v in sorted(result.consumption.items())},
        "events": [list(e) for e in result.events],
        "load": {c: _trimmed(v) for c, v in sorted(result.load.items())},
        "counters": sorted(result.counters.items()),
        "violations": result.offset_violations,
        "latencies": [round(float(x), 6) for x in result.latencies_ms],
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()


def compute() -> dict[str, str]:
    out = {}
    for case, (name, overrides) in CASES.items():
        out[case] = fingerprint(simulate(scenarios.ALL[name](**overrides), seed=SEED))
    return out


if __name__ == "__main__":
    prints = compute()
    if "--write" in sys.argv:
        STORE.write_text(json.dumps(prints, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {len(prints)} fingerprints to {STORE}")
    else:
        print(json.dumps(prints, indent=1, sort_keys=True))
