"""The language of figures and panels: English, or Chinese for the Chinese edition.

``use_language("zh")`` (the first line of every notebook in ``chapters/zh/``) switches every label
the figure builders and panels draw: titles, axis labels, legend names, hover text, slider and
button descriptions. Numbers, Java names, client ids and queue names stay as they are.

Every such label goes through :func:`text`. Its key is the English message itself (with
``str.format`` fields: ``text("{n} consumers", n=4)``), so English mode draws exactly the English
text; the Chinese entries live in one dict, :data:`rmqlib.viz.messages.ZH`. Text a notebook passes
in (a title, an axis title, a prediction's question) goes through :func:`phrase`: the same lookup,
and the text unchanged where the catalog has no entry. A lookup is one dict access: a slider move
pays nothing measurable for it.

For tests, :func:`strict` makes a missing Chinese entry raise :class:`MissingTranslation` instead
of falling back to English.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from rmqlib.checks import check_str
from rmqlib.viz.messages import PATTERNS, ZH

LANGUAGES = ("en", "zh")
_current = ["en"]
_strict = [False]
# per language: message -> its text in that language (English maps each message to itself, so no dict)
_CATALOGS: dict[str, dict[str, str]] = {"zh": ZH}


class MissingTranslation(LookupError):
    """A label has no entry in the current language's catalog (raised in :func:`strict` mode only)."""


def use_language(lang: str) -> None:
    """Draw every later figure and panel in ``lang`` (``"en"`` or ``"zh"``)."""
    check_str(lang, "lang")
    if lang not in LANGUAGES:
        raise ValueError(f"lang: one of {', '.join(LANGUAGES)}, got {lang!r}")
    _current[0] = lang


def language() -> str:
    """The language figures are drawn in now."""
    return _current[0]


@contextlib.contextmanager
def strict(on: bool = True) -> Iterator[None]:
    """Within this block, a label with no entry in the current language raises :class:`MissingTranslation`."""
    if not isinstance(on, bool):
        raise TypeError(f"on must be a bool, got {type(on).__name__}")
    before = _strict[0]
    _strict[0] = on
    try:
        yield
    finally:
        _strict[0] = before


@contextlib.contextmanager
def language_of(lang: str) -> Iterator[None]:
    """Within this block, draw in ``lang``; the language before it comes back afterwards."""
    before = language()
    use_language(lang)
    try:
        yield
    finally:
        _current[0] = before


def text(message: str, /, **fields: object) -> str:
    """``message`` (an English message of the catalog) in the current language, with ``fields`` filled in.

    Without ``fields`` the message is not formatted (so plotly's ``%{y}`` needs no escaping); with
    them, plotly's braces are written doubled (``%{{y}}``), as in an f-string.
    """
    lang = _current[0]
    if lang != "en":
        found = _CATALOGS[lang].get(message)
        if found is not None:
            message = found
        elif _strict[0]:
            raise MissingTranslation(f"no {lang} entry for {message!r}")
    return message.format(**fields) if fields else message


def plural(one: str, many: str, n: int, /, **fields: object) -> str:
    """``text(one)`` when ``n == 1`` else ``text(many)``, formatted with ``n`` and ``fields``."""
    return text(one if n == 1 else many, n=n, **fields)


_PATTERN_CACHE: dict[str, list[tuple[re.Pattern[str], str]]] = {}


def _patterns(lang: str) -> list[tuple[re.Pattern[str], str]]:
    """The catalog's patterns for ``lang``, compiled once: (regex of the English, its translation)."""
    compiled = _PATTERN_CACHE.get(lang)
    if compiled is None:
        compiled = []
        for english, translated in PATTERNS.get(lang, {}).items():
            parts = re.split(r"\{(\w+)\}", english)
            regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts))
            compiled.append((re.compile(regex + r"\Z"), translated))
        _PATTERN_CACHE[lang] = compiled
    return compiled


def phrase(value: str) -> str:
    """Text a caller passed in (a title, an axis title, a question), in the current language if the
    catalog has it (an exact entry, or a pattern with ``{fields}``); else unchanged."""
    lang = _current[0]
    if lang == "en" or not isinstance(value, str):
        return value
    found = _CATALOGS[lang].get(value)
    if found is not None:
        return found
    for regex, translated in _patterns(lang):
        match = regex.match(value)
        if match:
            return translated.format(**match.groupdict())
    return value


def has_entry(message: str, lang: str = "zh") -> bool:
    """Whether ``message`` (or a caller's phrase) has an entry in ``lang``'s catalog."""
    check_str(message, "message", empty=True)
    check_str(lang, "lang")
    if lang not in LANGUAGES:
        raise ValueError(f"lang: one of {', '.join(LANGUAGES)}, got {lang!r}")
    if lang == "en":
        return True
    return message in _CATALOGS[lang] or any(r.match(message) for r, _ in _patterns(lang))


__all__ = [
    "LANGUAGES",
    "MissingTranslation",
    "has_entry",
    "language",
    "language_of",
    "phrase",
    "plural",
    "strict",
    "text",
    "use_language",
]
