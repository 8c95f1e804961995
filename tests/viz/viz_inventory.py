"""Every figure builder and panel of rmqlib.viz, built small: for the language tests (tests/viz/test_i18n.py).

``figures()`` gives name -> figure and ``panels()`` name -> panel, each built in the language current
when called. Uses only the public API, so a copy of an older rmqlib builds the same inventory.
"""

from __future__ import annotations

import functools

from rmqlib import viz
from rmqlib.allocation import allocate_group, make_cids, make_queues
from rmqlib.strategies import AllocateMessageQueueAveragely


@functools.cache
def runs():
    """Small simulated runs (cached: they take a few seconds): a traced crash and an orderly crash."""
    from rmqlib.sim import scenarios, simulate

    crash = simulate(scenarios.crash(), seed=1, trace=True)
    orderly = simulate(scenarios.orderly_crash(), seed=1)
    return crash, orderly


@functools.cache
def twins():
    """A run in which two members share a client id: some queues are never consumed."""
    from rmqlib.sim import scenarios, simulate

    return simulate(scenarios.shared_client_id(duration_ms=30_000, drain_ms=10_000), seed=1)


@functools.cache
def slow_broadcast():
    """A BROADCASTING run with one slow member, which falls behind alone."""
    from rmqlib.sim import scenarios, simulate

    return simulate(scenarios.slow_member(message_model="BROADCASTING", duration_ms=30_000, drain_ms=30_000), seed=1)


@functools.cache
def polled():
    """A run a dashboard polls every 5 s: one slow member."""
    from rmqlib.sim import scenarios, simulate

    return simulate(scenarios.slow_member(duration_ms=30_000, drain_ms=40_000, consume_stats_interval_ms=5_000), seed=1)


@functools.cache
def polled_vanished():
    """A run a dashboard polls every 5 s while broker-b's host is gone and still routed: its polls fail."""
    from rmqlib.sim import scenarios, simulate

    return simulate(
        scenarios.broker_vanishes(duration_ms=90_000, drain_ms=30_000, consume_stats_interval_ms=5_000), seed=1
    )


def _odd_allocation():
    """An allocation with an idle consumer, a queue owned twice and queues nobody holds."""
    queues = make_queues("TopicTest", ["broker-a", "broker-b"], 3)
    cids = make_cids(4)
    return {cids[0]: queues[:2], cids[1]: queues[1:3], cids[2]: [queues[3]], cids[3]: []}, cids, queues


