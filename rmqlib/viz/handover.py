"""Pictures of the hand-over: one rebalance round step by step, and one queue changing owner in a run.

* :func:`handover_figure` -- one frame of :func:`rmqlib.client.handover.replay_handover`: a column
  per consumer (its ``processQueueTable``) and one for the broker (committed offsets), a row per queue.
* :func:`handover_view` / :func:`handover_panel` -- the same with a "step" slider.
* :func:`queue_handover_figure` -- from a simulated run: every offset of one queue, when and by whom it
  was consumed, with the messages consumed twice marked.
"""

from __future__ import annotations

import plotly.graph_objects as go

from rmqlib.checks import check_instance, check_int, check_str
from rmqlib.client.handover import DROPPED, HandoverReplay, replay_handover
from rmqlib.sim.result import SimResult
from rmqlib.viz.colors import UNASSIGNED_COLOR, consumer_colors
from rmqlib.viz.i18n import phrase, plural, text
from rmqlib.viz.panels import Panel, _slider
from rmqlib.viz.style import ROW_LABEL_STANDOFF_PX, house_style
from rmqlib.viz.timeline import _queue_labels, _s, short_queue

BROKER = "broker"
HIGHLIGHT = "#FB0D0D"


def _step_title(replay: HandoverReplay, index: int) -> str:
    """``Step k/N · client · queue · action: detail`` (the detail goes under the headline)."""
    frame = replay.frames[index]
    last = len(replay.frames) - 1
    if frame.step is None:
        return text(
            "Step 0/{last} · {n} consumers, before the round: they run it in the order {order}",
            last=last,
            n=len(replay.after),
            order=", ".join(replay.order),
        )
    step = frame.step
    where = f" · {short_queue(str(step.mq)).split('/', 1)[-1]}" if step.mq is not None else ""
    head = text(
        "Step {k}/{last} · {cid}{where} · {action}",
        k=index,
        last=last,
        cid=step.client_id,
        where=where,
        action=text(step.action),
    )
    return text("{head}: {detail}", head=head, detail=phrase(step.detail)) if step.detail else head


def handover_figure(replay: HandoverReplay, index: int = 0) -> go.Figure:
    """Frame ``index`` of ``replay``: who holds which queue, with which offset, and the broker's copy.

    A filled square is a queue its consumer works on (the number: the offset in its memory, or where
    its first pull starts); an open grey square a queue still in the table but dropped. The broker
    column shows the committed offset (and the lock holder, orderly). The step's own cell is circled.
    """
    check_instance(replay, "replay", HandoverReplay)
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"index must be an int, got {type(index).__name__}")
    if not 0 <= index < len(replay.frames):
        raise ValueError(f"index must be in 0..{len(replay.frames) - 1}, got {index}")
    frame = replay.frames[index]
    cids = sorted(replay.after)
    colors = consumer_colors(cids)
    columns = cids + [BROKER]
    rows = {mq: label for mq, label in zip(replay.queues, _queue_labels([str(q) for q in replay.queues]).values())}
    fig = go.Figure()
    dropped_x, dropped_y = [], []
    for x, cid in enumerate(cids):
        table, memory, pulls = frame.tables.get(cid, {}), frame.memory_offsets.get(cid, {}), frame.first_pulls[cid]
        working = [mq for mq in replay.queues if table.get(mq) not in (None, DROPPED)]
        dropped_x += [x] * sum(1 for mq in replay.queues if table.get(mq) == DROPPED)
        dropped_y += [rows[mq] for mq in replay.queues if table.get(mq) == DROPPED]
        labels = [text("pull {offset}", offset=pulls[mq]) if mq in pulls else str(memory.get(mq, "")) for mq in working]
        fig.add_trace(
            go.Scatter(
                x=[x] * len(working),
                y=[rows[mq] for mq in working],
                mode="markers+text",
                name=cid,
                marker=dict(symbol="square", size=40, color=colors[cid]),
                text=labels,
                textfont=dict(color="white", size=10),
                hovertemplate=f"{cid}<br>%{{y}}: %{{text}}<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=dropped_x,
            y=dropped_y,
            mode="markers+text",
            name=text("dropped, still in the table"),
            marker=dict(symbol="square-open", size=40, color=UNASSIGNED_COLOR, line=dict(width=3)),
            text=[text("dropped")] * len(dropped_x),
            textfont=dict(size=9, color="#555"),
            hovertemplate=text("dropped<br>%{y}<extra></extra>"),
        )
    )
    committed = [mq for mq in replay.queues if mq in frame.broker_offsets]
    fig.add_trace(
        go.Scatter(
            x=[len(cids)] * len(committed),
            y=[rows[mq] for mq in committed],
            mode="text",
            name=text("committed offset"),
            text=[
                f"{frame.broker_offsets[mq]}"
                + (text(" (lock: {holder})", holder=frame.locks[mq].split("@")[0]) if mq in frame.locks else "")
                for mq in committed
            ],
            textfont=dict(size=11, color="#222"),
            showlegend=False,
            hovertemplate=text("committed at the broker<br>%{y}: %{text}<extra></extra>"),
        )
    )
    step = frame.step
    mark_x, mark_y = [], []
    if step is not None and step.mq is not None:
        mark_x, mark_y = [cids.index(step.client_id)], [rows[step.mq]]
        if step.action == "persist offset":  # the broker's copy changes too
            mark_x.append(len(cids))
            mark_y.append(rows[step.mq])
    fig.add_trace(
        go.Scatter(
            x=mark_x,
            y=mark_y,
            mode="markers",
            name=text("this step"),
            marker=dict(symbol="circle-open", size=56, color=HIGHLIGHT, line=dict(width=3)),
            hoverinfo="skip",
        )
    )
    for trace in fig.data:  # plotly lists no trace without a point: an empty one gets a blank point, so every step's
        if trace.showlegend is not False and not len(trace.x):  # legend names every consumer and mark
            trace.update(x=[None], y=[None], text=[""])
    fig.update_layout(
        title=_step_title(replay, index),
        height=150 + 58 * len(replay.queues),
        xaxis=dict(
            tickvals=list(range(len(columns))),
            ticktext=cids + [text(BROKER)],
            range=[-0.6, len(columns) - 0.4],
            showgrid=False,
            zeroline=False,
        ),
        yaxis=dict(
            type="category", categoryorder="array", categoryarray=list(rows.values())[::-1], showgrid=False, title=None
        ),
        legend=dict(title="processQueueTable"),
        meta={
            "view": "handover",
            "step": index,
            "steps": len(replay.frames) - 1,
            "action": None if step is None else step.action,
            "tables": {cid: {str(mq): state for mq, state in t.items()} for cid, t in frame.tables.items()},
            "broker_offsets": {str(mq): o for mq, o in frame.broker_offsets.items()},
            "redelivered": {str(mq): n for mq, n in replay.redelivered.items()},
        },
    )
    return house_style(fig)


