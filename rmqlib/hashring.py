"""The consistent-hash ring of AllocateMessageQueueConsistentHash.

Mirrors: common/.../consistenthash/ConsistentHashRouter.java (and VirtualNode.java)

The ring maps a hash to the physical node (client id) of one virtual node.
Three Java details decide who owns what and are kept here:

* a virtual node's key is ``"<cid>-<replicaIndex>"`` and a node added again
  (a duplicate client id) continues its replica numbering from the number of
  ring entries it already owns;
* ``TreeMap.put`` overwrites, so when two virtual nodes hash alike the later
  insertion owns the position;
* a queue routes to the first ring position ``>=`` its hash, wrapping to the
  smallest position past the end.

``HashRing.build`` does this for a whole group in one pass, vectorised with
numpy, and reuses MD5 results across calls (slider moves rebuild rings that
differ by a few consumers).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from rmqlib.checks import ArgumentTypeError, check_callable, check_int, check_str

HashFunction = Callable[[str], int]

_MD5_CACHE_SIZE = 1 << 20
#: The most virtual nodes one ring takes (client ids x ``virtual_node_cnt``), so that building a ring stays
#: bounded in time and memory (about a second of MD5 at this size). Java has no limit; no real group comes near.
MAX_RING_POINTS = 1_000_000


def md5_hash(key: str) -> int:
    """First four MD5 digest bytes of the UTF-8 key, big-endian, unsigned (a lone surrogate encoded as ``?``, as
    Java's ``getBytes(UTF_8)`` does).

    Mirrors: common/.../consistenthash/ConsistentHashRouter.java#MD5Hash.hash
    """
    if type(key) is not str:
        check_str(key, "key", empty=True)
    try:
        data = key.encode("utf-8")
    except UnicodeEncodeError:  # surrogates: Java encodes a pair as one character and a lone one as "?"
        data = key.encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass").encode("utf-8", "replace")
    return int.from_bytes(hashlib.md5(data).digest()[:4], "big")


_cached_md5 = lru_cache(maxsize=_MD5_CACHE_SIZE)(md5_hash)


def clear_hash_cache() -> None:
    """Forget cached MD5 results (benchmarks measure cold rings with this)."""
    _cached_md5.cache_clear()


def _hasher(hash_function: HashFunction | None) -> HashFunction:
    if hash_function is None:
        return _cached_md5

    def checked(key: str) -> int:
        value = hash_function(key)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ArgumentTypeError(f"hash_function must return int, got {type(value).__name__} for {key!r}")
        return int(value)

    return checked


class HashRing:
    """An immutable ring: sorted positions and the client id owning each."""

    __slots__ = ("positions", "owners", "inserted", "collisions", "_hash")

    def __init__(
        self,
        positions: np.ndarray,
        owners: list[str],
        inserted: int,
        collisions: list[tuple[int, str, str]],
        hash_function: HashFunction,
    ):
        self.positions = positions  # sorted int64/object array of ring keys
        self.owners = owners  # owners[i] owns positions[i]
        self.inserted = inserted  # virtual nodes put (before overwrites)
        self.collisions = collisions  # (position, overwritten vnode key, winning vnode key)
        self._hash = hash_function

    def __len__(self) -> int:
        return len(self.owners)

    @classmethod
    def build(cls, cids: Sequence[str], virtual_node_cnt: int, hash_function: HashFunction | None = None) -> HashRing:
        """Add every cid in order with ``virtual_node_cnt`` virtual nodes, like the Java constructor."""
        virtual_node_cnt = check_int(virtual_node_cnt, "virtual_node_cnt", 0, MAX_RING_POINTS)
        check_callable(hash_function, "hash_function", none=True)
        if isinstance(cids, (str, bytes, dict)) or not isinstance(cids, Sequence):
            raise ArgumentTypeError(f"cids must be a sequence of client ids, got {type(cids).__name__}")
        for cid in cids:
            if type(cid) is not str:
                check_str(cid, "cids[...]", empty=True)
        if len(cids) * virtual_node_cnt > MAX_RING_POINTS:
            raise ValueError(
                f"virtual_node_cnt: {len(cids)} client ids x {virtual_node_cnt} virtual nodes is more "
                f"than the {MAX_RING_POINTS} ring points allowed"
            )
        hasher = _hasher(hash_function)
        if len(set(cids)) != len(cids):
            return cls._build_sequential(cids, virtual_node_cnt, hasher)
        n = len(cids) * virtual_node_cnt
        keys = [f"{cid}-{i}" for cid in cids for i in range(virtual_node_cnt)]
        hashes = list(map(hasher, keys))
        if n == 0:
            return cls(np.empty(0, dtype=np.int64), [], 0, [], hasher)
        values = _as_array(hashes)
        # Stable sort by position keeps insertion order among equal positions;
        # the last of each run is the one TreeMap.put left in place.
        order = np.argsort(values, kind="stable")
        sorted_values = values[order]
        last_of_run = np.ones(n, dtype=bool)
        last_of_run[:-1] = sorted_values[1:] != sorted_values[:-1]
        collisions = []
        if not last_of_run.all():
            losers = np.flatnonzero(~last_of_run)
            for j in sorted(losers, key=lambda j: order[j + 1]):
                collisions.append((int(sorted_values[j]), keys[order[j]], keys[order[j + 1]]))
        owner_index = (order[last_of_run] // virtual_node_cnt).tolist()
        owners = [cids[i] for i in owner_index]
        return cls(sorted_values[last_of_run], owners, n, collisions, hasher)

    @classmethod
    def _build_sequential(cls, cids: Sequence[str], virtual_node_cnt: int, hasher: HashFunction) -> HashRing:
        """Exact Java insertion for groups with repeated client ids.

        A repeated id's replicas are numbered from the count of ring entries it
        owns at that moment (``getExistingReplicas``), which depends on overwrites.
        """
        ring: dict[int, tuple[str, str]] = {}
        owned: dict[str, int] = {}
        collisions = []
        inserted = 0
        for cid in cids:
            existing = owned.get(cid, 0)
            for i in range(virtual_node_cnt):
                key = f"{cid}-{i + existing}"
                h = hasher(key)
                previous = ring.get(h)
                if previous is not None:
                    owned[previous[0]] -= 1
                    collisions.append((h, previous[1], key))
                ring[h] = (cid, key)
                owned[cid] = owned.get(cid, 0) + 1
                inserted += 1
        positions = sorted(ring)
        return cls(_as_array(positions), [ring[p][0] for p in positions], inserted, collisions, hasher)

    def route(self, key: str) -> str | None:
        """The client id owning ``key``: first position >= its hash, wrapping; None on an empty ring."""
        if type(key) is not str:
            check_str(key, "key", empty=True)
        if not self.owners:
            return None
        i = int(np.searchsorted(self.positions, self._hash(key), side="left"))
        return self.owners[i if i < len(self.owners) else 0]

    def route_many(self, keys: Sequence[str]) -> list[str | None]:
        """``route`` for many keys at once."""
        if isinstance(keys, (str, bytes, dict)) or not isinstance(keys, Sequence):
            raise ArgumentTypeError(f"keys must be a sequence of str, got {type(keys).__name__}")
        for key in keys:
            if type(key) is not str:
                check_str(key, "keys[...]", empty=True)
        if not self.owners:
            return [None] * len(keys)
        idx = np.searchsorted(self.positions, _as_array([self._hash(k) for k in keys]), side="left")
        idx[idx == len(self.owners)] = 0
        return [self.owners[i] for i in idx]

    def vnode_count(self) -> dict[str, int]:
        """Ring positions each client id owns after overwrites."""
        counts: dict[str, int] = {}
        for owner in self.owners:
            counts[owner] = counts.get(owner, 0) + 1
        return counts

    def arcs(self) -> list[tuple[int, int, str]]:
        """(start exclusive, end inclusive, owner) for each arc, the first one wrapping."""
        if not self.owners:
            return []
        p = [int(x) for x in self.positions]
        return [(p[i - 1], p[i], self.owners[i]) for i in range(len(p))]


def _as_array(values: Sequence[int]) -> np.ndarray:
    """int64 when every hash fits (MD5 ring keys always do), else exact Python ints."""
    try:
        return np.asarray(values, dtype=np.int64)
    except OverflowError:
        return np.asarray(values, dtype=object)
