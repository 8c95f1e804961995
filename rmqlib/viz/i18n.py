"""The language of figures and panels: English, or Chinese for the Chinese edition.

``use_language("zh")`` (the first line of every notebook in ``chapters/zh/``) switches every label
the figure builders and panels draw: titles, axis labels, legend names, hover text, slider and
button descriptions. Numbers, Java names, client ids and queue names stay as they are.
"""

from __future__ import annotations

from rmqlib.checks import check_str

LANGUAGES = ("en", "zh")
_current = ["en"]


def use_language(lang: str) -> None:
    """Draw every later figure and panel in ``lang`` (``"en"`` or ``"zh"``)."""
    check_str(lang, "lang")
    if lang not in LANGUAGES:
        raise ValueError(f"lang: one of {', '.join(LANGUAGES)}, got {lang!r}")
    _current[0] = lang


def language() -> str:
    """The language figures are drawn in now."""
    return _current[0]
