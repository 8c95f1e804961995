"""The book's one house style for every figure: a plotly template and the finishing touches a reader needs.

* ``TEMPLATE`` (registered with plotly as ``"rmqlib"``): white background, one font, the consumer
  palette of :mod:`rmqlib.viz.colors` as the colour sequence. It is built and registered the first time
  a figure is styled or the template is asked for (:func:`house_template`, ``style.TEMPLATE``),
  not when ``rmqlib.viz`` is imported: importing changes no plotly setting.
* :func:`house_style` is the last call of every figure builder. It fits the title to the plot (a
  short headline; the detail goes in smaller lines under it) and lays the legend out in rows *under*
  the plot, in a strip of the figure kept for it, so that every entry shows (a legend on the side
  scrolls and hides entries once it is taller than the plot).

Widths are estimates for a plot about :data:`PLOT_WIDTH_PX` wide, the width of a JupyterLab notebook
output; the browser tests measure the real ones.
"""

from __future__ import annotations

import contextlib
import contextvars
import html
import re
from collections.abc import Iterator

import plotly.graph_objects as go
import plotly.io as pio

from rmqlib.checks import ArgumentTypeError, check_each, check_instance, check_int, check_str
from rmqlib.viz.colors import PALETTE

TEMPLATE_NAME = "rmqlib"
PLOT_WIDTH_PX = 700
# between a y axis's labels and the plot, where markers can sit on the plot's left edge (a timeline's events at
# 0 s, the first dot of a window): they stay off the labels
ROW_LABEL_STANDOFF_PX = 8
# Latin text in Helvetica/Arial (what CHAR_PX was measured with); Chinese text (the zh edition) in the first of these
# CJK fonts the reader's system has (macOS, Windows, Linux), before the browser's own fallback
FONT = (
    'Helvetica, Arial, "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", '
    '"Source Han Sans SC", "WenQuanYi Micro Hei", sans-serif'
)
TITLE_SIZE, DETAIL_SIZE, FONT_SIZE = 15, 12, 12
CHAR_PX = {TITLE_SIZE: 8.4, DETAIL_SIZE: 6.6, FONT_SIZE: 6.9}  # average glyph width, measured in Chromium
LEGEND_ROW_PX, LEGEND_ENTRY_PX = 21, 46  # one legend row; an entry's symbol and padding
DETAIL_NAME, DETAIL_LINE_PX = "title detail", 15  # the annotation under the headline; its line height

_TEMPLATE: list[go.layout.Template] = []  # the house template, once built (and registered)


def house_template() -> go.layout.Template:
    """The house template, registered with plotly as :data:`TEMPLATE_NAME`.

    Built and registered the first time it is needed (the first figure styled, or the first time it
    is asked for), never when the package is imported; the same object every time after that.
    """
    if not _TEMPLATE:
        # plotly_white's layout for the kinds of plot the book draws (cartesian and polar axes, colour
        # scales): its per-trace defaults and its 3D, map and ternary parts made every figure (and every
        # slider move) pay for copying them (about 19 ms a figure, against 3 ms for this part)
        white = pio.templates["plotly_white"].layout.to_plotly_json()
        template = go.layout.Template(
            layout={key: value for key, value in white.items() if key not in ("geo", "scene", "ternary", "mapbox")}
        )
        template.layout.update(
            font=dict(family=FONT, size=FONT_SIZE, color="#222"),
            colorway=list(PALETTE),
            # a one-line headline at the top edge, aligned with the plot area; the detail goes in an
            # annotation under it (a title of several lines runs off the top edge, and plotly's own
            # subtitle lands on the title in a FigureWidget)
            title=dict(
                font=dict(size=TITLE_SIZE),
                xref="paper",
                x=0,
                xanchor="left",
                y=1,
                yref="container",
                yanchor="top",
                pad=dict(t=10),
            ),
            hoverlabel=dict(font_family=FONT),
        )
        pio.templates[TEMPLATE_NAME] = template
        _TEMPLATE.append(template)
    return _TEMPLATE[0]


def __getattr__(name: str) -> object:
    """``style.TEMPLATE``: the house template (:func:`house_template`), built when first asked for."""
    if name == "TEMPLATE":
        return house_template()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _width(width_px) -> int:
    return check_int(width_px, "width_px", 200, 10_000)


