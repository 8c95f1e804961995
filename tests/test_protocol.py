"""Java's own semantics the protocol models lean on: String.hashCode and a HashMap's iteration order."""

import pytest

from support import java_vectors

from rmqlib.protocol import java_hash_map_keys, java_string_hash

RECORDED = java_vectors("java_hash_map_order")


def _table_after_puts(n: int) -> int:
    """A new HashMap() has 16 buckets and doubles when a put takes it past three quarters full."""
    capacity = 16
    while n > capacity * 3 // 4:
        capacity *= 2
    return capacity


@pytest.mark.parametrize("case", RECORDED["cases"], ids=lambda case: f"{len(case['keys'])}-keys")
def test_the_order_matches_what_java_printed(case):
    """tools/java/record_java_vectors.py recorded these from OpenJDK's HashMap: a copy of a map of the keys, and a
    new HashMap() they were put into one by one."""
    assert java_hash_map_keys(case["keys"]) == case["copied"]
    assert java_hash_map_keys(case["keys"], capacity=_table_after_puts(len(case["keys"]))) == case["put"]


STRINGS = java_vectors("java_string_bytes")


@pytest.mark.parametrize("case", STRINGS["cases"], ids=lambda case: case["utf16"][:24] or "empty")
def test_string_hash_matches_what_java_printed(case):
    """String#hashCode from OpenJDK (tools/java/record_java_vectors.py), over UTF-16 units, lone surrogates too."""
    assert java_string_hash("".join(chr(int(unit, 16)) for unit in case["utf16"].split())) == case["hash_code"]


def test_the_recorded_cases_reach_past_one_table_size():
    sizes = {len(case["keys"]) for case in RECORDED["cases"]}
    assert min(sizes) == 1 and max(sizes) > 24  # tables of 2 to 64 buckets when copied, 16 to 64 when put


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
