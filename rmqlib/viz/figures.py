"""Pure figure builders: rmqlib results in, ``plotly.graph_objects.Figure`` out.

Nothing here calls ``show()`` or keeps state. Every figure carries what it
plots in ``layout.meta`` (plain JSON), so a test, or a browser test reading
the rendered plot's ``layout.meta``, can check the picture against rmqlib
without decoding marker positions.

Consumer colours come from :mod:`rmqlib.viz.colors`: pass ``cids`` in creation
order (``make_cids(n)``) and consumer ``i`` keeps its colour across figures.

Limits: the ``*_view`` functions, the sweeps and the panels built on them refuse sizes past the
``MAX_VIEW_*`` constants below with a ValueError naming the argument and the limit. Each limit is
about the largest figure that builds in well under a second here and that headless Chromium draws
(``Plotly.newPlot``) in under a second, both measured on the development machine; the figure
builders that take ready-made results (``allocation_figure``, ...) draw what they are given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import plotly.graph_objects as go

from rmqlib.allocation import (
    allocate_group,
    allocate_topics,
    imbalance_spread,
    make_cids,
    make_queues,
    moved_on_scale_out,
    multi_topic_totals,
    overlapping_queues,
    owners,
    queues_per_consumer,
    random_assignment_imbalance,
    random_cids,
    spread_queues,
    unassigned_queues,
)
from rmqlib.checks import ArgumentTypeError, check_each, check_instance, check_int, check_items, check_str
from rmqlib.hashring import HashRing, md5_hash
from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs
from rmqlib.strategies import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueConsistentHash,
    AllocateMessageQueueStrategy,
    MappingMachineRoomResolver,
    strategy_from_name,
)
from rmqlib.viz.colors import UNASSIGNED_COLOR, consumer_colors
from rmqlib.viz.i18n import phrase, plural, text
from rmqlib.viz.style import house_style, plain_title, retitle, styled_figure

RING_SIZE = 2**32  # MD5 ring positions are the first 4 digest bytes, unsigned

# Largest views (see the module docstring). Build time in Python / first draw in headless Chromium at
# these sizes (best of three; the machine was shared, single runs took up to twice as long), measured here:
# allocation_view(64 queues, 64 consumers) 0.03 s / 0.36 s (128 queues drew in 0.84 to 1.6 s, 256 in 3 to
# 4.5 s: a tick label a queue); ring_view at 5,000 ring points 0.1 s / 0.57 s (100,000 took 12.7 s to build);
# moved_queues_figure(64 queues, 128 consumers, 10 vnodes) 0.3 s / 0.06 s; machine_room_view at 6 rooms x
# 8 brokers x 16 queues and 16 consumers a room 0.2 s / 0.3 s.
MAX_VIEW_QUEUES = 64
"""Most queues an allocation, ring or moved-queues view draws."""
MAX_VIEW_CONSUMERS = 64
"""Most consumers an allocation or ring view draws (one row or colour each)."""
MAX_VIEW_VIRTUAL_NODES = 1_000
"""Most virtual nodes per consumer in a view."""
MAX_VIEW_RING_POINTS = 5_000
"""Most points a ring drawing shows: consumers x virtual nodes (each point is a marker and an arc)."""
MAX_VIEW_SCALE_OUT = 128
"""Largest ``max_consumers`` of :func:`moved_queues_figure`."""
MAX_VIEW_SCALE_OUT_POINTS = 200_000
"""Ring points :func:`moved_queues_figure` may build in all (about ``max_consumers`` squared x virtual nodes)."""
MAX_VIEW_ROOMS = 6
"""Most machine rooms a machine-room view draws."""
MAX_VIEW_ROOM_BROKERS = 8
"""Most brokers in one room of a machine-room view."""
MAX_VIEW_ROOM_CONSUMERS = 16
"""Most consumers in one room of a machine-room view."""
MAX_VIEW_QUEUES_PER_BROKER = 16
"""Most queues per broker in a machine-room view."""
MAX_VIEW_NAME = 255
"""Longest strategy, topic or room name a view takes."""
MAX_FIGURE_CONSUMERS = 1_000
"""Most consumers a figure builder draws from a ready-made result (a trace or a bar each; 1,000 take
about 0.5 s to build here, and are far past what a reader can tell apart)."""
MAX_FIGURE_QUEUES = 10_000
"""Most queues a figure builder draws from a ready-made result."""
MAX_FIGURE_ROOMS = 24
"""Most machine rooms :func:`machine_room_figure` draws side by side (a box each)."""
MAX_FIGURE_TOPICS = 100
"""Most topics :func:`multi_topic_figure` stacks (a trace each)."""


def _figure_size(
    consumers: int, queues: int, who: str = "allocation and cids", what: str = "allocation and mq_all"
) -> None:
    """Refuse a ready-made result too large to draw (the arguments that brought the consumers / queues)."""
    if consumers > MAX_FIGURE_CONSUMERS:
        raise ValueError(f"{who}: a figure draws at most {MAX_FIGURE_CONSUMERS} consumers, got {consumers}")
    if queues > MAX_FIGURE_QUEUES:
        raise ValueError(f"{what}: a figure draws at most {MAX_FIGURE_QUEUES} queues, got {queues}")


# --------------------------------------------------------------------------- argument checks


def _title_arg(title, name: str = "title"):
    """``None`` or a string (in the current language, if the catalog has it: see :func:`~rmqlib.viz.i18n.phrase`)."""
    return None if title is None else phrase(check_str(title, name, empty=True))


def _str_list(values, name: str, max_len: int | None = None, distinct: bool = False) -> list[str]:
    """A list of strings from any iterable but a string (optionally at most ``max_len``, all different)."""
    items = check_each(values, name, lambda v, label: check_str(v, label, empty=True), max_len=max_len)
    if distinct and len(set(items)) != len(items):
        raise ValueError(f"{name} must not repeat a name, got {items!r}"[:200])
    return items


def _queue_list(values, name: str) -> list[MessageQueue]:
    """A list of MessageQueue from any iterable but a string."""
    return check_each(values, name, lambda v, label: check_instance(v, label, MessageQueue))


def _checked_allocation(allocation, name: str = "allocation"):
    """``allocation`` as allocate_group returns it: client id (str) -> MessageQueue list (else a named error)."""
    try:
        queues_per_consumer(allocation)
    except (TypeError, ValueError) as error:
        text = str(error)
        raise type(error)(text if text.startswith(name) else f"{name}: {text}") from None
    return allocation


def _strategy_name(value, name: str = "strategy") -> str:
    return check_str(value, name, max_len=MAX_VIEW_NAME)


def _strategy(value, name: str = "strategy", **options) -> AllocateMessageQueueStrategy:
    """``strategy_from_name(value, **options)``, its errors naming the argument ``name``."""
    try:
        return strategy_from_name(_strategy_name(value, name), **options)
    except (TypeError, ValueError) as error:
        text = str(error)
        raise type(error)(text if text.startswith(name) else f"{name}: {text}") from None


# --------------------------------------------------------------------------- helpers


def queue_label(mq: MessageQueue, mq_all: Sequence[MessageQueue] = ()) -> str:
    """Short axis label: ``broker-a:3``, with the topic in front when several topics are shown."""
    check_instance(mq, "mq", MessageQueue)
    topics = {q.topic for q in check_items(mq_all, "mq_all", MessageQueue)} or {mq.topic}
    base = f"{mq.broker_name}:{mq.queue_id}"
    return base if len(topics) <= 1 else f"{mq.topic}/{base}"


def _labels(queues: Sequence[MessageQueue]) -> list[str]:
    """``[queue_label(mq, queues) for mq in queues]`` in linear time (the topics are looked at once)."""
    several = len({mq.topic for mq in queues}) > 1
    return [
        f"{mq.topic}/{mq.broker_name}:{mq.queue_id}" if several else f"{mq.broker_name}:{mq.queue_id}" for mq in queues
    ]


def _message_figure(title: str, message: str, meta: dict | None = None) -> go.Figure:
    """A figure with no data and one line of text: for inputs with nothing to draw."""
    fig = go.Figure()
    fig.update_layout(
        title=title,
        xaxis_visible=False,
        yaxis_visible=False,
        height=300,
        meta=meta or {},
        annotations=[dict(text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, font=dict(size=16))],
    )
    return house_style(fig)


def _names(cids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(cids))


def _describe_counts(counts: Mapping[str, int]) -> str:
    """'3 consumers hold 3 queues, 2 hold 2, 1 is idle' style summary."""
    by_size: dict[int, int] = {}
    for n in counts.values():
        by_size[n] = by_size.get(n, 0) + 1
    parts = []
    for size in sorted(by_size, reverse=True):
        k = by_size[size]
        if size == 0:
            parts.append(text("{k} idle", k=k))
        else:
            parts.append(text("{k} holds {size}" if k == 1 else "{k} hold {size}", k=k, size=size))
    return text(", ").join(parts)


# --------------------------------------------------------------------------- allocation


def allocation_figure(
    allocation: Mapping[str, Sequence[MessageQueue]],
    cids: Sequence[str] | None = None,
    mq_all: Iterable[MessageQueue] | None = None,
    title: str | None = None,
    label: str = "",
    meta: Mapping | None = None,
) -> go.Figure:
    """Who owns which queue: queues along x (Java order), one row per consumer (Java order).

    Works for any strategy's ``allocate_group`` result. Idle consumers keep an
    empty row labelled "idle"; a queue owned more than once shows a marker per owner in
    its column; queues of ``mq_all`` that nobody holds sit on a grey "nobody" row.
    ``cids`` (creation order) fixes the colours; default: the allocation's keys. ``label`` (a strategy's
    name, say) goes before the title, as ``"label: title"``. ``meta`` adds keys to ``layout.meta``.
    """
    _checked_allocation(allocation)
    if cids is not None:
        cids = _str_list(cids, "cids")
    if mq_all is not None:
        mq_all = _queue_list(mq_all, "mq_all")
    title = _title_arg(title)
    check_str(label, "label", empty=True)
    if meta is not None and not isinstance(meta, Mapping):
        raise ArgumentTypeError(f"meta must be a dict or None, got {type(meta).__name__}")
    cids = _names(cids if cids is not None else list(allocation))
    colors = consumer_colors(cids + [c for c in allocation if c not in cids])
    rows = java_sorted_cids(list(dict.fromkeys(list(allocation) + cids)))
    held = [mq for mqs in allocation.values() for mq in mqs]
    queues = java_sorted_mqs(list(dict.fromkeys(list(mq_all or []) + held)))
    _figure_size(len(rows), len(queues))
    column = {mq: i for i, mq in enumerate(queues)}
    gaps = unassigned_queues(allocation, queues)
    overlaps = overlapping_queues(allocation)
    counts = {cid: len(allocation.get(cid, ())) for cid in rows}
    idle = [cid for cid in rows if counts[cid] == 0]

    if title is None:
        title = text(
            f"{{q}} queue{'s' if len(queues) != 1 else ''} over {{c}} consumer{'s' if len(rows) != 1 else ''}"
            ": {counts}",
            q=len(queues),
            c=len(rows),
            counts=_describe_counts(counts),
        )
        if gaps:
            title += plural("; {n} queue unowned", "; {n} queues unowned", len(gaps))
        if overlaps:
            held_by = owners(allocation)
            twice = all(len(held_by[mq]) == 2 for mq in overlaps)
            title += text("; {n} owned twice" if twice else "; {n} owned more than once", n=len(overlaps))
    if label:
        title = text("{label}: {title}", label=label, title=title)

    # plain plotly JSON, checked once by styled_figure: a slider move rebuilds this figure
    data = []
    for y, cid in enumerate(rows):
        mqs = list(allocation.get(cid, ()))
        data.append(
            dict(
                type="scatter",
                x=[column[mq] for mq in mqs],
                y=[y] * len(mqs),
                mode="markers",
                name=cid,
                marker=dict(symbol="square", size=14, color=colors[cid]),
                customdata=[str(mq) for mq in mqs],
                hovertemplate=f"{cid}<br>%{{customdata}}<extra></extra>",
            )
        )
    ticktext = [text("{cid} (idle)", cid=cid) if cid in idle else f"{cid} ({counts[cid]})" for cid in rows]
    tickvals = list(range(len(rows)))
    if gaps:
        data.append(
            dict(
                type="scatter",
                x=[column[mq] for mq in gaps],
                y=[len(rows)] * len(gaps),
                mode="markers",
                name=text("nobody"),
                marker=dict(symbol="x", size=12, color=UNASSIGNED_COLOR),
                customdata=[str(mq) for mq in gaps],
                hovertemplate=text("unowned<br>%{customdata}<extra></extra>"),
            )
        )
        tickvals.append(len(rows))
        ticktext.append(text("nobody"))
    layout = dict(
        # 28 px a consumer row, plus the title and the queue labels (turned on their side past 8 queues)
        title=dict(text=title),
        height=max(260, 60 + (110 if len(queues) > 8 else 70) + 28 * len(tickvals)),
        xaxis=dict(
            title=dict(text=text("queues (Java sort order)")),
            tickvals=list(range(len(queues))),
            ticktext=_labels(queues),
            range=[-0.7, max(len(queues), 1) - 0.3],
        ),
        # every row in range, the first on top: an idle consumer's row (no marker) is still drawn and labelled
        yaxis=dict(tickvals=tickvals, ticktext=ticktext, range=[max(len(tickvals), 1) - 0.5, -0.5], zeroline=False),
        # each row is labelled with its consumer and count, so a legend would only repeat the y axis
        # (and would be most of what a slider move makes the browser draw again)
        showlegend=False,
        meta={
            "view": "allocation",
            "allocation": {cid: [str(mq) for mq in allocation.get(cid, ())] for cid in rows},
            "queues": [str(mq) for mq in queues],
            "idle": idle,
            "unassigned": [str(mq) for mq in gaps],
            "overlapping": [str(mq) for mq in overlaps],
            **(meta or {}),
        },
    )
    return styled_figure(data, layout)


def queues_per_consumer_figure(
    allocation: Mapping[str, Sequence[MessageQueue]], cids: Sequence[str] | None = None, title: str | None = None
) -> go.Figure:
    """Bar per consumer (Java order): how many queues it holds; a dashed line at the fair share."""
    _checked_allocation(allocation)
    if cids is not None:
        cids = _str_list(cids, "cids")
    title = _title_arg(title)
    cids = _names(cids if cids is not None else list(allocation))
    colors = consumer_colors(cids + [c for c in allocation if c not in cids])
    rows = java_sorted_cids(list(dict.fromkeys(list(allocation) + cids)))
    _figure_size(len(rows), 0)
    counts = {cid: len(allocation.get(cid, ())) for cid in rows}
    total = len({mq for mqs in allocation.values() for mq in mqs})
    fair = total / len(rows) if rows else 0
    if title is None:
        title = text(
            "Queues per consumer: {counts} (max - min = {spread})",
            counts=_describe_counts(counts),
            spread=max(counts.values(), default=0) - min(counts.values(), default=0),
        )
    fig = go.Figure(
        go.Bar(
            x=rows,
            y=[counts[c] for c in rows],
            marker_color=[colors[c] for c in rows],
            name=text("queues"),
            hovertemplate=text("%{x}: %{y} queues<extra></extra>"),
        )
    )
    fig.add_hline(y=fair, line_dash="dash", line_color="#555", annotation_text=text("fair share {fair:.2f}", fair=fair))
    fig.update_layout(
        title=title,
        height=360,
        yaxis_title=text("queues held"),
        xaxis=dict(title=text("consumers (Java sort order)"), type="category"),
        meta={"view": "queues_per_consumer", "counts": counts, "fair_share": fair},
    )
    return house_style(fig)


def _view_inputs(
    strategy: str, queues: int, consumers: int, virtual_nodes: int, brokers: Sequence[str], topic: str
) -> tuple[list[MessageQueue], list[str], AllocateMessageQueueStrategy, str]:
    """A view's queues (spread over ``brokers``), client ids (``make_cids``), strategy and the strategy's label for
    the title, its arguments checked."""
    _strategy_name(strategy)
    queues = check_int(queues, "queues", 1, MAX_VIEW_QUEUES)
    consumers = check_int(consumers, "consumers", 1, MAX_VIEW_CONSUMERS)
    virtual_nodes = check_int(virtual_nodes, "virtual_nodes", 0, MAX_VIEW_VIRTUAL_NODES)
    brokers = _str_list(brokers, "brokers", max_len=MAX_VIEW_QUEUES)
    check_str(topic, "topic", max_len=MAX_VIEW_NAME)
    strat = _strategy(strategy, virtual_node_cnt=virtual_nodes)
    label = f"{strategy} (vnodes={virtual_nodes})" if strategy == "CONSISTENT_HASH" else strategy
    return spread_queues(queues, brokers, topic), make_cids(consumers), strat, label


def allocation_view(
    strategy: str = "AVG",
    queues: int = 8,
    consumers: int = 3,
    virtual_nodes: int = 10,
    brokers: Sequence[str] = ("broker-a",),
    topic: str = "TopicTest",
) -> go.Figure:
    """The allocation panel's pure function: ``queues`` queues (spread over ``brokers``), ``consumers`` consumers.

    ``strategy`` is a Java strategy name (AVG, AVG_BY_CIRCLE, CONSISTENT_HASH).
    Queue ``k`` lives on broker ``k % len(brokers)``; consumers are ``make_cids(consumers)``.

    Limits: ``queues`` 1..:data:`MAX_VIEW_QUEUES` (64), ``consumers`` 1..:data:`MAX_VIEW_CONSUMERS` (64),
    ``virtual_nodes`` 0..:data:`MAX_VIEW_VIRTUAL_NODES` (1,000); larger raise ValueError.
    """
    mq_all, cids, strat, label = _view_inputs(strategy, queues, consumers, virtual_nodes, brokers, topic)
    allocation = allocate_group(strat, mq_all, cids)
    return allocation_figure(
        allocation,
        cids,
        mq_all,
        label=label,
        meta={"strategy": strategy, "queue_count": queues, "consumer_count": consumers, "virtual_nodes": virtual_nodes},
    )


def shared_id_view(
    strategy: str = "AVG",
    queues: int = 8,
    consumers: int = 4,
    same_id: int = 2,
    virtual_nodes: int = 10,
    brokers: Sequence[str] = ("broker-a",),
    topic: str = "TopicTest",
) -> go.Figure:
    """Who owns which queue when ``same_id`` of ``consumers`` processes send one client id (chapter 10).

    The brokers list a client id once per connection, so every process runs ``strategy`` on a list that holds the
    shared id ``same_id`` times, and each copy is answered as Java's ``cidAll.indexOf`` answers it: as the first.
    The sharing processes are ``make_cids(consumers)[0]`` and copies of it named ``#2``, ``#3``...; ``same_id`` 1
    is a healthy group. Limits as :func:`allocation_view`, and ``same_id`` 1..``consumers``.
    """
    mq_all, cids, strat, label = _view_inputs(strategy, queues, consumers, virtual_nodes, brokers, topic)
    same_id = check_int(same_id, "same_id", 1, len(cids))
    shared, others = cids[0], cids[same_id:]
    answer = allocate_group(strat, mq_all, [shared] * same_id + others)
    processes = [shared] + [f"{shared} #{k}" for k in range(2, same_id + 1)] + others
    allocation = {process: answer[process.split(" #")[0]] for process in processes}
    return allocation_figure(
        allocation,
        processes,
        mq_all,
        label=label,
        meta={"strategy": strategy, "queue_count": queues, "consumer_count": consumers, "same_id": same_id},
    )


# --------------------------------------------------------------------------- consistent hash


def _deg(position: int) -> float:
    return position / RING_SIZE * 360.0


def ring_figure(
    cids: Sequence[str], virtual_nodes: int, mq_all: Sequence[MessageQueue], title: str | None = None
) -> go.Figure:
    """The CONSISTENT_HASH ring as a circle, 12 o'clock = position 0, clockwise.

    Outer circle: each virtual node is a dot in its consumer's colour, and the
    arc ending at it (the hashes it catches) is drawn in the same colour. Inner
    diamonds: the queues at the angle of ``md5(str(mq))``, coloured by owner.
    The ring is built exactly as ``AllocateMessageQueueConsistentHash`` builds it
    (client ids in Java order, ``cid-k`` keys), so owners match rmqlib.

    At most :data:`MAX_VIEW_RING_POINTS` (5,000) ring points: ``len(cids)`` x ``virtual_nodes``.
    """
    cids = _str_list(cids, "cids")
    virtual_nodes = check_int(virtual_nodes, "virtual_nodes", 0, MAX_VIEW_VIRTUAL_NODES)
    if len(cids) * virtual_nodes > MAX_VIEW_RING_POINTS:
        raise ValueError(
            f"virtual_nodes: {len(cids)} consumers x {virtual_nodes} virtual nodes is more than "
            f"{MAX_VIEW_RING_POINTS} ring points, the most a ring drawing shows"
        )
    mq_all = _queue_list(mq_all, "mq_all")
    title = _title_arg(title)
    cids = _names(cids)
    _figure_size(len(cids), len(mq_all), "cids", "mq_all")
    colors = consumer_colors(cids)
    sorted_cids = java_sorted_cids(cids)
    queues = java_sorted_mqs(list(dict.fromkeys(mq_all)))
    ring = HashRing.build(sorted_cids, virtual_nodes)
    owners_of = ring.route_many([str(mq) for mq in queues])
    counts = {cid: 0 for cid in sorted_cids}
    for owner in owners_of:
        if owner is not None:
            counts[owner] += 1
    meta = {
        "view": "ring",
        "virtual_nodes": virtual_nodes,
        "allocation": {cid: [str(mq) for mq, o in zip(queues, owners_of) if o == cid] for cid in sorted_cids},
        "vnodes": ring.vnode_count(),
        "collisions": len(ring.collisions),
    }
    if title is None:
        if not ring.owners:
            title = text("{v} virtual nodes: the ring is empty, so no consumer gets a queue", v=virtual_nodes)
        else:
            title = text(
                "{c} consumers x {v} virtual nodes, {q} queues: {counts} (max - min = {spread})",
                c=len(sorted_cids),
                v=virtual_nodes,
                q=len(queues),
                counts=_describe_counts(counts),
                spread=max(counts.values()) - min(counts.values()),
            )
    # plain plotly JSON, checked once by styled_figure: a slider move rebuilds this figure
    data = [
        dict(
            type="scatterpolar",
            r=[1] * 361,
            theta=list(range(361)),
            mode="lines",
            name=text("ring"),
            line=dict(color="#DDDDDD", width=2),
            hoverinfo="skip",
            showlegend=False,
        )
    ]  # the bare circle
    arcs = ring.arcs()
    positions = [int(p) for p in ring.positions]
    for cid in sorted_cids:
        theta: list = []
        r: list = []
        for start, end, owner in arcs:
            if owner != cid:
                continue
            a, b = _deg(start), _deg(end)
            if b <= a:  # the arc that wraps past position 0 (or a single-vnode ring)
                b += 360.0
            steps = max(2, int((b - a) / 2) + 2)
            theta += [a + (b - a) * i / (steps - 1) for i in range(steps)] + [None]
            r += [1.0] * steps + [None]
        data.append(
            dict(
                type="scatterpolar",
                r=r,
                theta=theta,
                mode="lines",
                name=cid,
                legendgroup=cid,
                line=dict(color=colors[cid], width=7),
                hoverinfo="skip",
            )
        )
        vn = [_deg(p) for p, o in zip(positions, ring.owners) if o == cid]
        data.append(
            dict(
                type="scatterpolar",
                r=[1.0] * len(vn),
                theta=vn,
                mode="markers",
                name=text("{cid} vnodes", cid=cid),
                legendgroup=cid,
                showlegend=False,
                marker=dict(size=9, color=colors[cid], line=dict(color="white", width=1)),
                hovertemplate=text("virtual node of {cid}<extra></extra>", cid=cid),
            )
        )
    data.append(
        dict(
            type="scatterpolar",
            r=[0.72] * len(queues),
            theta=[_deg(md5_hash(str(mq))) for mq in queues],
            mode="markers",
            name=text("queues"),
            marker=dict(
                symbol="diamond",
                size=11,
                color=[colors[o] if o is not None else UNASSIGNED_COLOR for o in owners_of],
                line=dict(color="black", width=1),
            ),
            customdata=[[str(mq), o or text("nobody")] for mq, o in zip(queues, owners_of)],
            hovertemplate=text("%{customdata[0]}<br>owner: %{customdata[1]}<extra></extra>"),
        )
    )
    layout = dict(
        title=dict(text=title),
        height=560,
        polar=dict(
            radialaxis=dict(visible=False, range=[0, 1.12]),
            angularaxis=dict(rotation=90, direction="clockwise", showticklabels=False),
        ),
        legend=dict(title=dict(text=text("consumer"))),
        meta=meta,
    )
    return styled_figure(data, layout)


def check_ring_points(consumers: int, virtual_nodes: int, name: str) -> None:
    """Refuse a ring drawing of more than :data:`MAX_VIEW_RING_POINTS` points, blaming ``name``."""
    if consumers * virtual_nodes > MAX_VIEW_RING_POINTS:
        raise ValueError(
            f"{name}: {consumers} consumers x {virtual_nodes} virtual nodes is more than "
            f"{MAX_VIEW_RING_POINTS} ring points, the most a ring drawing shows"
        )


def ring_view(
    consumers: int = 4,
    queues: int = 16,
    virtual_nodes: int = 10,
    brokers: Sequence[str] = ("broker-a", "broker-b"),
    topic: str = "TopicTest",
) -> go.Figure:
    """The ring panel's pure function.

    Limits: ``consumers`` 1..:data:`MAX_VIEW_CONSUMERS` (64), ``queues`` 1..:data:`MAX_VIEW_QUEUES` (64),
    ``virtual_nodes`` 0..:data:`MAX_VIEW_VIRTUAL_NODES` (1,000) and ``consumers`` x ``virtual_nodes`` at most
    :data:`MAX_VIEW_RING_POINTS` (5,000); larger raise ValueError.
    """
    consumers = check_int(consumers, "consumers", 1, MAX_VIEW_CONSUMERS)
    queues = check_int(queues, "queues", 1, MAX_VIEW_QUEUES)
    virtual_nodes = check_int(virtual_nodes, "virtual_nodes", 0, MAX_VIEW_VIRTUAL_NODES)
    check_ring_points(consumers, virtual_nodes, "virtual_nodes")
    brokers = _str_list(brokers, "brokers", max_len=MAX_VIEW_QUEUES)
    check_str(topic, "topic", max_len=MAX_VIEW_NAME)
    return ring_figure(make_cids(consumers), virtual_nodes, spread_queues(queues, brokers, topic))


def imbalance_vs_vnodes_figure(
    consumers: int = 8,
    queues: int = 64,
    vnode_counts: Sequence[int] = (1, 2, 5, 10, 20, 50, 100, 200),
    seeds: Iterable[int] = range(8),
    title: str | None = None,
) -> go.Figure:
    """Median imbalance (max - min queues) over seeded consumer sets per virtual-node count, with the
    min..max band; AVG's imbalance (0 or 1) and the median of a uniformly random assignment for comparison.

    Virtual nodes even out the ring's arcs; what remains is the randomness of the queues' own hashes,
    the same as throwing each queue at a random consumer.

    ``vnode_counts`` and ``seeds`` must not be empty; the work is bounded as in
    :func:`rmqlib.allocation.imbalance_spread` (``MAX_WORK``, about a second).
    """
    consumers = check_int(consumers, "consumers", 1, MAX_VIEW_CONSUMERS)
    queues = check_int(queues, "queues", 1, MAX_VIEW_QUEUES)
    vnode_counts = check_each(
        vnode_counts, "vnode_counts", lambda v, label: check_int(v, label, 0, MAX_VIEW_VIRTUAL_NODES), max_len=64
    )
    if not vnode_counts:
        raise ValueError("vnode_counts must hold at least one virtual-node count")
    seeds = check_each(seeds, "seeds", check_int, max_len=64)
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    title = _title_arg(title)
    spread = imbalance_spread(consumers, queues, vnode_counts, seeds)
    xs = list(spread)
    med = [sorted(v)[len(v) // 2] for v in spread.values()]
    lo = [min(v) for v in spread.values()]
    hi = [max(v) for v in spread.values()]
    avg = 0 if queues % consumers == 0 else 1
    rnd = sorted(random_assignment_imbalance(consumers, queues, seeds))[len(seeds) // 2]
    if title is None:
        title = text(
            "CONSISTENT_HASH: median max - min goes from {first} at {v0} vnode(s) to {last} at {v1} "
            "({c} consumers, {q} queues, {s} random consumer sets)",
            first=med[0],
            v0=xs[0],
            last=med[-1],
            v1=xs[-1],
            c=consumers,
            q=queues,
            s=len(seeds),
        )
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=xs + xs[::-1],
            y=hi + lo[::-1],
            fill="toself",
            fillcolor="rgba(46,145,229,0.2)",
            line=dict(width=0),
            name=text("min..max over consumer sets"),
            hoverinfo="skip",
        )
    )
    fig.add_trace(go.Scatter(x=xs, y=med, mode="lines+markers", name=text("median"), line=dict(color="#2E91E5")))
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[rnd] * len(xs),
            mode="lines",
            name=text("each queue to a random consumer"),
            line=dict(dash="dot", color="#1CA71C"),
        )
    )
    fig.add_trace(go.Scatter(x=xs, y=[avg] * len(xs), mode="lines", name="AVG", line=dict(dash="dash", color="#555")))
    fig.update_layout(
        title=title,
        height=420,
        # ticks at the counts drawn only (a log axis would label every minor step), and room below 0 for AVG's line
        xaxis=dict(title=text("virtual nodes per consumer"), type="log" if min(xs) > 0 else "linear", tickvals=xs),
        yaxis=dict(title=text("max - min queues per consumer"), range=[-1, max(hi) * 1.05 + 1]),
        meta={
            "view": "imbalance_vs_vnodes",
            "spread": {str(k): v for k, v in spread.items()},
            "median": med,
            "avg": avg,
            "random_assignment": rnd,
        },
    )
    return house_style(fig)


def moved_queues_figure(
    queues: int = 32, max_consumers: int = 16, virtual_nodes: int = 10, title: str | None = None
) -> go.Figure:
    """Queues that move when the ``c``-th consumer joins a group of ``c``, for AVG and CONSISTENT_HASH.

    The dotted line is the least any strategy must move: the newcomer's fair share, ``queues // (c+1)``.

    Limits: ``queues`` 1..:data:`MAX_VIEW_QUEUES` (64), ``max_consumers`` 1..:data:`MAX_VIEW_SCALE_OUT` (128),
    ``virtual_nodes`` 0..:data:`MAX_VIEW_VIRTUAL_NODES` (1,000), and the rings built for every step
    (``max_consumers`` squared x ``virtual_nodes``, about) at most :data:`MAX_VIEW_SCALE_OUT_POINTS` points
    (200,000); larger raise ValueError.
    """
    queues = check_int(queues, "queues", 1, MAX_VIEW_QUEUES)
    max_consumers = check_int(max_consumers, "max_consumers", 1, MAX_VIEW_SCALE_OUT)
    virtual_nodes = check_int(virtual_nodes, "virtual_nodes", 0, MAX_VIEW_VIRTUAL_NODES)
    points = (max_consumers * max_consumers + 2 * max_consumers) * virtual_nodes
    if points > MAX_VIEW_SCALE_OUT_POINTS:
        raise ValueError(
            f"max_consumers and virtual_nodes: {max_consumers} steps of {virtual_nodes} virtual nodes "
            f"build {points} ring points, more than {MAX_VIEW_SCALE_OUT_POINTS}"
        )
    title = _title_arg(title)
    mq_all = spread_queues(queues, ("broker-a", "broker-b"))
    xs = list(range(1, max_consumers + 1))
    series = {
        "AVG": [moved_on_scale_out(AllocateMessageQueueAveragely(), mq_all, c) for c in xs],
        f"CONSISTENT_HASH (vnodes={virtual_nodes})": [
            moved_on_scale_out(AllocateMessageQueueConsistentHash(virtual_nodes), mq_all, c) for c in xs
        ],
    }
    least = [queues // (c + 1) for c in xs]
    if title is None:
        title = text(
            "Queues moved when one consumer joins ({q} queues): AVG moved {avg} in total, consistent hash {ch}",
            q=queues,
            avg=sum(series["AVG"]),
            ch=sum(list(series.values())[1]),
        )
    fig = go.Figure()
    for (name, ys), color in zip(series.items(), ("#FB0D0D", "#2E91E5")):
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=name, line=dict(color=color)))
    fig.add_trace(
        go.Scatter(x=xs, y=least, mode="lines", name=text("newcomer's fair share"), line=dict(dash="dot", color="#555"))
    )
    fig.update_layout(
        title=title,
        height=420,
        xaxis_title=text("consumers before one more joins"),
        yaxis_title=text("queues that change owner"),
        meta={"view": "moved_queues", "consumers": xs, "series": series, "least": least},
    )
    return house_style(fig)


# --------------------------------------------------------------------------- many topics

TOPIC_PATTERNS = ("", "/", ".", "x", "-", "|", "+", "\\")
TOPIC_KEY_COLOR = "#777777"


def multi_topic_figure(
    strategy: AllocateMessageQueueStrategy,
    topics: Mapping[str, Iterable[MessageQueue]],
    cids: Sequence[str],
    title: str | None = None,
) -> go.Figure:
    """Stacked bars: queues per consumer summed over every topic the group subscribes to."""
    check_instance(strategy, "strategy", AllocateMessageQueueStrategy)
    if not isinstance(topics, Mapping):
        raise ArgumentTypeError(f"topics must map a topic name to its queues, got {type(topics).__name__}")
    cids = _names(_str_list(cids, "cids"))
    if not cids:
        raise ValueError("cids must name at least one consumer")
    _figure_size(len(cids), 0, "cids")
    if len(topics) > MAX_FIGURE_TOPICS:
        raise ValueError(f"topics: a figure stacks at most {MAX_FIGURE_TOPICS} topics, got {len(topics)}")
    title = _title_arg(title)
    topics = {
        check_str(t, "topics: a topic name", empty=True): _queue_list(mqs, f"topics[{t!r}]")
        for t, mqs in topics.items()
    }
    per_topic = allocate_topics(strategy, topics, cids)
    totals = multi_topic_totals(strategy, topics, cids)
    rows = list(totals)
    if title is None:
        title = text(
            "{strategy} over {t} topics, queues in all: {counts} (max - min = {spread})",
            strategy=strategy.name,
            t=len(topics),
            counts=_describe_counts(totals),
            spread=max(totals.values()) - min(totals.values()),
        )
    fig = go.Figure()
    colors = consumer_colors(cids)  # each bar in its consumer's colour; topics told apart by hatching
    for k, (topic, allocation) in enumerate(per_topic.items()):
        pattern = dict(shape=TOPIC_PATTERNS[k % len(TOPIC_PATTERNS)], fillmode="overlay", fgcolor="white", solidity=0.5)
        fig.add_trace(
            go.Bar(
                x=rows,
                y=[len(allocation.get(c, ())) for c in rows],
                name=topic,
                legendgroup=topic,
                showlegend=False,
                marker=dict(color=[colors[c] for c in rows], line=dict(color="white", width=1), pattern=pattern),
                hovertemplate=text("{topic}<br>%{{x}}: %{{y}} queues<extra></extra>", topic=topic),
            )
        )
        # the topic's legend key: its hatching in grey (colour means the consumer; a key in one
        # consumer's colour would say otherwise), and clicking it hides the topic's bars
        key = dict(color=TOPIC_KEY_COLOR, pattern=pattern)
        fig.add_trace(go.Bar(x=[None], y=[None], name=topic, legendgroup=topic, marker=key))
    fig.update_layout(
        barmode="stack",
        title=title,
        height=400,
        xaxis=dict(title=text("consumers (Java sort order)"), type="category"),
        yaxis_title=text("queues held"),
        legend=dict(title=text("topic")),
        meta={
            "view": "multi_topic",
            "totals": totals,
            "per_topic": {t: queues_per_consumer(a) for t, a in per_topic.items()},
        },
    )
    return house_style(fig)


# --------------------------------------------------------------------------- machine rooms


def machine_room_figure(
    allocation: Mapping[str, Sequence[MessageQueue]],
    mq_all: Sequence[MessageQueue],
    cids: Sequence[str],
    broker_rooms: Mapping[str, str],
    consumer_rooms: Mapping[str, str],
    title: str | None = None,
) -> go.Figure:
    """Rooms side by side: queues (squares, by broker) above, consumers (circles) below.

    A queue takes its owner's colour (grey: nobody). A dashed line joins a
    queue to an owner in another room: that traffic crosses rooms.
    """
    _checked_allocation(allocation)
    mq_all = _queue_list(mq_all, "mq_all")
    cids = _str_list(cids, "cids")
    for arg, rooms_of in (("broker_rooms", broker_rooms), ("consumer_rooms", consumer_rooms)):
        if not isinstance(rooms_of, Mapping):
            raise ArgumentTypeError(f"{arg} must map names to rooms (a dict), got {type(rooms_of).__name__}")
        for key, room in rooms_of.items():
            check_str(key, f"{arg}: a name", empty=True)
            check_str(room, f"{arg}[{key!r}]", empty=True)
    title = _title_arg(title)
    cids = _names(cids)
    colors = consumer_colors(cids)
    queues = java_sorted_mqs(list(dict.fromkeys(mq_all)))
    _figure_size(len(cids), len(queues), "cids", "mq_all")
    rooms = sorted(
        set(broker_rooms.get(mq.broker_name, "?") for mq in queues) | set(consumer_rooms.get(c, "?") for c in cids)
    )
    if len(rooms) > MAX_FIGURE_ROOMS:
        raise ValueError(
            f"broker_rooms and consumer_rooms: a figure draws at most {MAX_FIGURE_ROOMS} rooms, got {len(rooms)}"
        )
    owner_of: dict[MessageQueue, list[str]] = {}
    for cid, mqs in allocation.items():
        for mq in mqs:
            owner_of.setdefault(mq, []).append(cid)
    room_x = {room: 3.0 * i for i, room in enumerate(rooms)}
    qpos: dict[MessageQueue, tuple[float, float]] = {}
    by_broker: dict[str, list[MessageQueue]] = {}  # grouped once: the loops below stay linear
    for mq in queues:
        by_broker.setdefault(mq.broker_name, []).append(mq)
    brokers_in: dict[str, list[str]] = {}
    for broker in by_broker:
        brokers_in.setdefault(broker_rooms.get(broker, "?"), []).append(broker)
    members_in: dict[str, list[str]] = {}
    for c in cids:
        members_in.setdefault(consumer_rooms.get(c, "?"), []).append(c)
    for room in rooms:
        for b_i, broker in enumerate(sorted(brokers_in.get(room, ()))):
            for q_i, mq in enumerate(by_broker[broker]):
                qpos[mq] = (room_x[room] + 0.5 * b_i, 1.0 + 0.35 * q_i)
    cpos = {}
    for room in rooms:
        members = java_sorted_cids(members_in.get(room, []))
        for k, cid in enumerate(members):
            cpos[cid] = (room_x[room] + 0.5 * (k % 5), -1.0 - 0.5 * (k // 5))
    cross = [
        (mq, cid)
        for mq, os in owner_of.items()
        for cid in os
        if cid in cpos and mq in qpos and consumer_rooms.get(cid) != broker_rooms.get(mq.broker_name)
    ]
    gaps = [mq for mq in queues if mq not in owner_of]
    counts = {cid: len(allocation.get(cid, ())) for cid in cids}
    if title is None:
        title = (
            text("{q} queues in {r} rooms: {x} consumed from another room", q=len(queues), r=len(rooms), x=len(cross))
            + (text(", {n} consumed by nobody", n=len(gaps)) if gaps else "")
            + (text("; consumers: {counts}", counts=_describe_counts(counts)) if cids else "")
        )
    fig = go.Figure()
    lx: list = []
    ly: list = []
    for mq, cid in cross:
        lx += [qpos[mq][0], cpos[cid][0], None]
        ly += [qpos[mq][1], cpos[cid][1], None]
    fig.add_trace(
        go.Scatter(
            x=lx,
            y=ly,
            mode="lines",
            name=text("cross-room"),
            line=dict(dash="dash", color="#999", width=1),
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[qpos[mq][0] for mq in queues],
            y=[qpos[mq][1] for mq in queues],
            mode="markers",
            name=text("queues"),
            marker=dict(
                symbol="square",
                size=16,
                color=[
                    colors[owner_of[mq][0]] if mq in owner_of and owner_of[mq][0] in colors else UNASSIGNED_COLOR
                    for mq in queues
                ],
                line=dict(color="black", width=1),
            ),
            customdata=[[str(mq), ", ".join(owner_of.get(mq, [text("nobody")]))] for mq in queues],
            hovertemplate=text("%{customdata[0]}<br>owner: %{customdata[1]}<extra></extra>"),
        )
    )
    for cid in java_sorted_cids(cids):
        x, y = cpos[cid]
        fig.add_trace(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers",
                name=f"{cid} ({counts[cid]})",
                marker=dict(size=16, color=colors[cid]),
                hovertemplate=text("{cid}<br>{n} queues<extra></extra>", cid=cid, n=counts[cid]),
            )
        )
    shapes, annotations = [], []
    for room in rooms:
        x0 = room_x[room] - 0.4
        shapes.append(
            dict(
                type="rect",
                x0=x0,
                x1=x0 + 2.6,
                y0=-3.0,
                y1=4.0,
                line=dict(color="#888"),
                fillcolor="rgba(0,0,0,0.03)",
                layer="below",
            )
        )
        annotations.append(dict(x=x0 + 1.3, y=4.3, text=f"<b>{room}</b>", showarrow=False))
    annotations += [
        dict(x=-0.9, y=2.0, text=text("queues"), textangle=-90, showarrow=False),
        dict(x=-0.9, y=-1.5, text=text("consumers"), textangle=-90, showarrow=False),
    ]
    fig.update_layout(
        title=title,
        height=460,
        shapes=shapes,
        annotations=annotations,
        xaxis=dict(visible=False, range=[-1.2, 3.0 * max(len(rooms), 1)]),
        yaxis=dict(visible=False, range=[-3.3, 4.7]),
        legend=dict(title=text("consumer (queues)")),
        meta={
            "view": "machine_room",
            "allocation": {c: [str(mq) for mq in allocation.get(c, ())] for c in java_sorted_cids(cids)},
            "cross_room": len(cross),
            "unassigned": [str(mq) for mq in gaps],
            "rooms": rooms,
        },
    )
    return house_style(fig)


ROOMS = ("IDC1", "IDC2", "IDC3")


def _room_counts(rooms, brokers, consumers) -> tuple[list[str], list[int], list[int]]:
    """Checked rooms (distinct names) and a broker count and a consumer count per room."""
    rooms = _str_list(rooms, "rooms", max_len=MAX_VIEW_ROOMS, distinct=True)
    for i, room in enumerate(rooms):
        check_str(room, f"rooms[{i}]", max_len=MAX_VIEW_NAME)
    if not rooms:
        raise ValueError("rooms must name at least one room")
    brokers = check_each(
        brokers, "brokers", lambda v, label: check_int(v, label, 0, MAX_VIEW_ROOM_BROKERS), max_len=MAX_VIEW_ROOMS
    )
    consumers = check_each(
        consumers, "consumers", lambda v, label: check_int(v, label, 0, MAX_VIEW_ROOM_CONSUMERS), max_len=MAX_VIEW_ROOMS
    )
    for arg, counts in (("brokers", brokers), ("consumers", consumers)):
        if len(counts) != len(rooms):
            raise ValueError(f"{arg} must give one count per room ({len(rooms)} rooms), got {len(counts)}")
    return rooms, brokers, consumers


def machine_room_layout(
    brokers: Sequence[int],
    consumers: Sequence[int],
    queues_per_broker: int = 4,
    rooms: Sequence[str] = ROOMS,
    topic: str = "TopicTest",
):
    """Build a deployment: ``brokers[i]`` brokers and ``consumers[i]`` consumers in room ``rooms[i]``.

    Brokers are named ``IDC1@broker-1`` (the ``idc@name`` form MACHINE_ROOM reads);
    consumers are ``10.<room>.0.<k>@<pid>`` (a subnet per room). Returns
    ``(mq_all, cids, broker_rooms, consumer_rooms)``.

    Limits: 1..:data:`MAX_VIEW_ROOMS` (6) distinct rooms; per room 0..:data:`MAX_VIEW_ROOM_BROKERS` (8)
    brokers and 0..:data:`MAX_VIEW_ROOM_CONSUMERS` (16) consumers; ``queues_per_broker``
    1..:data:`MAX_VIEW_QUEUES_PER_BROKER` (16); larger raise ValueError.
    """
    rooms, brokers, consumers = _room_counts(rooms, brokers, consumers)
    queues_per_broker = check_int(queues_per_broker, "queues_per_broker", 1, MAX_VIEW_QUEUES_PER_BROKER)
    check_str(topic, "topic", max_len=MAX_VIEW_NAME)
    mq_all, cids, broker_rooms, consumer_rooms = [], [], {}, {}
    for r, room in enumerate(rooms):
        for b in range(brokers[r]):
            name = f"{room}@broker-{b + 1}"
            broker_rooms[name] = room
            mq_all += make_queues(topic, [name], queues_per_broker)
        for k in range(consumers[r]):
            cid = f"10.{r + 1}.0.{k + 1}@{1000 + 100 * (r + 1) + k + 1}"
            consumer_rooms[cid] = room
            cids.append(cid)
    return mq_all, cids, broker_rooms, consumer_rooms


MACHINE_ROOM_STRATEGIES = (
    "MACHINE_ROOM_NEARBY-AVG",
    "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE",
    "MACHINE_ROOM_NEARBY-CONSISTENT_HASH",
    "MACHINE_ROOM",
)


def machine_room_view(
    strategy: str = "MACHINE_ROOM_NEARBY-AVG",
    brokers: Sequence[int] = (1, 1, 1),
    consumers: Sequence[int] = (2, 1, 0),
    queues_per_broker: int = 4,
    consumer_idcs: Iterable[str] = ("IDC1",),
    rooms: Sequence[str] = ROOMS,
) -> go.Figure:
    """The machine-room panel's pure function. ``consumer_idcs`` is used by MACHINE_ROOM only.

    NEARBY resolves rooms from the deployment (a ``MappingMachineRoomResolver``).
    No consumers or no brokers at all gives a figure that says so (RocketMQ
    would not call the strategy either: RebalanceImpl skips an empty view).
    Limits as in :func:`machine_room_layout`.
    """
    _strategy_name(strategy)
    consumer_idcs = _str_list(consumer_idcs, "consumer_idcs", max_len=MAX_VIEW_ROOMS * 4)
    mq_all, cids, broker_rooms, consumer_rooms = machine_room_layout(brokers, consumers, queues_per_broker, rooms)
    meta = {"view": "machine_room", "allocation": {}, "cross_room": 0, "unassigned": [str(mq) for mq in mq_all]}
    if not mq_all or not cids:
        missing = (
            text("no broker in any room: RebalanceImpl skips the topic")
            if not mq_all
            else text("no consumer in any room: RebalanceImpl skips the topic")
        )
        return _message_figure(text("{strategy}: nothing to allocate", strategy=strategy), missing, meta)
    if strategy == "MACHINE_ROOM":
        strat = _strategy("MACHINE_ROOM", consumer_idcs=set(consumer_idcs))
    else:
        strat = _strategy(strategy, resolver=MappingMachineRoomResolver(broker_rooms, consumer_rooms))
    allocation = allocate_group(strat, mq_all, cids)
    fig = machine_room_figure(allocation, mq_all, cids, broker_rooms, consumer_rooms)
    suffix = f" (consumeridcs={sorted(consumer_idcs)})" if strategy == "MACHINE_ROOM" else ""
    retitle(fig, text("{label}: {title}", label=f"{strategy}{suffix}", title=plain_title(fig.layout)))
    return house_style(fig)


__all__ = [
    "allocation_figure",
    "allocation_view",
    "imbalance_spread",
    "imbalance_vs_vnodes_figure",
    "machine_room_figure",
    "machine_room_layout",
    "machine_room_view",
    "moved_on_scale_out",
    "moved_queues_figure",
    "multi_topic_figure",
    "queue_label",
    "queues_per_consumer_figure",
    "random_assignment_imbalance",
    "random_cids",
    "ring_figure",
    "ring_view",
    "spread_queues",
]
