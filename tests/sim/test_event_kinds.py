"""EVENT_KINDS lists exactly what runs log: every kind a ready-made scenario logs (traced) and nothing else."""

from rmqlib.sim import scenarios, simulate
from rmqlib.sim.result import EVENT_KINDS


def test_every_logged_kind_is_listed_and_every_listed_kind_is_logged():
    seen = set()
    for name, build in scenarios.ALL.items():
        # the crashes of popping groups at their own rate: the crash leaves popped messages unacked, so the broker
        # revives them (and a gRPC group's proxy clears them)
        own_rate = name in ("pop_crash", "grpc_crash", "grpc_fifo_crash")
        run = simulate(build() if own_rate else build(produce_rate_per_queue=0.5), seed=1, trace=True)
        seen |= {event.kind for event in run.events}
    assert seen == set(EVENT_KINDS), (sorted(seen - set(EVENT_KINDS)), sorted(set(EVENT_KINDS) - seen))
