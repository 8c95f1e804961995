"""SelectMessageQueueByHash: one order id, one queue, while the producer's write queues stay the same."""

import pytest

from rmqlib.client.producer import SelectMessageQueueByHash, java_hash_code
from rmqlib.model import MessageQueue

QUEUES = [MessageQueue("FooBar", "DefaultBroker", i) for i in range(10)]


def test_hash_codes_are_javas():
    """String, Integer and Long hash codes as Java computes them ("polygenelubricants" hashes to Integer.MIN_VALUE,
    the case SelectMessageQueueByHashTest guards)."""
    assert java_hash_code("123") == 49 * 31 * 31 + 50 * 31 + 51
    assert java_hash_code("polygenelubricants") == -(2**31)
    assert java_hash_code(-7) == -7 and java_hash_code(2**31 - 1) == 2**31 - 1
    assert java_hash_code(2**32) == 1  # Long: the high half xor the low half
    # 0xFFFFFF0000000000 folds to 0xFFFFFF00; 0xFFFFFFFF7FFFFFFF (Integer.MIN_VALUE - 1 as a long) to 0x80000000
    assert java_hash_code(-(2**40)) == -256 and java_hash_code(-(2**31) - 1) == -(2**31)


def test_the_selector_takes_the_hash_remainder_made_positive():
    select = SelectMessageQueueByHash().select
    assert select(QUEUES, None, "123").queue_id == 48690 % 10 == 0
    assert select(QUEUES, None, "234").queue_id == 3
    assert select(QUEUES, None, -7).queue_id == 7  # Java: -7 % 10 == -7, then Math.abs
    assert select(QUEUES, None, "polygenelubricants").queue_id == 2**31 % 10
    assert [select(QUEUES[:4], None, k).queue_id for k in range(8)] == [0, 1, 2, 3, 0, 1, 2, 3]


def test_most_order_ids_move_when_queues_are_added():
    select = SelectMessageQueueByHash().select
    moved = [k for k in range(100) if select(QUEUES[:4], None, k) != select(QUEUES[:8], None, k)]
    assert moved == [k for k in range(100) if k % 8 >= 4]


@pytest.mark.parametrize(
    ("mqs", "arg", "error", "match"),
    [
        ([], 1, ValueError, "mqs"),
        ("abc", 1, TypeError, "mqs"),
        ([1], 1, TypeError, r"mqs\[0\]"),
        (QUEUES, 1.5, TypeError, "arg"),
        (QUEUES, True, TypeError, "arg"),
        (QUEUES, 2**63, ValueError, "arg"),
    ],
)
def test_bad_input_is_refused_by_name(mqs, arg, error, match):
    with pytest.raises(error, match=match):
        SelectMessageQueueByHash().select(mqs, None, arg)