def handover_view(step: int = 0, **replay_kwargs) -> go.Figure:
    """The hand-over panel's pure function: frame ``step`` of ``replay_handover(**replay_kwargs)``."""
    return handover_figure(replay_handover(**replay_kwargs), step)


def handover_panel(step: int = 0, **replay_kwargs) -> Panel:
    """A "step" slider over the frames of ``replay_handover(**replay_kwargs)``."""
    replay = replay_handover(**replay_kwargs)
    controls = {"step": _slider("step", step, 0, len(replay.frames) - 1)}
    controls["step"].continuous_update = True
    return Panel(lambda step: handover_figure(replay, step), controls, largest=handover_figure(replay, 0))


def handover_steps(replay: HandoverReplay) -> list[tuple[int, go.Figure]]:
    """Every frame of ``replay`` as ``(index, figure)``, for :func:`rmqlib.viz.static.frames_figure`."""
    return [(k, handover_figure(replay, k)) for k in range(len(replay.frames))]


# --------------------------------------------------------------------------- a queue in a simulated run


def moved_queues(result, after_ms: int = 0) -> list[str]:
    """Queues of ``result`` that passed from one consumer to another at or after ``after_ms``."""
    check_instance(result, "result", SimResult)
    check_int(after_ms, "after_ms")
    moved = []
    for queue in result.queues:
        spans = sorted(result.ownership.get(queue, ()), key=lambda i: (i.start_ms, i.end_ms))
        if any(a.holder != b.holder and b.start_ms >= after_ms for a, b in zip(spans, spans[1:])):
            moved.append(queue)
    return moved


