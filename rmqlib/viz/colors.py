"""One fixed palette, so consumer ``i`` has the same colour in every figure.

"Consumer ``i``" is the ``i``-th client id in the list a caller passes (the
order the consumers were started in, e.g. ``make_cids(n)``), not its place in
Java sort order: adding ``10.0.0.10`` must not repaint ``10.0.0.2``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rmqlib.checks import check_each, check_int, check_str

# 24 well-separated colours (plotly's Dark24), written out so a plotly upgrade cannot repaint the book.
PALETTE: tuple[str, ...] = (
    "#2E91E5",
    "#E15F99",
    "#1CA71C",
    "#FB0D0D",
    "#DA16FF",
    "#222A2A",
    "#B68100",
    "#750D86",
    "#EB663B",
    "#511CFB",
    "#00A08B",
    "#FB00D1",
    "#FC0080",
    "#B2828D",
    "#6C7C32",
    "#778AAE",
    "#862A16",
    "#A777F1",
    "#620042",
    "#1616A7",
    "#DA60CA",
    "#6C4516",
    "#0D2A63",
    "#AF0038",
)

UNASSIGNED_COLOR = "#BBBBBB"
"""Queues nobody holds."""


def color_of(index: int) -> str:
    """The colour of consumer number ``index`` (0-based, creation order); wraps after 24."""
    index = check_int(index, "index", 0)
    return PALETTE[index % len(PALETTE)]


def consumer_colors(cids: Sequence[str]) -> dict[str, str]:
    """cid -> colour, by first position in ``cids`` (creation order)."""
    cids = check_each(cids, "cids", lambda cid, label: check_str(cid, label, empty=True))
    colors: dict[str, str] = {}
    for cid in cids:
        if cid not in colors:
            colors[cid] = color_of(len(colors))
    return colors