_WIDE_RANGES = "\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
_WIDE = re.compile(f"[{_WIDE_RANGES}]")
_CLOSING = "，。、；：！？）》」』】"  # Chinese punctuation that may not begin a line: it stays with what it follows
# a wide character or a word (each with the closing punctuation after it), or a space
_TOKEN = re.compile(f"[{_WIDE_RANGES}][{_CLOSING}]*|[^ {_WIDE_RANGES}]+[{_CLOSING}]*| ")
_SOFT_BREAK = "\u200b<br>"  # a line break inside Chinese text, where the one-line title had no space


def _cols(text: str) -> int:
    """Width of ``text`` in average Latin glyphs: a Chinese character (or full-width sign) counts two."""
    return len(text) + len(_WIDE.findall(text))


def _wrap(text: str, limit: int) -> list[str]:
    """Lines of at most ``limit`` columns, broken between words (a longer word gets a line of its own),
    or between two Chinese characters (such a line ends with a zero-width space: see :func:`plain_title`)."""
    lines: list[str] = []
    if not _WIDE.search(text):
        for word in text.split(" "):
            if lines and len(lines[-1]) + 1 + len(word) <= limit:
                lines[-1] += " " + word
            else:
                lines.append(word)
        return lines
    used = 0
    for token in _TOKEN.findall(text):
        width = _cols(token)
        if lines and used + width <= limit:
            lines[-1] += token
            used += width
            continue
        if lines and lines[-1].endswith(" "):
            lines[-1] = lines[-1][:-1]  # the break takes the place of this space
        elif lines and lines[-1] and token != " ":
            lines[-1] += "\u200b"  # no space here: plain_title joins the lines again without one
        if token == " ":
            lines.append("")
            used = 0
        elif lines and not lines[-1]:
            lines[-1], used = token, width
        else:
            lines.append(token)
            used = width
    return lines


def _json(layout) -> dict:
    """``layout`` as plotly JSON (a ``go.Layout`` is converted; a dict is taken as it is)."""
    return layout if isinstance(layout, dict) else layout.to_plotly_json()


def _text(title) -> str:
    """The text of a layout's ``title`` as plotly JSON (a string or a dict with ``text``)."""
    return (title.get("text") if isinstance(title, dict) else title) or ""


def _detail(layout: dict):
    """The annotation (plotly JSON) that holds the title's detail, or None
    (its name ends with the joiner it replaced)."""
    return next((a for a in layout.get("annotations", ()) if (a.get("name") or "").startswith(DETAIL_NAME)), None)


def plain_title(layout: go.Layout | dict | str | None) -> str:
    """The one-line title that :func:`house_style` split into a headline and a detail."""
    if not isinstance(layout, (go.Layout, dict, str, type(None))):
        raise ArgumentTypeError(f"layout must be a plotly Layout, a dict, a str or None, got {type(layout).__name__}")
    if layout is None or isinstance(layout, str):
        return _unbroken(layout or "")
    layout = _json(layout)
    text = _unbroken(_text(layout.get("title")))
    detail = _detail(layout)
    if detail is None:
        return text
    return text + detail["name"][len(DETAIL_NAME) :] + _unbroken(detail.get("text") or "")


def _unbroken(text: str) -> str:
    """``text`` with its line breaks undone (a break inside Chinese text had no space)."""
    return text.replace(_SOFT_BREAK, "").replace("<br>", " ")


def retitle(fig: go.Figure, text: str) -> go.Figure:
    """Give ``fig`` the one-line title ``text`` (dropping the detail :func:`house_style` split off before)."""
    check_instance(fig, "fig", go.Figure)
    check_str(text, "text", empty=True)
    fig.layout.annotations = [a for a in fig.layout.annotations if not (a.name or "").startswith(DETAIL_NAME)]
    fig.update_layout(title_text=text)
    return fig


