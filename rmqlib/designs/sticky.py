"""A sticky allocation strategy: keep what each consumer owned, move only what balance needs.

**Ours, not RocketMQ's.** RocketMQ ships no sticky strategy. The community asked for one in
apache/rocketmq-externals#568 ("rebalancing re-think", 2020), and apache/rocketmq#2169 proposed an
``AllocateMessageQueueSticky`` together with broker-side allocation; neither is in the code at the commit
this book pins. This class is written from the idea, not from that pull request.

What a sticky strategy needs that RocketMQ's interface does not give it: the *previous assignment*.
``AllocateMessageQueueStrategy.allocate(consumerGroup, currentCID, mqAll, cidAll)`` receives today's queues
and members, nothing about who owned what. This model gets the previous assignment from a *memory*, and
says which one:

* ``memory="own"`` (the default, what a real client could do): every consumer instance remembers the
  whole-group answer **it** computed last time, keyed by (group, its client id, topic). Consumers never
  share memory, even when (as in the simulator) they share one strategy object. A consumer that just
  started remembers nothing, so it computes a fresh answer while the old members compute a sticky one:
  their answers disagree, some queues get two owners and others none, and because each answer is stable
  from its own memory the disagreement never heals (:func:`rmqlib.designs.compare.memory_disagreement`
  measures it). That is why RocketMQ's strategies are stateless: a pure function of (queues, members)
  agrees everywhere as soon as the views agree.
* ``memory="shared"``: one memory per (group, topic) that every member reads and writes, a stand-in for a
  coordinator (a broker or a store every member can reach). RocketMQ's client API has no such thing;
  the mode shows what stickiness is worth when someone does hold the previous answer.

The whole-group algorithm is the pure function :func:`sticky_assign`; with no previous assignment it gives
exactly AVG's blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rmqlib.checks import ArgumentTypeError, check_str
from rmqlib.model import MessageQueue
from rmqlib.strategies import AbstractAllocateMessageQueueStrategy, Allocation, _check_types

MEMORY_MODES = ("own", "shared")
#: (group, topics) with shared memory, (group, client id, topics) with each member's own
_MemoryKey = tuple[str, tuple[str, ...]] | tuple[str, str, tuple[str, ...]]


def _previous(previous: object, name: str = "previous") -> Mapping[str, Sequence[MessageQueue]]:
    if previous is None:
        return {}
    if not isinstance(previous, Mapping):
        raise ArgumentTypeError(
            f"{name} must map client ids to their queues (a dict) or be None, got {type(previous).__name__}"
        )
    for cid, mqs in previous.items():
        if not isinstance(cid, str):
            raise ArgumentTypeError(f"{name}: client ids must be str, got {type(cid).__name__}")
        if isinstance(mqs, (str, bytes, Mapping)) or not hasattr(mqs, "__iter__"):
            raise ArgumentTypeError(f"{name}[{cid!r}] must be a list of MessageQueue, got {type(mqs).__name__}")
        for mq in mqs:
            if not isinstance(mq, MessageQueue):
                raise ArgumentTypeError(f"{name}[{cid!r}] must hold MessageQueue items, got {type(mq).__name__}")
    return previous


def sticky_assign(
    mq_all: Sequence[MessageQueue], cid_all: Sequence[str], previous: Mapping[str, Sequence[MessageQueue]] | None = None
) -> Allocation:
    """The whole group's sticky answer: balanced (no consumer more than one queue above another) and moving
    the fewest queues from ``previous`` that balance allows.

    1. Every member keeps the queues it held in ``previous`` that still exist (a queue two members claim
       stays with the first in ``cid_all`` order).
    2. Quotas: ``len(mq_all) // members`` each, and one more for ``len(mq_all) % members`` members, given to
       those keeping the most (ties: ``cid_all`` order), so that as few queues as possible are taken away.
    3. A member above its quota gives up its last queues; the queues nobody holds go, in ``mq_all`` order,
       to the members below quota, in ``cid_all`` order.

    With no previous assignment this is AVG's answer (contiguous blocks, remainder to the first members).
    Repeated client ids count once. Ours, not RocketMQ's (see the module docstring).
    """
    _check_types(None, mq_all, cid_all)
    prev = _previous(previous)
    cids = list(dict.fromkeys(cid_all))
    mqs = list(dict.fromkeys(mq_all))
    result: Allocation = {cid: [] for cid in cids}
    if not cids:
        return result
    alive = set(mqs)
    claimed: set[MessageQueue] = set()
    kept: dict[str, list[MessageQueue]] = {}
    for cid in cids:
        mine = []
        for mq in prev.get(cid, ()):
            if mq in alive and mq not in claimed:
                claimed.add(mq)
                mine.append(mq)
        kept[cid] = mine
    base, extra = divmod(len(mqs), len(cids))
    by_holding = sorted(range(len(cids)), key=lambda i: (-len(kept[cids[i]]), i))
    quota = {cids[i]: base + (1 if rank < extra else 0) for rank, i in enumerate(by_holding)}
    for cid in cids:
        result[cid] = kept[cid][: quota[cid]]
    held = {mq for mine in result.values() for mq in mine}
    pool = iter([mq for mq in mqs if mq not in held])
    for cid in cids:
        while len(result[cid]) < quota[cid]:
            result[cid].append(next(pool))
    return result


class AllocateMessageQueueSticky(AbstractAllocateMessageQueueStrategy):
    """A sticky ``AllocateMessageQueueStrategy`` with a memory of the previous assignment. Ours, not RocketMQ's.

    Mirrors the interface of client/.../consumer/AllocateMessageQueueStrategy.java (the algorithm is
    :func:`sticky_assign`). ``stateless = False``: unlike RocketMQ's six strategies, its answer depends on
    what it computed before, so give every simulated run a fresh instance (or call :meth:`forget`).
    ``memory`` is ``"own"`` (each consumer remembers its own last answer) or ``"shared"`` (one memory for
    the whole group, a stand-in for a coordinator); see the module docstring for what each does.
    """

    name = "STICKY"
    stateless = False

    def __init__(self, memory: str = "own"):
        check_str(memory, "memory")
        if memory not in MEMORY_MODES:
            raise ValueError(f"memory must be one of {', '.join(MEMORY_MODES)}, got {memory!r}")
        self.memory = memory
        self._memory: dict[_MemoryKey, Allocation] = {}
        # members that agree hold one shared answer object, so a group of c members over n queues keeps about
        # c + n entries, not c x (c + n); answers no memory refers to any more are dropped now and then
        self._answers: dict[tuple[tuple[str, tuple[MessageQueue, ...]], ...], Allocation] = {}

    def _key(self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue]) -> _MemoryKey:
        topics = tuple(sorted({mq.topic for mq in mq_all}))
        return (consumer_group, topics) if self.memory == "shared" else (consumer_group, current_cid, topics)

    def remembered(self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue]) -> Allocation | None:
        """What ``current_cid`` would start from for these queues' topic (None: it remembers nothing)."""
        _check_types(current_cid, mq_all, None, consumer_group)
        found = self._memory.get(self._key(consumer_group, current_cid, mq_all))
        return None if found is None else {cid: list(mqs) for cid, mqs in found.items()}

    def forget(self) -> None:
        """Drop every memory (a fresh start, as for a new process)."""
        self._memory.clear()
        self._answers.clear()

    def _intern(self, whole: Allocation) -> Allocation:
        key = tuple((cid, tuple(mqs)) for cid, mqs in whole.items())
        found = self._answers.setdefault(key, whole)
        if len(self._answers) > 2 * len(self._memory) + 16:
            alive = {id(answer) for answer in self._memory.values()} | {id(found)}
            self._answers = {k: a for k, a in self._answers.items() if id(a) in alive}
        return found

    def allocate(
        self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> list[MessageQueue]:
        if not self.check(consumer_group, current_cid, mq_all, cid_all):
            return []
        key = self._key(consumer_group, current_cid, mq_all)
        whole = self._intern(sticky_assign(mq_all, cid_all, self._memory.get(key)))
        self._memory[key] = whole
        return list(whole[current_cid])

    def allocate_all(self, consumer_group: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> Allocation:
        """Every member's own ``allocate`` answer, in ``cid_all`` order (each reads and updates its memory)."""
        self._check_group(mq_all, cid_all, consumer_group)
        return {cid: self.allocate(consumer_group, cid, mq_all, cid_all) for cid in dict.fromkeys(cid_all)}

    def __repr__(self) -> str:
        return f"AllocateMessageQueueSticky(memory={self.memory!r})"
