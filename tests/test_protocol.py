"""Java's own semantics the protocol models lean on: String.hashCode and a HashMap's iteration order."""

import pytest

from rmqlib.protocol import java_hash_map_keys, java_string_hash


def test_a_hash_map_iterates_its_keys_by_bucket_as_java_prints_them():
    # Java: put d, e, p, a, k (the distinct letters of "deepak") into a new HashMap() (16 buckets); printing it shows
    # {p=1, a=1, d=1, e=2, k=1}: buckets 112 & 15 = 0, 97 & 15 = 1, 100 & 15 = 4, 101 & 15 = 5, 107 & 15 = 11
    assert java_hash_map_keys(["d", "e", "p", "a", "k"], capacity=16) == ["p", "a", "d", "e", "k"]


def test_a_copied_map_gets_the_smallest_table_that_holds_its_keys_without_resizing():
    # new HashMap<>(map) of five keys: int(5 / 0.75 + 1) = 7 buckets asked, 8 given; "k" (107 & 7 = 3) moves up
    assert java_hash_map_keys(["d", "e", "p", "a", "k"]) == java_hash_map_keys(["d", "e", "p", "a", "k"], capacity=8)
    assert java_hash_map_keys(["d", "e", "p", "a", "k"]) == ["p", "a", "k", "d", "e"]
    # two keys: int(2 / 0.75 + 1) = 3, so 4 buckets ("a" is 97 & 3 = 1, "d" is 100 & 3 = 0)
    assert java_hash_map_keys(["a", "d"]) == ["d", "a"]


def test_the_high_half_of_a_hash_picks_the_bucket_too():
    # HashMap#hash folds the high 16 bits in. "TopicB".hashCode() is 0x95a7c513 and "TopicC"'s 0x95a7c514: by their
    # low four bits alone B (3) would come before C (4), but 0x95a7 ^ 0xc513 ends in 4 and 0x95a7 ^ 0xc514 in 3;
    # "TopicTest" (0x8e987641: 1 alone, 0x8e98 ^ 0x7641 ends in 9) goes from first to last
    assert java_string_hash("TopicB") & 0xFFFFFFFF == 0x95A7C513
    assert java_string_hash("TopicC") & 0xFFFFFFFF == 0x95A7C514
    assert java_string_hash("TopicTest") & 0xFFFFFFFF == 0x8E987641
    assert java_hash_map_keys(["TopicTest", "TopicB", "TopicC"], capacity=16) == ["TopicC", "TopicB", "TopicTest"]


def test_keys_in_one_bucket_keep_the_order_they_were_put():
    assert java_string_hash("Aa") == java_string_hash("BB")  # Java's classic collision
    assert java_hash_map_keys(["Aa", "BB"]) == ["Aa", "BB"]
    assert java_hash_map_keys(["BB", "Aa"]) == ["BB", "Aa"]


@pytest.mark.parametrize(
    ("keys", "capacity", "named"),
    [(["a", "a"], None, "keys"), (["a", 1], None, "keys"), (["a"], 3, "capacity"), (["a"], 0, "capacity")],
)
def test_bad_keys_or_capacity_are_refused_by_name(keys, capacity, named):
    with pytest.raises((TypeError, ValueError), match=named):
        java_hash_map_keys(keys, capacity)
