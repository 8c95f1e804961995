"""Every public entry point of rmqlib.designs answers junk with a TypeError or ValueError, never anything else."""

import pytest

from rmqlib.designs import (
    AllocateMessageQueueConsistentHashBoundedLoad,
    AllocateMessageQueueSticky,
    bounded_assign,
    compare,
    load_bound,
    sticky_assign,
)
from rmqlib.model import MessageQueue

JUNK = [
    None,
    "",
    "x",
    -1,
    0,
    1.5,
    float("nan"),
    True,
    [],
    [None],
    ["a", 3],
    {},
    {"a": 1},
    object(),
    [MessageQueue("T", "b", 0)],
    10**9,
]

CALLS = {
    "sticky_assign(mq_all)": lambda v: sticky_assign(v, ["a"]),
    "sticky_assign(cid_all)": lambda v: sticky_assign([MessageQueue("T", "b", 0)], v),
    "sticky_assign(previous)": lambda v: sticky_assign([MessageQueue("T", "b", 0)], ["a"], v),
    "bounded_assign(epsilon)": lambda v: bounded_assign([MessageQueue("T", "b", 0)], ["a"], v),
    "bounded_assign(virtual_node_cnt)": lambda v: bounded_assign([MessageQueue("T", "b", 0)], ["a"], 0.25, v),
    "load_bound": lambda v: load_bound(v, v, v),
    "Sticky(memory)": lambda v: AllocateMessageQueueSticky(v),
    "Sticky.allocate": lambda v: AllocateMessageQueueSticky().allocate("g", v, v, v),
    "Bounded(epsilon)": lambda v: AllocateMessageQueueConsistentHashBoundedLoad(v),
    "owners(design)": lambda v: compare.owners(v, ["a"], compare.design_queues(2)),
    "owners(cids)": lambda v: compare.owners("AVG", v, compare.design_queues(2)),
    "owners(mqs)": lambda v: compare.owners("AVG", ["a"], v),
    "owners(previous)": lambda v: compare.owners("STICKY", ["a"], compare.design_queues(2), v),
    "measure": lambda v: compare.measure("AVG", v, v, v),
    "measured_table": lambda v: compare.measured_table(v, v, v, v),
    "design_summary": lambda v: compare.design_summary(v),
    "memory_disagreement": lambda v: compare.memory_disagreement(v, v, v, v),
    "view_disagreement": lambda v: compare.view_disagreement(v, v, v, v),
    "broker_assignment_cost": lambda v: compare.broker_assignment_cost(v, v, v),
    "broker_side": lambda v: compare.broker_side(v, v, v),
    "simulated_changes(seeds)": lambda v: compare.simulated_changes(seeds=v, designs=[], kafka=False),
    "changes_summary": lambda v: compare.changes_summary(v),
    "kafka_assignor": lambda v: compare.kafka_assignor(v),
}


@pytest.mark.parametrize("name", CALLS)
def test_junk_gets_a_type_or_value_error(name):
    for value in JUNK:
        try:
            CALLS[name](value)
        except (TypeError, ValueError):
            pass
