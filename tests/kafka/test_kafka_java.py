"""The Java behaviours the assignors depend on: String.hashCode and java.util.HashSet's iteration order.

tests/kafka/data/java_hash_orders.json was written by a few lines of Java run on OpenJDK 17: for each case, the
keys inserted (in that order) into a new HashSet<String>, each key's hashCode(), and the order the set iterated.
It covers a table that grows from 16 to 256 buckets, keys outside the BMP, and bins of 9 and 10 colliding keys
(where Java doubles a small table instead of making a tree).
"""

import json
from pathlib import Path

import pytest

from rmqlib.kafka import TopicPartition
from rmqlib.kafka._java import JavaHashSet, hash_order, string_hash, string_hash_order, topic_partition_hash

CASES = json.loads((Path(__file__).parent / "data" / "java_hash_orders.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c['inserted'])}-keys")
def test_string_hash_codes_match_java(case):
    assert [string_hash(k) for k in case["inserted"]] == case["hash_codes"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c['inserted'])}-keys")
def test_hash_set_iterates_in_javas_order(case):
    assert hash_order(case["inserted"], string_hash) == case["iterated"]


def test_string_hash_order_ignores_the_callers_order():
    keys = CASES[0]["inserted"]
    assert string_hash_order(keys) == string_hash_order(list(reversed(keys)))


def test_topic_partition_hash_is_kafkas_formula():
    # TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode(); "t".hashCode() == 116
    assert topic_partition_hash("t", 0) == 31 * 31 + 116
    assert TopicPartition("t", 5).java_hash() == 31 * 36 + 116


def test_java_hash_set_remove_and_first():
    table = JavaHashSet(lambda x: x)
    for x in (17, 1, 33):
        table.add(x)
    assert list(table) == [17, 1, 33] and table.first() == 17  # all in bin 1, in insertion order
    table.remove(17)
    assert list(table) == [1, 33] and len(table) == 2 and 17 not in table