def fit_title(text: str, width_px: int = PLOT_WIDTH_PX) -> tuple[str, str, str, int]:
    """``(headline, joiner, detail, lines)``: ``text`` as one headline that fits ``width_px`` and the rest
    as smaller text broken into ``lines`` lines (``<br>``); ``headline + joiner + detail`` (without the
    breaks) is ``text``. A title that fits stays whole, with no detail.

    Where the headline ends, in order of preference (each leaving it 12 characters or more, and
    within the width): at the last ``": "``, unless a ``"; "`` comes before it (then at that ``"; "``:
    a ``"; name: value"`` clause stays whole); else before the last ``" ("``; else at a word break. A detail
    shorter than 12 columns takes words from the end of the headline until it has 12.
    """
    check_str(text, "text", empty=True)
    width_px = _width(width_px)
    head_limit = int(width_px / CHAR_PX[TITLE_SIZE])
    if _cols(text) <= head_limit:
        return text, "", "", 0

    def cuts(pattern: str, before: int = head_limit) -> list[re.Match]:
        return [m for m in re.finditer(pattern, text) if 12 <= _cols(text[: m.start()]) <= before]

    colons = cuts(": |\uff1a")  # a Chinese title uses the full-width colon and semicolon
    if colons:
        clauses = cuts("; |\uff1b", _cols(text[: colons[-1].start()]))
        cut, joiner = (
            (clauses[-1].start(), clauses[-1].group()) if clauses else (colons[-1].start(), colons[-1].group())
        )
    elif cuts(r" \(|\uff08"):
        match = cuts(r" \(|\uff08")[-1]
        cut, joiner = match.start(), (" " if match.group() == " (" else "")
    else:
        cut = len(_wrap(text, head_limit)[0].rstrip("\u200b"))
        joiner = " " if text[cut : cut + 1] == " " or not _WIDE.search(text) else ""
    if not _WIDE.search(text):
        # a word or two under the headline read as a stray: words of the headline go down until the detail has
        # 12 columns, as the headline keeps at least 12
        while _cols(text[cut + len(joiner) :]) < 12:
            earlier = text.rfind(" ", 0, cut)
            if earlier == -1 or _cols(text[:earlier]) < 12:
                break
            cut, joiner = earlier, " "
    lines = _wrap(text[cut + len(joiner) :], int(width_px / CHAR_PX[DETAIL_SIZE]))
    return text[:cut], joiner, "<br>".join(lines), len(lines)


def _legend_entries(data: list[dict]) -> list[str]:
    """The names the legend will show for traces ``data`` (plotly JSON), with each legend group's title once."""
    names: list[str] = []
    seen_groups: set[str] = set()
    for trace in data:
        if trace.get("showlegend") is False or trace.get("visible") is False or not trace.get("name"):
            continue
        group_title = _text(trace.get("legendgrouptitle"))
        if group_title and trace.get("legendgroup") not in seen_groups:
            seen_groups.add(trace.get("legendgroup"))
            names.append(group_title)
        names.append(html.unescape(re.sub("<[^>]+>", "", trace["name"])))
    return names


def legend_rows(names: list[str], title: str = "", width_px: int = PLOT_WIDTH_PX) -> int:
    """How many rows a horizontal legend of ``names`` takes in ``width_px`` (greedy, like plotly's)."""
    names = check_each(names, "names", lambda v, label: check_str(v, label, empty=True))
    check_str(title, "title", empty=True)
    width_px = _width(width_px)
    rows, used = 1, _cols(title) * CHAR_PX[FONT_SIZE] + 10 if title else 0.0
    for name in names:
        entry = LEGEND_ENTRY_PX + _cols(name) * CHAR_PX[FONT_SIZE]
        if used and used + entry > width_px:
            rows, used = rows + 1, 0.0
        used += entry
    return rows


