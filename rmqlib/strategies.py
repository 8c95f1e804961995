"""The six AllocateMessageQueueStrategy implementations of the RocketMQ client.

Mirrors: client/.../consumer/rebalance/ (one Java class per strategy)

Each strategy answers one consumer's question, "which of these queues are
mine?", from the full queue list and the full client id list, exactly as the
Java class does: the same queues in the same order, the same errors for empty
input, and an empty answer for a client id that is not in the list. Every
strategy also has ``allocate_all``, the answer for every consumer at once;
it equals calling ``allocate`` once per consumer but shares the work (the
consistent-hash ring is built once, not once per consumer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from rmqlib.checks import ArgumentTypeError, check_callable, check_int, check_items, check_methods, check_str
from rmqlib.hashring import MAX_RING_POINTS, HashFunction, HashRing
from rmqlib.model import MessageQueue, java_split, utf16_key

#: Every consumer's queues, keyed by client id.
Allocation = dict[str, list[MessageQueue]]
#: What ``allocate_all`` returns: every consumer's ``allocate`` answer (CONFIG without a list answers None).
GroupAnswer = Mapping[str, list[MessageQueue] | None]


class AllocateMessageQueueStrategy:
    """Base of every strategy: ``name`` and ``allocate``.

    Mirrors: client/.../consumer/AllocateMessageQueueStrategy.java
    """

    @property
    def name(self) -> str:
        """The Java ``getName()``: a subclass sets it as a class attribute (``name = "AVG"``)."""
        return ""

    def allocate(
        self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> list[MessageQueue] | None:
        raise NotImplementedError

    def allocate_all(self, consumer_group: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> GroupAnswer:
        """Every consumer's ``allocate`` answer, keyed by client id (first occurrence order)."""
        return {cid: self.allocate(consumer_group, cid, mq_all, cid_all) for cid in dict.fromkeys(cid_all)}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _check_types(current_cid: object, mq_all: object, cid_all: object, consumer_group: object = None) -> None:
    if consumer_group is not None and not isinstance(consumer_group, str):
        raise ArgumentTypeError(f"consumer_group must be str, got {type(consumer_group).__name__}")
    if current_cid is not None and not isinstance(current_cid, str):
        raise ArgumentTypeError(f"current_cid must be str, got {type(current_cid).__name__}")
    for arg, value, element, what in (
        ("mq_all", mq_all, MessageQueue, "MessageQueue"),
        ("cid_all", cid_all, str, "str"),
    ):
        if value is None:
            continue
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ArgumentTypeError(f"{arg} must be a list, got {type(value).__name__}")
        for item in value:
            if not isinstance(item, element):
                raise ArgumentTypeError(f"{arg} elements must be {what}, got {type(item).__name__}")


