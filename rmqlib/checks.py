"""Argument checks shared by the public entry points, so that every bad input gets the same kind of answer.

Each checker returns the value it was given (an ``int`` stays an ``int``) or raises:

* a wrong type -> :class:`ArgumentTypeError`, a ``TypeError`` that is also a ``ValueError`` (so callers and
  tests written against either keep working);
* a value of the right type but out of range -> ``ValueError``.

The message always names the argument: ``"<name> must be <what>, got <value>"``.

One pattern for speed (the simulator builds a record per pull and per message): **public entry points validate;
trusted code calls a trusted twin; containers change only through their own methods.** A record's public
constructor (``__init__``, or a dataclass's generated one plus ``__post_init__``) checks every argument with the
functions below, in one place, with no shortcut of its own. Code that built every field itself (the pull path,
the pull processor, the simulator) calls the record's classmethod ``_trusted(...)`` instead: the same fields in
the same order, no checks, the same record (a test builds each record both ways and compares them). A record
with nothing to check (an answer the model computes, such as ``PullDecision``) is a ``NamedTuple``. A public
method that library code also calls with values it has already checked splits the same way: the public method
checks, then calls its ``_<name>_trusted`` twin, which the library calls directly
(``MessageStore._get_message_trusted``). A container that a hot path fills or empties in batches offers batch
methods that do what repeated single calls do (``_OffsetMap.put_many``/``remove_many``); no other class reads or
writes its insides. A checker called on every step keeps its fast test inside itself (:func:`check_time`), so
callers call it plainly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from enum import Enum
from numbers import Integral, Real
from typing import Any, TypeVar

T = TypeVar("T")
E = TypeVar("E", bound=Enum)


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type (a ``TypeError``; also a ``ValueError`` for code that catches that)."""


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _range_text(lo, hi) -> str:
    if lo is not None and hi is not None:
        return f" in {lo}..{hi}"
    if lo is not None:
        return f" >= {lo}"
    if hi is not None:
        return f" <= {hi}"
    return ""


