"""The shared argument checkers: the right kind of error, naming the argument, and values passed through."""

import math

import numpy as np
import pytest

from rmqlib.checks import (
    LONG_MAX,
    LONG_MIN,
    MAX_TIME_MS,
    ArgumentTypeError,
    check_bool,
    check_each,
    check_int,
    check_number,
    check_str,
    check_time,
    check_time_ms,
)


@pytest.mark.parametrize("bad", [True, 1.0, "1", None, [1]])
def test_check_int_refuses_other_types_with_a_type_error_naming_the_argument(bad):
    with pytest.raises(TypeError, match="consumers must be an int"):
        check_int(bad, "consumers", 1, 10)


def test_check_int_refuses_out_of_range_with_the_range():
    with pytest.raises(ValueError, match=r"consumers must be an int in 1\.\.10, got 11") as info:
        check_int(11, "consumers", 1, 10)
    assert not isinstance(info.value, TypeError)
    assert check_int(10, "consumers", 1, 10) == 10


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_check_number_refuses_nan_and_infinity(bad):
    with pytest.raises(ValueError, match="rate must be a finite number"):
        check_number(bad, "rate", 0)


def test_check_bool_takes_only_true_and_false():
    assert check_bool(False, "flag") is False
    for bad in (0, 1, "no", None):
        with pytest.raises(ArgumentTypeError, match="flag must be True or False"):
            check_bool(bad, "flag")


def test_check_str_and_check_each_name_the_item_at_fault():
    assert check_str("a", "topic") == "a"
    with pytest.raises(ValueError, match="topic must be a non-empty string"):
        check_str("", "topic")
    with pytest.raises(TypeError, match=r"sizes\[2\] must be an int"):
        check_each([1, 2, "3"], "sizes", check_int)
    with pytest.raises(TypeError, match="sizes must be a sequence"):
        check_each("123", "sizes", check_int)
    with pytest.raises(ValueError, match="at most 2 items"):
        check_each(range(10**12), "sizes", check_int, max_len=2)


@pytest.mark.parametrize("bad", [1.0, 2.5, math.nan, math.inf, True, False, None, "5", 1j])
def test_times_are_whole_milliseconds(bad):
    for check in (check_time, check_time_ms):
        with pytest.raises(ArgumentTypeError, match=r"^at_ms must be a whole number of milliseconds \(an int\)"):
            check(bad, "at_ms")


def test_a_time_may_be_any_java_long_and_a_schedules_time_at_most_2_to_the_53():
    for good in (0, -1, MAX_TIME_MS, -MAX_TIME_MS, LONG_MAX, LONG_MIN):
        assert check_time(good) is good
    for bad in (LONG_MAX + 1, LONG_MIN - 1):
        with pytest.raises(ValueError, match="now_ms must be a number of milliseconds within Java's long range"):
            check_time(bad)
    assert check_time_ms(MAX_TIME_MS) == MAX_TIME_MS
    with pytest.raises(ValueError, match=r"now_ms must be a number of milliseconds within \+-2\*\*53"):
        check_time_ms(MAX_TIME_MS + 1)
    assert check_time_ms(LONG_MAX, bounded=False) == LONG_MAX


def test_a_numpy_integer_time_comes_back_as_an_int():
    value = check_time(np.int64(1_500))
    assert value == 1_500 and type(value) is int