def figures() -> dict:
    """name -> figure, for every figure builder (several states where the labels differ)."""
    from rmqlib.client.handover import replay_handover
    from rmqlib.client.retry import concurrent_retry_timeline, orderly_retry_timeline

    crash, orderly = runs()
    odd, cids, queues = _odd_allocation()
    avg = allocate_group(AllocateMessageQueueAveragely(), queues, cids[:3])
    rows = [
        {"seed": s, "variant": v, "group": g, "longest_pause_ms": s * 10 + len(v) + len(g)}
        for s in (0, 1)
        for v in ("a1", "b2")
        for g in ("g1", "g2")
    ]
    replay = replay_handover()
    orderly_replay = replay_handover(orderly=True, consuming=(0,))
    out = {
        "allocation_figure": viz.allocation_figure(odd, cids, queues),
        "allocation_figure one": viz.allocation_figure({cids[0]: queues[:1]}, cids[:1], queues[:1]),
        "allocation_figure label": viz.allocation_figure(avg, cids[:3], queues, label="AVG"),
        "queues_per_consumer_figure": viz.queues_per_consumer_figure(avg, cids[:4]),
        "allocation_view AVG": viz.allocation_view("AVG", 8, 3),
        "shared_id_view": viz.shared_id_view("AVG", 8, 4, 2),
        "shared_id_frames_figure": viz.shared_id_frames_figure(queues=6, consumers=3),
        "allocation_view CONSISTENT_HASH": viz.allocation_view("CONSISTENT_HASH", 8, 12, 2),
        "ring_view": viz.ring_view(4, 16, 3),
        "ring_view empty": viz.ring_view(4, 16, 0),
        "imbalance_vs_vnodes_figure": viz.imbalance_vs_vnodes_figure(3, 8, (1, 5), range(2)),
        "moved_queues_figure": viz.moved_queues_figure(8, 4, 2),
        "multi_topic_figure": viz.multi_topic_figure(
            AllocateMessageQueueAveragely(), {"TopicA": queues, "TopicB": queues[:2]}, cids[:3]
        ),
        "machine_room_view": viz.machine_room_view(),
        "machine_room_view MACHINE_ROOM": viz.machine_room_view("MACHINE_ROOM", consumers=(1, 1, 1)),
        "machine_room_view empty": viz.machine_room_view(consumers=(0, 0, 0)),
        "machine_room_view no broker": viz.machine_room_view(brokers=(0, 0, 0)),
        "process_queue_view 0": viz.process_queue_view(6, step=0),
        "process_queue_view 3": viz.process_queue_view(6, step=3),
        "process_queue_view end": viz.process_queue_view(6, step=6),
        "ownership_timeline_figure": viz.ownership_timeline_figure(crash),
        "lock_timeline_figure": viz.lock_timeline_figure(orderly),
        "load_figure": viz.load_figure(crash),
        "consumed_by_queue_figure": viz.consumed_by_queue_figure(crash),
        "consumed_by_queue_figure never": viz.consumed_by_queue_figure(twins()),
        "latency_figure": viz.latency_figure(crash),
        "latency_figure two": viz.latency_figure({"crash": crash, "orderly_crash": orderly}),
        "backlog_figure": viz.backlog_figure(crash),
        "backlog_figure two": viz.backlog_figure({"crash": crash, "orderly_crash": orderly}, step_ms=5_000),
        "backlog_figure by_member": viz.backlog_figure(slow_broadcast(), by_member=True),
        "dashboard_figure": viz.dashboard_figure(polled()),
        "dashboard_figure failed polls": viz.dashboard_figure(polled_vanished()),
        "sweep_figure box": viz.sweep_figure(rows, "variant", "longest_pause_ms", group="group"),
        "sweep_figure range": viz.sweep_figure(
            rows,
            "variant",
            "longest_pause_ms",
            kind="range",
            log_y=True,
            x_title="variant",
            y_title="longest pause (ms)",
        ),
        "retry_figure": viz.retry_figure(
            {"CONCURRENTLY": concurrent_retry_timeline(), "ORDERLY": orderly_retry_timeline(max_reconsume_times=3)}
        ),
        "sequence_figure": viz.sequence_figure(crash, 60_000, 62_000, max_events=60),
        "sequence_figure short": viz.sequence_figure(crash, 60_000, 70_000, max_events=5),
        "queue_handover_figure": viz.queue_handover_figure(crash),
        "replica_locks_figure": viz.replica_locks_figure(),
        "replica_locks_figure failover": viz.replica_locks_figure(None),
        "allocation_frames_figure": viz.allocation_frames_figure(queues=4, consumer_counts=(1, 2, 5)),
        "ring_frames_figure": viz.ring_frames_figure(vnode_counts=(0, 2)),
        "machine_room_frames_figure": viz.machine_room_frames_figure(),
        "process_queue_frames_figure": viz.process_queue_frames_figure(messages=3),
    }
    for name, rep in (("handover_figure", replay), ("handover_figure orderly", orderly_replay)):
        for k in range(len(rep.frames)):
            out[f"{name} {k}"] = viz.handover_figure(rep, k)
    out["handover_frames_figure"] = viz.handover_frames_figure()
    out["replica_locks_frames_figure"] = viz.replica_locks_frames_figure()
    out.update(_designs())
    return out


def _designs() -> dict:
    """Chapter 11c's figures (rmqlib.viz.designs), on a few designs."""
    from rmqlib.designs.compare import design_summary, measured_table, simulated_changes
    from rmqlib.viz import designs

    summary = design_summary(
        measured_table(["AVG", "STICKY", "BROKER_AVG", "KAFKA_UNIFORM", "KAFKA_RANGE"], (4,), (16,))
    )
    rows = simulated_changes(
        designs=["RocketMQ AVG", "ours: sticky, own memory"], changes=["crash", "scale_out"], kafka=False
    )
    return {
        "designs_view": designs.designs_view(4, 16),
        "designs_frames_figure": designs.designs_frames_figure(16, (2, 4), initial=4),
        "tradeoff_figure": designs.tradeoff_figure(summary),
        "changes_figure": designs.changes_figure(rows),
    }


def panels() -> dict:
    """name -> panel, for every panel (with every control it can show)."""
    return {
        "allocation_panel": viz.allocation_panel(("AVG", "CONSISTENT_HASH"), max_queues=8, max_consumers=4),
        "ring_panel": viz.ring_panel(
            consumers=3, queues=8, virtual_nodes=2, max_consumers=4, max_queues=8, max_virtual_nodes=4
        ),
        "machine_room_panel": viz.machine_room_panel(max_brokers=2, max_consumers=2),
        "shared_id_panel": viz.shared_id_panel(max_queues=8, max_consumers=4),
        "process_queue_panel": viz.process_queue_panel(messages=4, max_messages=6),
        "handover_panel": viz.handover_panel(),
        "replica_locks_panel": viz.replica_locks_panel(acting_master=False),
        "designs_panel": __import__("rmqlib.viz.designs").viz.designs.designs_panel(
            4, 16, max_consumers=8, max_queues=32
        ),
    }