class AbstractAllocateMessageQueueStrategy(AllocateMessageQueueStrategy):
    """Shared argument check of the queue strategies.

    Mirrors: client/.../consumer/rebalance/AbstractAllocateMessageQueueStrategy.java#check
    """

    def check(
        self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> bool:
        """Raise like Java on empty input (in Java's order); False if ``current_cid`` is not a member."""
        _check_types(current_cid, mq_all, cid_all, consumer_group)
        if not current_cid:
            raise ValueError("current_cid is empty")
        if not mq_all:
            raise ValueError("mq_all is None or empty")
        if not cid_all:
            raise ValueError("cid_all is None or empty")
        return current_cid in cid_all

    def _check_group(self, mq_all: Sequence[MessageQueue], cid_all: Sequence[str], consumer_group: str = "") -> None:
        """``check`` as it goes for a member: the whole-group views need the same errors."""
        _check_types(None, None, cid_all, consumer_group)
        if cid_all and not all(cid_all):
            # allocate() for that member would raise "current_cid is empty"; the group view says which list
            raise ValueError("cid_all holds an empty client id (current_cid is empty for that member)")
        if cid_all:
            self.check(consumer_group, cid_all[0], mq_all, cid_all)
        else:
            self.check(consumer_group, "-", mq_all, cid_all)


class _ByIndexStrategy(AbstractAllocateMessageQueueStrategy):
    """A strategy whose answer depends only on the consumer's position in ``cid_all``.

    Java finds that position with ``cidAll.indexOf``, so a repeated client id
    answers for its first occurrence. Subclasses say which queues are dealt
    (:meth:`_candidates`) and which of them position ``index`` gets (:meth:`_share`).
    """

    def _candidates(self, mq_all: Sequence[MessageQueue]) -> Sequence[MessageQueue]:
        return mq_all

    def _share(self, candidates: Sequence[MessageQueue], index: int, n_cid: int) -> list[MessageQueue]:
        raise NotImplementedError

    def allocate(
        self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> list[MessageQueue]:
        if not self.check(consumer_group, current_cid, mq_all, cid_all):
            return []
        return self._share(self._candidates(mq_all), cid_all.index(current_cid), len(cid_all))

    def allocate_all(self, consumer_group: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> Allocation:
        self._check_group(mq_all, cid_all, consumer_group)
        candidates = self._candidates(mq_all)
        first: dict[str, int] = {}
        for i, cid in enumerate(cid_all):
            first.setdefault(cid, i)
        return {cid: self._share(candidates, i, len(cid_all)) for cid, i in first.items()}


class AllocateMessageQueueAveragely(_ByIndexStrategy):
    """Contiguous blocks; the first ``len(mq_all) % len(cid_all)`` consumers get one more.

    Mirrors: client/.../consumer/rebalance/AllocateMessageQueueAveragely.java
    """

    name = "AVG"

    def _share(self, candidates: Sequence[MessageQueue], index: int, n_cid: int) -> list[MessageQueue]:
        n_mq = len(candidates)
        mod = n_mq % n_cid
        bigger = mod > 0 and index < mod
        size = 1 if n_mq <= n_cid else n_mq // n_cid + (1 if bigger else 0)
        start = index * size if bigger else index * size + mod
        return list(candidates[start : start + max(0, min(size, n_mq - start))])


class AllocateMessageQueueAveragelyByCircle(_ByIndexStrategy):
    """Deal queues like cards: queue ``j`` goes to consumer ``j % len(cid_all)``.

    Mirrors: client/.../consumer/rebalance/AllocateMessageQueueAveragelyByCircle.java
    """

    name = "AVG_BY_CIRCLE"

    def _share(self, candidates: Sequence[MessageQueue], index: int, n_cid: int) -> list[MessageQueue]:
        return list(candidates[index::n_cid])


class AllocateMessageQueueConsistentHash(AbstractAllocateMessageQueueStrategy):
    """Each queue goes to the consumer owning the next point clockwise on an MD5 ring.

    Mirrors: client/.../consumer/rebalance/AllocateMessageQueueConsistentHash.java

    ``hash_function`` is any ``str -> int`` callable (Java's ``HashFunction``);
    the default is MD5 as in ``ConsistentHashRouter``. With 0 virtual nodes the
    ring is empty and every consumer gets nothing, as in Java.
    """

    name = "CONSISTENT_HASH"

    def __init__(self, virtual_node_cnt: int = 10, hash_function: HashFunction | None = None):
        virtual_node_cnt = check_int(virtual_node_cnt, "virtual_node_cnt", 0, MAX_RING_POINTS)
        check_callable(hash_function, "hash_function (str -> int)", none=True)
        self.virtual_node_cnt = virtual_node_cnt
        self.hash_function = hash_function

    def ring(self, cid_all: Sequence[str]) -> HashRing:
        """The ring Java builds for ``cid_all`` (in the order given)."""
        if cid_all is None:
            raise ArgumentTypeError("cid_all must be a list, got NoneType")
        _check_types(None, None, cid_all)
        return HashRing.build(list(cid_all), self.virtual_node_cnt, self.hash_function)

    def allocate(
        self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> list[MessageQueue]:
        if not self.check(consumer_group, current_cid, mq_all, cid_all):
            return []
        owners = self.ring(cid_all).route_many([str(mq) for mq in mq_all])
        return [mq for mq, owner in zip(mq_all, owners) if owner == current_cid]

    def allocate_all(self, consumer_group: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> Allocation:
        self._check_group(mq_all, cid_all, consumer_group)
        result: Allocation = {cid: [] for cid in cid_all}
        for mq, owner in zip(mq_all, self.ring(cid_all).route_many([str(mq) for mq in mq_all])):
            if owner is not None:
                result[owner].append(mq)
        return result

    def __repr__(self) -> str:
        return f"AllocateMessageQueueConsistentHash(virtual_node_cnt={self.virtual_node_cnt})"


class AllocateMessageQueueByConfig(AbstractAllocateMessageQueueStrategy):
    """Every consumer gets the configured list, unchecked (``None`` if none was set).

    Mirrors: client/.../consumer/rebalance/AllocateMessageQueueByConfig.java
    """

    name = "CONFIG"

    def __init__(self, message_queue_list: Iterable[MessageQueue] | None = None) -> None:
        self.message_queue_list: list[MessageQueue] | None = None
        self.set_message_queue_list(message_queue_list)

    def set_message_queue_list(self, message_queue_list: Iterable[MessageQueue] | None) -> None:
        if message_queue_list is None:
            self.message_queue_list = None
            return
        if isinstance(message_queue_list, (str, bytes, MessageQueue)) or not isinstance(message_queue_list, Iterable):
            raise ArgumentTypeError(
                f"message_queue_list must be a list of MessageQueue, got {type(message_queue_list).__name__}"
            )
        queues = list(message_queue_list)
        for mq in queues:
            if not isinstance(mq, MessageQueue):
                raise ArgumentTypeError(f"message_queue_list elements must be MessageQueue, got {type(mq).__name__}")
        self.message_queue_list = queues

    def allocate(
        self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> list[MessageQueue] | None:
        # Java runs no check at all here: not even for empty input or a non-member.
        # (Wrong types are still refused: Java's signature would not compile with them.)
        _check_types(current_cid, mq_all, cid_all, consumer_group)
        return None if self.message_queue_list is None else list(self.message_queue_list)

    def allocate_all(
        self, consumer_group: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> dict[str, list[MessageQueue] | None]:
        _check_types(None, mq_all, cid_all, consumer_group)
        return {cid: self.allocate(consumer_group, cid, mq_all, cid_all) for cid in dict.fromkeys(cid_all or ())}


class AllocateMessageQueueByMachineRoom(_ByIndexStrategy):
    """Consume only brokers named ``idc@name`` whose idc is in ``consumer_idcs``, in even blocks.

    Mirrors: client/.../consumer/rebalance/AllocateMessageQueueByMachineRoom.java

    The broker name is split on ``@`` like Java ``String.split`` (trailing empty
    parts dropped); only names giving exactly two parts count. Java throws a
    NullPointerException when no idc set was configured and such a name
    appears; here that is a ValueError at the same moment.
    """

    name = "MACHINE_ROOM"

    def __init__(self, consumer_idcs: Iterable[str] | None = None) -> None:
        self.consumer_idcs: set[str] | None = (
            None if consumer_idcs is None else check_items(consumer_idcs, "consumer_idcs", str, into=set)
        )

    def _candidates(self, mq_all: Sequence[MessageQueue]) -> list[MessageQueue]:
        chosen = []
        for mq in mq_all:
            parts = java_split(mq.broker_name, "@")
            if len(parts) == 2:
                if self.consumer_idcs is None:
                    raise ValueError("consumer_idcs is not set (Java: NullPointerException)")
                if parts[0] in self.consumer_idcs:
                    chosen.append(mq)
        return chosen

    def _share(self, chosen: Sequence[MessageQueue], index: int, n_cid: int) -> list[MessageQueue]:
        per, rem = divmod(len(chosen), n_cid)
        share = list(chosen[per * index : per * index + per])
        if rem > index:
            share.append(chosen[index + per * n_cid])
        return share

    def __repr__(self) -> str:
        idcs = None if self.consumer_idcs is None else sorted(self.consumer_idcs, key=utf16_key)
        return f"AllocateMessageQueueByMachineRoom(consumer_idcs={idcs!r})"


class MachineRoomResolver(Protocol):
    """Where a broker and a consumer are deployed.

    Mirrors: client/.../consumer/rebalance/AllocateMachineRoomNearby.java#MachineRoomResolver
    """

    def broker_deploy_in(self, mq: MessageQueue) -> str | None: ...  # None or "": AllocateMachineRoomNearby refuses

    def consumer_deploy_in(self, cid: str) -> str | None: ...


class PrefixMachineRoomResolver:
    """Room = the part of the broker name / client id before the first separator.

    This is the resolver of RocketMQ's own AllocateMachineRoomNearByTest
    (``name.split("-")[0]`` with Java ``split`` semantics): ``"IDC1-broker"`` is in
    ``IDC1``. A name that Java would split into nothing (``"-"``) raises ValueError
    where Java raises ArrayIndexOutOfBoundsException.
    """

    def __init__(self, separator: str = "-") -> None:
        check_str(separator, "separator")
        self.separator = separator

    def _room(self, name: str) -> str:
        if not isinstance(name, str):
            raise ArgumentTypeError(f"name must be a broker name or client id (str), got {type(name).__name__}")
        parts = java_split(name, self.separator)
        if not parts:
            raise ValueError(f"cannot find a room in {name!r}: nothing is left after splitting on {self.separator!r}")
        return parts[0]

    def broker_deploy_in(self, mq: MessageQueue) -> str:
        if not isinstance(mq, MessageQueue):
            raise ArgumentTypeError(f"mq must be a MessageQueue, got {type(mq).__name__}")
        return self._room(mq.broker_name)

    def consumer_deploy_in(self, cid: str) -> str:
        return self._room(cid)


class MappingMachineRoomResolver:
    """Rooms looked up in two dicts: broker name -> room and client id -> room."""

    def __init__(self, broker_rooms: Mapping[str, str], consumer_rooms: Mapping[str, str]) -> None:
        self.broker_rooms = _str_dict(broker_rooms, "broker_rooms")
        self.consumer_rooms = _str_dict(consumer_rooms, "consumer_rooms")

    def broker_deploy_in(self, mq: MessageQueue) -> str | None:
        if not isinstance(mq, MessageQueue):
            raise ArgumentTypeError(f"mq must be a MessageQueue, got {type(mq).__name__}")
        return self.broker_rooms.get(mq.broker_name)

    def consumer_deploy_in(self, cid: str) -> str | None:
        if not isinstance(cid, str):
            raise ArgumentTypeError(f"cid must be str, got {type(cid).__name__}")
        return self.consumer_rooms.get(cid)


def _str_dict(value: object, name: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ArgumentTypeError(f"{name} must be a dict of str -> str, got {type(value).__name__}")
    out = dict(value)
    for key, room in out.items():
        if not isinstance(key, str) or not isinstance(room, str):
            raise ArgumentTypeError(f"{name} must map str to str, got {key!r}: {room!r}")
    return out


class AllocateMachineRoomNearby(AbstractAllocateMessageQueueStrategy):
    """Same-room queues go to same-room consumers; a room without consumers is shared by all.

    Mirrors: client/.../consumer/rebalance/AllocateMachineRoomNearby.java

    Rooms are visited in Java ``TreeMap`` order (UTF-16 string order). Each
    consumer-less room is allocated on its own among all consumers, so with AVG
    its remainder queues always land on the first consumers.
    """

    def __init__(self, strategy: AllocateMessageQueueStrategy, resolver: MachineRoomResolver) -> None:
        if strategy is None:
            raise ValueError("strategy is None")
        if resolver is None:
            raise ValueError("resolver is None")
        check_methods(strategy, "strategy", "allocate")
        if not isinstance(getattr(strategy, "name", None), str):
            raise ArgumentTypeError(f"strategy must have a str name, got {strategy!r}")
        check_methods(resolver, "resolver", "broker_deploy_in", "consumer_deploy_in")
        self.strategy = strategy
        self.resolver = resolver

    @property
    def name(self) -> str:
        return f"MACHINE_ROOM_NEARBY-{self.strategy.name}"

    def _rooms(
        self, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> tuple[dict[str, list[MessageQueue]], dict[str, list[str]]]:
        mq_rooms: dict[str, list[MessageQueue]] = {}
        for mq in mq_all:
            room = self.resolver.broker_deploy_in(mq)
            if not room:
                raise ValueError(f"machine room is empty for mq {mq}")
            mq_rooms.setdefault(_room_name(room), []).append(mq)
        cid_rooms: dict[str, list[str]] = {}
        for cid in cid_all:
            room = self.resolver.consumer_deploy_in(cid)
            if not room:
                raise ValueError(f"machine room is empty for consumer id {cid}")
            cid_rooms.setdefault(_room_name(room), []).append(cid)
        ordered = sorted(mq_rooms, key=utf16_key)
        return {r: mq_rooms[r] for r in ordered}, cid_rooms

    def allocate(
        self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> list[MessageQueue]:
        if not self.check(consumer_group, current_cid, mq_all, cid_all):
            return []
        mq_rooms, cid_rooms = self._rooms(mq_all, cid_all)
        my_room = _room_name(self.resolver.consumer_deploy_in(current_cid))  # _rooms has checked it
        result: list[MessageQueue] = []
        mine = mq_rooms.pop(my_room, None)
        if mine:  # current_cid is a member, so its room has consumers
            result += _as_list(self.strategy.allocate(consumer_group, current_cid, mine, cid_rooms[my_room]))
        for room, mqs in mq_rooms.items():
            if room not in cid_rooms:
                result += _as_list(self.strategy.allocate(consumer_group, current_cid, mqs, cid_all))
        return result

    def allocate_all(self, consumer_group: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> Allocation:
        self._check_group(mq_all, cid_all, consumer_group)
        mq_rooms, cid_rooms = self._rooms(mq_all, cid_all)
        own = {
            room: self.strategy.allocate_all(consumer_group, mq_rooms[room], cids)
            for room, cids in cid_rooms.items()
            if mq_rooms.get(room)
        }
        shared = [
            self.strategy.allocate_all(consumer_group, mqs, cid_all)
            for room, mqs in mq_rooms.items()
            if room not in cid_rooms
        ]
        result: Allocation = {}
        for cid in dict.fromkeys(cid_all):
            room = _room_name(self.resolver.consumer_deploy_in(cid))
            queues = _as_list(own[room][cid]) if room in own else []
            for part in shared:
                queues += _as_list(part[cid])
            result[cid] = queues
        return result

    def __repr__(self) -> str:
        return f"AllocateMachineRoomNearby({self.strategy!r}, {type(self.resolver).__name__}(...))"


def _room_name(room: object) -> str:
    if not isinstance(room, str):
        raise ArgumentTypeError(f"resolver: a resolver must return str rooms, got {type(room).__name__}")
    return room


def _as_list(queues: Iterable[MessageQueue] | None) -> list[MessageQueue]:
    if queues is None:
        raise ValueError("the inner strategy returned None (Java: NullPointerException in addAll)")
    return list(queues)


#: Java ``getName()`` -> class. MACHINE_ROOM_NEARBY's name carries its inner strategy's.
STRATEGIES: dict[str, type[AllocateMessageQueueStrategy]] = {
    "AVG": AllocateMessageQueueAveragely,
    "AVG_BY_CIRCLE": AllocateMessageQueueAveragelyByCircle,
    "CONSISTENT_HASH": AllocateMessageQueueConsistentHash,
    "CONFIG": AllocateMessageQueueByConfig,
    "MACHINE_ROOM": AllocateMessageQueueByMachineRoom,
    "MACHINE_ROOM_NEARBY": AllocateMachineRoomNearby,
}

DEFAULT_STRATEGY = "AVG"  # DefaultMQPushConsumer: AllocateMessageQueueAveragely in every constructor


def strategy_from_name(
    name: str,
    *,
    virtual_node_cnt: int = 10,
    consumer_idcs: Iterable[str] | None = None,
    message_queue_list: Iterable[MessageQueue] | None = None,
    resolver: MachineRoomResolver | None = None,
) -> AllocateMessageQueueStrategy:
    """Build a strategy from its Java name, e.g. ``"CONSISTENT_HASH"`` or ``"MACHINE_ROOM_NEARBY-AVG"``.

    NEARBY uses ``resolver`` (default: ``PrefixMachineRoomResolver("-")``).
    """
    if not isinstance(name, str):
        raise ArgumentTypeError(f"name: a strategy name must be str, got {type(name).__name__}")
    nearby = 0
    while name.startswith(_NEARBY_PREFIX):  # a loop, not recursion: a long name cannot exhaust the stack
        name = name[len(_NEARBY_PREFIX) :]
        nearby += 1
        if nearby > MAX_NEARBY_NESTING:
            raise ValueError(f"name: at most {MAX_NEARBY_NESTING} nested {_NEARBY_PREFIX} prefixes")
    strategy = _plain_strategy(name, virtual_node_cnt, consumer_idcs, message_queue_list)
    if nearby:
        rooms = PrefixMachineRoomResolver("-") if resolver is None else resolver
        for _ in range(nearby):
            strategy = AllocateMachineRoomNearby(strategy, rooms)
    return strategy


_NEARBY_PREFIX = "MACHINE_ROOM_NEARBY-"
#: How deep ``strategy_from_name`` nests MACHINE_ROOM_NEARBY (each level is one more call deep when allocating).
MAX_NEARBY_NESTING = 16


def _plain_strategy(
    name: str,
    virtual_node_cnt: int,
    consumer_idcs: Iterable[str] | None,
    message_queue_list: Iterable[MessageQueue] | None,
) -> AllocateMessageQueueStrategy:
    if name == "CONSISTENT_HASH":
        return AllocateMessageQueueConsistentHash(virtual_node_cnt)
    if name == "CONFIG":
        return AllocateMessageQueueByConfig(message_queue_list)
    if name == "MACHINE_ROOM":
        return AllocateMessageQueueByMachineRoom(consumer_idcs)
    if name in ("AVG", "AVG_BY_CIRCLE"):
        return STRATEGIES[name]()
    known = ", ".join(list(STRATEGIES)[:-1] + ["MACHINE_ROOM_NEARBY-<inner>"])
    raise ValueError(f"name: unknown strategy {name[:80]!r}; known: {known}")
