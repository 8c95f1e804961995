"""A consumer group over simulated time (simpy), driving the client and broker models.

>>> from rmqlib.sim import scenarios, simulate
>>> result = simulate(scenarios.crash(), seed=1)
>>> result.lost, result.duplicates  # doctest: +SKIP
"""

from rmqlib.sim import scenarios
from rmqlib.sim.engine import simulate
from rmqlib.sim.result import ConsumeBatch, Event, Interval, SimResult
from rmqlib.sim.scenario import (
    BROADCASTING,
    CLUSTERING,
    CONCURRENT,
    CRASH,
    HOST_LOSS,
    ORDERLY,
    POP,
    SHUTDOWN,
    BrokerOutage,
    ClientKind,
    ConsumeMode,
    ConsumerSpec,
    LeaveKind,
    MessageModel,
    Scenario,
    TopicChange,
)
from rmqlib.sim.sweep import run_one, run_variants, sweep, sweep_stats, sweep_values

__all__ = [
    "BROADCASTING",
    "CLUSTERING",
    "CONCURRENT",
    "CRASH",
    "HOST_LOSS",
    "ORDERLY",
    "POP",
    "SHUTDOWN",
    "BrokerOutage",
    "ClientKind",
    "ConsumeBatch",
    "ConsumeMode",
    "ConsumerSpec",
    "Event",
    "Interval",
    "LeaveKind",
    "MessageModel",
    "Scenario",
    "SimResult",
    "TopicChange",
    "run_one",
    "run_variants",
    "scenarios",
    "simulate",
    "sweep",
    "sweep_stats",
    "sweep_values",
]