def _style_update(layout: dict, data: list[dict], width_px: int) -> dict:
    """The layout changes (plotly JSON, to merge) that give a figure of ``layout`` and ``data`` the house style."""
    meta = dict(layout["meta"]) if isinstance(layout.get("meta"), dict) else {}
    margin = layout.get("margin") or {}
    base = meta.get("style")
    update: dict = {}
    house_template()  # registered before any figure names it
    if base is None:  # the first time: set the template (setting it copies it, so only once)
        base = {"height": layout.get("height") or 450, "t": margin.get("t"), "b": margin.get("b")}
        update.update(template=TEMPLATE_NAME, meta={**meta, "style": base})
    head, joiner, detail, detail_lines = fit_title(plain_title(layout), width_px)
    kept = [a for a in layout.get("annotations", ()) if not (a.get("name") or "").startswith(DETAIL_NAME)]
    if detail:
        kept.append(
            dict(
                name=DETAIL_NAME + joiner,
                text=detail,
                xref="paper",
                x=0,
                xanchor="left",
                yref="paper",
                y=1,
                yanchor="bottom",
                yshift=6,
                showarrow=False,
                align="left",
                font=dict(size=DETAIL_SIZE, color="#555"),
            )
        )
    if len(kept) != len(layout.get("annotations", ())) or detail:
        update["annotations"] = kept
    top = base["t"] or 0
    if head:
        top = max(top, 40 + (8 + DETAIL_LINE_PX * detail_lines if detail_lines else 0))
    height, bottom = base["height"], base["b"] if base["b"] is not None else 50
    names = _legend_entries(data)
    if len(names) > 1 and layout.get("showlegend") is not False:
        legend_title = _text((layout.get("legend") or {}).get("title"))
        strip = 10 + LEGEND_ROW_PX * legend_rows(names, legend_title, width_px)
        xaxis = layout.get("xaxis") or {}
        axis_px = (58 if _text(xaxis.get("title")) else 38) if xaxis.get("visible") is not False else 8
        bottom = max(bottom, axis_px + strip)
        height += strip
        update["legend"] = dict(
            orientation="h",
            yref="container",
            y=0,
            yanchor="bottom",
            xanchor="left",
            x=0,
            title=dict(side="top left" if legend_title else None),
        )
    update.update(title=dict(text=head), height=height, margin=dict(t=top, b=bottom))
    return update


def _merged(base: dict, update: dict) -> dict:
    """``base`` with ``update`` merged in, dict into dict (what ``update_layout`` does), lists replaced."""
    out = dict(base)
    for key, value in update.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def house_style(fig: go.Figure, width_px: int = PLOT_WIDTH_PX) -> go.Figure:
    """Apply the house style to ``fig`` in place and return it (see the module docstring).

    Applying it again (a builder that restyles another builder's figure) starts from the size the
    figure had before the first time, kept in ``layout.meta["style"]``. Everything is set in one
    ``update_layout`` (each call validates again: a slider move pays for every one).
    """
    check_instance(fig, "fig", go.Figure)
    width_px = _width(width_px)
    fig.update_layout(_style_update(fig.layout.to_plotly_json(), [t.to_plotly_json() for t in fig.data], width_px))
    return fig


_VALIDATE = contextvars.ContextVar("rmqlib_viz_validate", default=True)


@contextlib.contextmanager
def without_validation() -> Iterator[None]:
    """Within this block, :func:`styled_figure` skips plotly's property checks.

    For a panel's redraws only: its first figure is built (and checked) the usual way, and every later
    one comes from the same builder with other numbers, so checking each again costs a slider move
    most of its Python time (about 14 of 16 ms for chapter 03's ring) and finds nothing new.
    """
    token = _VALIDATE.set(False)
    try:
        yield
    finally:
        _VALIDATE.reset(token)


def styled_figure(data: list[dict], layout: dict, width_px: int = PLOT_WIDTH_PX) -> go.Figure:
    """``go.Figure(data, layout)`` in the house style, built in one validation pass.

    The same figure as ``house_style(go.Figure(data, layout))``, for builders a slider calls on every
    move: the style is worked out on the plain JSON, so plotly checks the figure once, not three times
    (and not at all inside :func:`without_validation`, where the template is left as its name).
    """
    data = check_each(data, "data", lambda trace, label: check_instance(trace, label, dict))
    check_instance(layout, "layout", dict)
    width_px = _width(width_px)
    layout = _merged(layout, _style_update(layout, data, width_px))
    # unchecked, the template stays a name (checking is what replaces a name by the template itself):
    # update_in_place sends the template, resolved, only if the name changes
    return go.Figure(data=data, layout=layout, _validate=_VALIDATE.get())


_RESOLVED: dict[str, tuple[object, dict]] = {}


def resolved_template(name: str) -> dict:
    """The registered template ``name`` as plotly JSON, worked out once per registered template."""
    check_str(name, "name")
    if name == TEMPLATE_NAME:
        house_template()  # registered the first time it is asked for
    template = pio.templates[name]
    cached = _RESOLVED.get(name)
    if cached is None or cached[0] is not template:
        cached = _RESOLVED[name] = (template, template.to_plotly_json())
    return cached[1]