def check_int(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer (not a bool; numpy integers are accepted and returned as ``int``) within ``lo..hi``."""
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, Integral):
            raise ArgumentTypeError(f"{name} must be an int{_range_text(lo, hi)}, got {_show(value)}")
        value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{name} must be an int{_range_text(lo, hi)}, got {_show(value)}")
    return value


def check_number(value, name: str, lo: float | None = None, hi: float | None = None) -> float:
    """A finite real number (int or float, not a bool, not NaN or infinite) within ``lo..hi``."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ArgumentTypeError(f"{name} must be a finite number{_range_text(lo, hi)}, got {_show(value)}")
    if not math.isfinite(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{name} must be a finite number{_range_text(lo, hi)}, got {_show(value)}")
    return value


def check_bool(value, name: str) -> bool:
    """``True`` or ``False`` and nothing else (not 0/1, not a string, not None)."""
    if value is True or value is False:
        return value
    if type(value).__name__ == "bool_":  # numpy.bool_, without importing numpy here
        return bool(value)
    raise ArgumentTypeError(f"{name} must be True or False, got {_show(value)}")


def check_str(value, name: str, *, empty: bool = False, max_len: int | None = None) -> str:
    """A string; non-empty unless ``empty``; at most ``max_len`` characters when given."""
    if type(value) is not str and not isinstance(value, str):  # a plain str skips the isinstance call
        raise ArgumentTypeError(f"{name} must be a string, got {_show(value)}")
    if not empty and not value:
        raise ValueError(f"{name} must be a non-empty string, got ''")
    if max_len is not None and len(value) > max_len:
        raise ValueError(f"{name} must be at most {max_len} characters, got {len(value)}")
    return value


def check_each(values, name: str, check: Callable[[Any, str], T], *, max_len: int | None = None) -> list[T]:
    """A list of the items of ``values`` (any iterable but a string or a mapping), each passed through
    ``check(item, f"{name}[{i}]")``; at most ``max_len`` items when given."""
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, Iterable):
        raise ArgumentTypeError(f"{name} must be a sequence, got {_show(values)}")
    out: list[T] = []
    for i, item in enumerate(values):
        if max_len is not None and i >= max_len:
            raise ValueError(f"{name} must hold at most {max_len} items")
        out.append(check(item, f"{name}[{i}]"))
    return out


def check_instance(value, name: str, cls: type | tuple[type, ...]) -> Any:
    """An instance of ``cls``."""
    if type(value) is not cls and not isinstance(value, cls):  # an exact instance skips the isinstance call
        what = " or ".join(c.__name__ for c in cls) if isinstance(cls, tuple) else cls.__name__
        raise ArgumentTypeError(f"{name} must be a {what}, got {_show(value)}")
    return value


def check_callable(value, name: str, *, none: bool = False) -> Any:
    """Something callable (or ``None`` when ``none``)."""
    if value is None and none:
        return value
    if not callable(value):
        raise ArgumentTypeError(f"{name} must be callable{' or None' if none else ''}, got {_show(value)}")
    return value


def check_methods(value, name: str, *methods: str) -> Any:
    """An object with each of ``methods`` as a callable attribute (duck typing, checked once)."""
    for method in methods:
        if not callable(getattr(value, method, None)):
            wanted = ", ".join(f"{m}()" for m in methods)
            raise ArgumentTypeError(f"{name} must have {wanted}; {_show(value)} has no {method}()")
    return value


def check_items(value, name: str, cls: type, into: type = list) -> Any:
    """A collection of ``cls`` instances (any iterable but a string or a single ``cls``; a mapping gives its keys),
    returned as ``into`` (``list`` or ``set``); a list given for a list is returned as it is (callers only read it)."""
    if not (into is list and type(value) is list):
        if isinstance(value, (str, bytes, cls)) or not isinstance(value, Iterable):
            got = f"a single {cls.__name__}" if isinstance(value, cls) else type(value).__name__
            raise ArgumentTypeError(f"{name} must be a collection of {cls.__name__}, got {got}")
        value = into(value)
    for item in value:
        if type(item) is not cls and not isinstance(item, cls):
            raise ArgumentTypeError(f"{name}: elements must be {cls.__name__}, got {type(item).__name__}")
    return value


def check_enum(value: Any, name: str, enum_cls: type[E]) -> E:
    """A member of ``enum_cls``: a member is returned as it is; a ``str`` that is a member's value or name
    (``"POP"``, ``"crash"``, ``"CRASH"``) gives that member, so settings typed on a command line still work.
    A ``str`` naming no member is a ``ValueError``, anything else an :class:`ArgumentTypeError`; either message
    names ``name`` and lists the values the field takes."""
    if isinstance(value, enum_cls):
        return value
    values = ", ".join(str(member.value) for member in enum_cls)
    if isinstance(value, str):
        for member in enum_cls:
            if value == member.value or value == member.name:
                return member
        raise ValueError(f"{name} must be one of {values}, got {value[:60]!r}")
    raise ArgumentTypeError(f"{name} must be a {enum_cls.__name__} or one of {values}, got {type(value).__name__}")


def check_list_of(value, name: str, cls: type) -> list:
    """A ``list`` whose items are all instances of ``cls`` (the list itself is returned)."""
    if not isinstance(value, list):
        raise ArgumentTypeError(f"{name} must be a list of {cls.__name__}, got {type(value).__name__}")
    for item in value:
        if not isinstance(item, cls):
            raise ArgumentTypeError(f"{name} must hold {cls.__name__}, got {type(item).__name__}")
    return value


def check_optional_int(value, name: str, lo: int | None = None, hi: int | None = None) -> int | None:
    """``None`` or :func:`check_int`."""
    return None if value is None else check_int(value, name, lo, hi)


def check_str_or_none(value, name: str) -> str | None:
    """``None`` or any string (empty allowed)."""
    if value is not None and not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a string or None, got {_show(value)}")
    return value


def check_mapping(value, name: str) -> Any:
    """A mapping (``dict`` or anything with ``items()`` and ``get()``)."""
    if not isinstance(value, dict) and not (
        callable(getattr(value, "items", None)) and callable(getattr(value, "get", None))
    ):
        raise ArgumentTypeError(f"{name} must be a mapping, got {_show(value)}")
    return value


#: The largest time in milliseconds the periodic services accept (2**53 ms, some 285,000 years after 1970: their
#: schedules add periods to it, and this keeps every schedule far inside Java's ``long``).
MAX_TIME_MS = 2**53
#: Java's ``long`` range: the widest time in milliseconds any model accepts.
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def check_time_ms(value, name: str = "now_ms", *, bounded: bool = True) -> int:
    """A time in milliseconds as Java keeps it (a ``long``): an int, not a bool (a numpy integer is returned as
    an ``int``); with ``bounded`` (the default) ``|value| <= MAX_TIME_MS``, for the periodic services whose
    schedules do arithmetic on it, else anything in Java's ``long`` range."""
    if type(value) is int and -MAX_TIME_MS <= value <= MAX_TIME_MS:  # the common case, checked first
        return value
    lo, hi = (-MAX_TIME_MS, MAX_TIME_MS) if bounded else (LONG_MIN, LONG_MAX)
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ArgumentTypeError(f"{name} must be a whole number of milliseconds (an int), got {_show(value)}")
    value = int(value)
    if not lo <= value <= hi:
        bound = "+-2**53" if bounded else "Java's long range"
        raise ValueError(f"{name} must be a number of milliseconds within {bound}, got {_show(value)}")
    return value


def check_time(value, name: str = "now_ms") -> int:
    """A time (or a span of time) in milliseconds: an int in Java's ``long`` range, as every model's
    ``now_ms`` is (:func:`check_time_ms` without the schedule bound). Call it plainly: it tests the
    common case first."""
    if type(value) is int and -MAX_TIME_MS <= value <= MAX_TIME_MS:
        return value
    return check_time_ms(value, name, bounded=False)


__all__ = [
    "LONG_MAX",
    "LONG_MIN",
    "MAX_TIME_MS",
    "ArgumentTypeError",
    "check_bool",
    "check_callable",
    "check_each",
    "check_enum",
    "check_instance",
    "check_int",
    "check_items",
    "check_list_of",
    "check_mapping",
    "check_methods",
    "check_number",
    "check_optional_int",
    "check_str",
    "check_str_or_none",
    "check_time",
    "check_time_ms",
]
