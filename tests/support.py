"""Helpers shared by test modules (importable because pytest puts tests/ on sys.path)."""

import contextlib
import json
import os
import signal
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent


def conformance_dir() -> Path:
    """``tests/data/conformance`` in the checkout (override with RMQLIB_CONFORMANCE_DIR)."""
    override = os.environ.get("RMQLIB_CONFORMANCE_DIR")
    return Path(override) if override else ROOT / "tests" / "data" / "conformance"


def java_vectors(name: str) -> dict:
    """``tests/data/<name>.json``: answers recorded from OpenJDK by tools/java/record_java_vectors.py."""
    return json.loads((ROOT / "tests" / "data" / f"{name}.json").read_text(encoding="utf-8"))


class TooSlow(Exception):
    """Raised by :func:`time_limit`: the call did not return in time (neither a ValueError nor a TypeError)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Fail a call that does not return within ``seconds`` (SIGALRM): what the hardening suites use to catch a
    hang or a runaway loop. Set it generously, well above a slow machine's time: speed itself is measured by
    ``benchmarks/``, never by a timed test."""

    def on_alarm(signum, frame):
        raise TooSlow(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def broker_of(queue: str) -> str:
    """The broker name in a run's queue key, ``MessageQueue [topic=T, brokerName=broker-a, queueId=0]``."""
    return queue.split("brokerName=")[1].split(",")[0]


class GivenUp(NamedTuple):
    """How an orderly consumer let a queue go during one of its listener calls (see :func:`given_up_during`)."""

    moved: int  # its ownership of the queue ended (the round that dropped it)
    unlocked: int  # its broker lock on the queue ended
    renewed: int | None  # its last lockAll at or before ``moved`` (None: it never ran one)


def given_up_during(result, queue: str, call) -> GivenUp | None:
    """When ``call``'s consumer gave ``queue`` up while the call ran and its broker lock outlasted the move: the
    moments that say whether RebalancePushImpl#tryRemoveOrderMessageQueue forced the unlock. None otherwise."""
    held = [i for i in result.ownership[queue] if i.holder == call.consumer]
    moved = [i.end_ms for i in held if i.start_ms <= call.start_ms < i.end_ms]
    if not moved or moved[0] >= call.end_ms:
        return None
    unlocked = [
        i.end_ms for i in result.lock_ownership[queue] if i.holder == call.consumer and i.start_ms < moved[0] < i.end_ms
    ]
    if not unlocked:
        return None
    renewals = [
        e.time_ms
        for e in result.events_of("lock")
        if e.who == call.consumer and e.detail == "lockAll" and e.time_ms <= moved[0]
    ]
    return GivenUp(moved[0], unlocked[0], max(renewals) if renewals else None)
