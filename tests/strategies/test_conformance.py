"""Every recorded run of the real Java strategies must reproduce exactly.

The vectors are in tests/data/conformance (layout in its README). A missing
file fails the suite: the conformance check is never silently skipped.
"""

import json

import pytest

from support import conformance_dir, java_vectors

from rmqlib.hashring import md5_hash
from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs, java_split
from rmqlib.strategies import (
    STRATEGIES,
    AllocateMachineRoomNearby,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueByMachineRoom,
    AllocateMessageQueueConsistentHash,
)

VECTOR_FILE = conformance_dir() / "rocketmq_golden_public.json"


def load_cases():
    data = json.loads(VECTOR_FILE.read_text(encoding="utf-8"))
    assert data["schema_version"] == 1
    cases = [case for group in data["groups"].values() for case in group]
    assert len(cases) == sum(data["counts"].values())
    return cases


CASES = load_cases()


class VectorResolver:
    """The resolver of the vectors: room = name.split("-")[0], Java semantics."""

    def broker_deploy_in(self, mq):
        return java_split(mq.broker_name, "-")[0]

    def consumer_deploy_in(self, cid):
        return java_split(cid, "-")[0]


def build_strategy(name, params):
    if name == "CONSISTENT_HASH":
        if params.get("no_arg_constructor"):
            return AllocateMessageQueueConsistentHash()
        return AllocateMessageQueueConsistentHash(params["virtualNodeCnt"])
    if name == "MACHINE_ROOM":
        return AllocateMessageQueueByMachineRoom(params["consumeridcs"])
    if name == "CONFIG":
        mqs = params["messageQueueList"] if params["messageQueueList_set"] else None
        return AllocateMessageQueueByConfig(None if mqs is None else [MessageQueue(*m) for m in mqs])
    if name.startswith("MACHINE_ROOM_NEARBY-"):
        return AllocateMachineRoomNearby(
            build_strategy(params["inner_strategy"], params["inner_params"]), VectorResolver()
        )
    return STRATEGIES[name]()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_allocation_matches_java(case):
    strategy = build_strategy(case["strategy"], case["params"])
    assert strategy.name == case["strategy"]
    mq_all = [MessageQueue(*m) for m in case["mqAll"]]
    cid_all = list(case["cidAll"])
    assert case["results"], "a case without results would check nothing"
    for expected in case["results"]:
        cid = expected["currentCID"]
        if expected["ok"]:
            got = strategy.allocate(case["consumerGroup"], cid, mq_all, cid_all)
            assert [str(mq) for mq in got] == expected["mqs"], cid
            assert [mq_all.index(mq) for mq in got] == expected["indices"], cid
        else:
            error = ValueError if expected["exception"].endswith("IllegalArgumentException") else Exception
            with pytest.raises(error):
                strategy.allocate(case["consumerGroup"], cid, mq_all, cid_all)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_java_sort_flags_match(case):
    mq_all = [MessageQueue(*m) for m in case["mqAll"]]
    assert (java_sorted_mqs(mq_all) == mq_all) == case["mqAll_java_sorted"]
    assert (java_sorted_cids(case["cidAll"]) == case["cidAll"]) == case["cidAll_java_sorted"]


CH_CASES = [c for c in CASES if "ring_hash_samples" in c]


@pytest.mark.parametrize("case", CH_CASES, ids=[c["id"] for c in CH_CASES])
def test_ring_matches_java(case):
    for sample in case["ring_hash_samples"]:
        assert md5_hash(sample["key"]) == sample["hash"], sample["key"]
    params = case["params"]
    strategy = build_strategy(case["strategy"], params)
    ring = strategy.ring(case["cidAll"])
    assert ring.inserted == case["ring_vnodes_inserted"]
    assert len(ring) == case["ring_size"]
    assert len(ring.collisions) == len(case["ring_collisions"])


JAVA_STRINGS = java_vectors("java_string_bytes")["cases"]


@pytest.mark.parametrize("case", JAVA_STRINGS, ids=lambda case: case["utf16"][:24] or "empty")
def test_md5_hash_digests_the_bytes_java_encodes(case):
    """tools/java/record_java_vectors.py recorded String#getBytes(UTF_8) from OpenJDK, lone surrogates included."""
    import hashlib

    key = "".join(chr(int(unit, 16)) for unit in case["utf16"].split())
    assert md5_hash(key) == int.from_bytes(hashlib.md5(bytes.fromhex(case["utf8"])).digest()[:4], "big")


def test_md5_hash_encodes_surrogates_as_java_does():
    """String#getBytes(UTF_8): a surrogate pair is one four-byte character, a lone surrogate the replacement "?"."""
    import hashlib

    def java(data: bytes) -> int:
        return int.from_bytes(hashlib.md5(data).digest()[:4], "big")

    assert md5_hash("a\ud800b") == java(b"a?b")
    assert md5_hash("\ud83d\ude00") == md5_hash("\U0001f600") == java(b"\xf0\x9f\x98\x80")
    assert md5_hash("10.0.0.1@1001-0") == java(b"10.0.0.1@1001-0")