def queue_handover_figure(
    result,
    queue: str | None = None,
    after_ms: int | None = None,
    window_ms: tuple[int, int] = (3_000, 4_000),
    title: str | None = None,
) -> go.Figure:
    """One queue of a simulated run around its hand-over: offset against time, one colour per consumer.

    Each dot is a message consumed (at the end of its listener call); a ringed dot is one consumed
    more than once (:meth:`SimResult.redelivered_offsets`). Vertical lines mark when the old owner
    dropped the queue and the new one took it. ``queue`` defaults to the first queue that changed
    owner after the producers started (``after_ms``); the x axis spans ``window_ms`` before the drop and
    after the take.
    """
    check_instance(result, "result", SimResult)
    if queue is not None:
        check_str(queue, "queue")
    if after_ms is not None:
        check_int(after_ms, "after_ms")
    if not isinstance(window_ms, (tuple, list)) or len(window_ms) != 2:
        raise TypeError(f"window_ms must be a (before, after) pair of ints, got {window_ms!r}"[:200])
    for i, span in enumerate(window_ms):
        check_int(span, f"window_ms[{i}]", 0, 10**12)
    if title is not None:
        title = phrase(check_str(title, "title", empty=True))
    since = result.scenario.produce_start_ms if after_ms is None else after_ms
    if queue is None:
        candidates = moved_queues(result, since)
        if not candidates:
            raise ValueError("queue: no queue changed owner in this run after the producers started")
        queue = candidates[0]
    if queue not in result.queues:
        raise ValueError(f"queue must be one of the run's queues, got {queue!r}")
    spans = sorted(result.ownership.get(queue, ()), key=lambda i: (i.start_ms, i.end_ms))
    moves = [(a, b) for a, b in zip(spans, spans[1:]) if a.holder != b.holder and b.start_ms >= since]
    if not moves:
        raise ValueError(f"queue: {short_queue(queue)} did not change owner after {since} ms")
    old, new = moves[0]
    order = [spec.client_id for spec in result.scenario.consumers]
    colors = consumer_colors(order)
    again = set(result.redelivered_offsets().get(queue, ()))
    batches = result.consumption.get(queue, [])
    fig = go.Figure()
    for cid in [c for c in order if any(b.consumer == c for b in batches)]:
        points = [(b.end_ms, o) for b in batches if b.consumer == cid for o in b.offsets]
        fig.add_trace(
            go.Scatter(
                x=[_s(t) for t, _ in points],
                y=[o for _, o in points],
                mode="markers",
                name=cid,
                marker=dict(size=7, color=colors[cid]),
                hovertemplate=text("{cid}<br>offset %{{y}} at %{{x:.3f}} s<extra></extra>", cid=cid),
            )
        )
    twice = [(b.end_ms, o) for b in batches for o in b.offsets if o in again]
    fig.add_trace(
        go.Scatter(
            x=[_s(t) for t, _ in twice],
            y=[o for _, o in twice],
            mode="markers",
            name=text("consumed more than once"),
            marker=dict(symbol="circle-open", size=15, color=HIGHLIGHT, line=dict(width=2)),
            hovertemplate=text("offset %{y} again at %{x:.3f} s<extra></extra>"),
        )
    )
    lo, hi = old.end_ms - window_ms[0], new.start_ms + window_ms[1]
    # labelled at the foot of the line, on its right: offsets grow with time, so that corner is empty
    marks = (
        [(old.end_ms, text(" {old} drops it, {new} takes it", old=old.holder, new=new.holder), "left")]
        if new.start_ms - old.end_ms < 300
        else [
            (old.end_ms, text("{old} drops it ", old=old.holder), "right"),
            (new.start_ms, text(" {new} takes it", new=new.holder), "left"),
        ]
    )
    for t, mark, side in marks:
        fig.add_vline(x=_s(t), line_dash="dot", line_color="#555")
        fig.add_annotation(
            x=_s(t),
            y=0,
            yref="paper",
            text=mark,
            showarrow=False,
            yanchor="bottom",
            xanchor=side,
            font=dict(size=11, color="#444"),
        )
    shown = [o for b in batches if lo <= b.end_ms <= hi for o in b.offsets]
    if title is None:
        title = plural(
            "{queue} moves from {old} to {new}: {n} message consumed twice",
            "{queue} moves from {old} to {new}: {n} messages consumed twice",
            len(again),
            queue=short_queue(queue),
            old=old.holder,
            new=new.holder,
        )
    fig.update_layout(
        title=title,
        height=440,
        xaxis=dict(title=text("simulated time (s)"), range=[_s(lo), _s(hi)]),
        yaxis=dict(
            title=text("queue offset"),
            range=[min(shown, default=0) - 1, max(shown, default=1) + 1],
            ticklabelstandoff=ROW_LABEL_STANDOFF_PX,  # a dot at the window's left edge stays off the offset labels
        ),
        legend=dict(title=text("consumed by")),
        meta={
            "view": "queue_handover",
            "queue": queue,
            "old_owner": old.holder,
            "new_owner": new.holder,
            "dropped_ms": old.end_ms,
            "taken_ms": new.start_ms,
            "consumed_twice": sorted(again),
        },
    )
    return house_style(fig)


__all__ = [
    "handover_figure",
    "handover_panel",
    "handover_steps",
    "handover_view",
    "moved_queues",
    "queue_handover_figure",
]
