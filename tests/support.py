"""Helpers shared by test modules (importable because pytest puts tests/ on sys.path)."""

import contextlib
import os
import signal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def conformance_dir() -> Path:
    """``tests/data/conformance`` in the checkout (override with RMQLIB_CONFORMANCE_DIR)."""
    override = os.environ.get("RMQLIB_CONFORMANCE_DIR")
    return Path(override) if override else ROOT / "tests" / "data" / "conformance"


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
