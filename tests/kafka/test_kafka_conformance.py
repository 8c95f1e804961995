"""The models give Kafka's own answers: 810 seeded random groups (120 small and 15 of up to 64 members per
assignor; mixed and identical subscriptions, owned partitions, conflicting claims, generations, static members,
ids outside the BMP) assigned by Kafka's Java classes compiled from rmqlib.kafka.KAFKA_COMMIT
(tests/kafka/oracle/make_conformance.py says how), compared here with the models. Client-side assignors must match
list for list (Kafka's order within each member's list included); the server-side ones member by member as sets
(Kafka returns sets)."""

import json
from pathlib import Path

import pytest

from rmqlib.kafka import ASSIGNORS, KAFKA_COMMIT, Subscription, TopicPartition

DATA = json.loads((Path(__file__).parent / "data" / "kafka_conformance.json").read_text(encoding="utf-8"))
CASES = DATA["cases"]


def tp(word):
    topic, _, partition = word.rpartition(":")
    return TopicPartition(topic, int(partition))


def run(case):
    subs = {
        m: Subscription(
            spec["topics"], [tp(w) for w in spec["owned"]], spec["generation"], group_instance_id=spec["instance"]
        )
        for m, spec in case["members"].items()
    }
    assignor = ASSIGNORS[case["assignor"]]()
    if case["assignor"] in ("uniform", "server-range"):
        previous = {m: [tp(w) for w in spec["owned"]] for m, spec in case["members"].items() if spec["owned"]}
        return assignor.assign(case["partitions_per_topic"], subs, previous)
    return assignor.assign(case["partitions_per_topic"], subs)


def test_vectors_come_from_the_commit_the_models_cite():
    assert DATA["kafka_commit"] == KAFKA_COMMIT
    assert {c["assignor"] for c in CASES} == set(ASSIGNORS)
    assert not [c for c in CASES if "kafka_error" in c]


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
def test_model_matches_kafka(name):
    failures = []
    for i, case in enumerate(c for c in CASES if c["assignor"] == name):
        got = run(case)
        expected = {m: [tp(w) for w in tps] for m, tps in case["kafka"].items()}
        if name in ("uniform", "server-range"):
            got = {m: sorted(v) for m, v in got.items()}
            expected = {m: sorted(v) for m, v in expected.items()}
        if got != expected:
            failures.append(i)
    assert not failures, f"{len(failures)} of the {name} cases differ from Kafka, first: case {failures[:5]}"
