"""The shared argument checkers: the right kind of error, naming the argument, and values passed through."""

import math

import pytest

from rmqlib.checks import ArgumentTypeError, check_bool, check_each, check_int, check_number, check_str


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
