"""Step through a ProcessQueue: messages acknowledged out of order, the offset tree, the commit offset.

A concurrent push consumer hands each pulled message to one of 20 threads;
they finish in any order. :func:`process_queue_steps` replays that with a real
:class:`rmqlib.client.ProcessQueue`: put ``messages`` offsets, then remove them
one at a time in a seeded random order (optionally keeping one slow message for
last) and record what ``remove_message`` returns, the offset that may be
committed. :func:`process_queue_view` draws one moment of it;
:func:`process_queue_panel` wraps that pure function in sliders and buttons.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import ipywidgets as widgets
import plotly.graph_objects as go

from rmqlib.checks import check_int
from rmqlib.client import Message, ProcessQueue
from rmqlib.viz.i18n import text
from rmqlib.viz.panels import Panel, labelled
from rmqlib.viz.style import house_style

ACKED_COLOR, HELD_COLOR, LAST_COLOR = "#BBBBBB", "#2E91E5", "#FB0D0D"

MAX_STEP_MESSAGES = 1_000
"""Most messages :func:`ack_order` and :func:`process_queue_steps` replay (1,000: 0.2 s here; every step
checks the whole tree, so 10,000 took 14 s)."""
MAX_VIEW_MESSAGES = 64
"""Most messages :func:`process_queue_view` and :func:`process_queue_panel` draw (a labelled square each:
64 take 0.5 s to draw in headless Chromium here, 100 took 1.1 s)."""
MAX_OFFSET = 2**62
"""Largest first offset (queue offsets are Java longs)."""


@dataclass(frozen=True)
class Step:
    """One acknowledgement: ``acked`` was removed; ``commit_offset`` is what removeMessage returned."""

    acked: int
    commit_offset: int
    tree: tuple[int, ...]  # offsets still held after the step, ascending


def ack_order(messages: int, seed: int = 0, first_offset: int = 0, slow_offset: int | None = None) -> list[int]:
    """The order in which the offsets ``first_offset .. first_offset+messages-1`` finish (seeded shuffle);
    ``slow_offset`` (if given) finishes last, as a message stuck in a slow listener would.
    ``messages`` is at most :data:`MAX_STEP_MESSAGES`; ``seed`` an int."""
    messages = check_int(messages, "messages", 1, MAX_STEP_MESSAGES)
    seed = check_int(seed, "seed")
    first_offset = check_int(first_offset, "first_offset", 0, MAX_OFFSET)
    if slow_offset is not None:
        slow_offset = check_int(slow_offset, "slow_offset")
    offsets = list(range(first_offset, first_offset + messages))
    if slow_offset is not None and slow_offset not in offsets:
        raise ValueError(f"slow_offset must be one of the offsets {offsets[0]}..{offsets[-1]}, got {slow_offset!r}")
    random.Random(seed).shuffle(offsets)
    if slow_offset is not None:
        offsets.remove(slow_offset)
        offsets.append(slow_offset)
    return offsets


def process_queue_steps(
    messages: int = 12, seed: int = 0, first_offset: int = 100, slow_offset: int | None = None
) -> tuple[ProcessQueue, list[Step]]:
    """Put ``messages`` messages in a fresh ProcessQueue and acknowledge them in :func:`ack_order`.

    Returns the (now empty) ProcessQueue and one :class:`Step` per acknowledgement.
    At most :data:`MAX_STEP_MESSAGES` messages.
    """
    messages = check_int(messages, "messages", 1, MAX_STEP_MESSAGES)
    first_offset = check_int(first_offset, "first_offset", 0, MAX_OFFSET)
    order = ack_order(messages, seed, first_offset, slow_offset)
    pq = ProcessQueue(0)
    msgs = {
        o: Message(topic="TopicTest", queue_id=0, queue_offset=o, body_size=1024)
        for o in range(first_offset, first_offset + messages)
    }
    pq.put_message(list(msgs.values()))
    steps = []
    for t, offset in enumerate(order, 1):
        commit = pq.remove_message([msgs[offset]], now_ms=t)
        pq._check()
        steps.append(Step(offset, commit, tuple(pq.msg_tree.keys())))
    return pq, steps


def process_queue_view(
    messages: int = 12, seed: int = 0, step: int = 0, slow: int = -1, first_offset: int = 100
) -> go.Figure:
    """The offsets of one ProcessQueue after ``step`` acknowledgements: grey = acknowledged, blue = still in the
    tree, red outline = the message just acknowledged; the arrow marks the commit offset.

    ``slow`` is the index (0-based, from ``first_offset``) of a message that finishes last, or -1 for none.
    ``messages`` is at most :data:`MAX_VIEW_MESSAGES` (64; a square each); larger raise ValueError.
    """
    messages = check_int(messages, "messages", 1, MAX_VIEW_MESSAGES)
    first_offset = check_int(first_offset, "first_offset", 0, MAX_OFFSET)
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= messages:
        raise ValueError(f"step must be an int in 0..{messages}, got {step!r}")
    if isinstance(slow, bool) or not isinstance(slow, int) or not -1 <= slow < messages:
        raise ValueError(f"slow must be -1 or an index in 0..{messages - 1}, got {slow!r}")
    slow_offset = None if slow < 0 else first_offset + slow
    _, steps = process_queue_steps(messages, seed, first_offset, slow_offset)
    offsets = list(range(first_offset, first_offset + messages))
    done = steps[:step]
    acked = {s.acked for s in done}
    tree = [o for o in offsets if o not in acked]
    # Before any acknowledgement nothing may be committed beyond the first offset.
    commit = done[-1].commit_offset if done else first_offset
    last = done[-1].acked if done else None
    colors = [ACKED_COLOR if o in acked else HELD_COLOR for o in offsets]
    outline = [LAST_COLOR if o == last else "#FFFFFF" for o in offsets]
    fig = go.Figure(
        go.Scatter(
            x=offsets,
            y=[0] * len(offsets),
            mode="markers+text",
            text=[str(o) for o in offsets],
            textposition="middle center",
            textfont=dict(color="white", size=10),
            marker=dict(symbol="square", size=30, color=colors, line=dict(color=outline, width=3)),
            customdata=[text("acknowledged") if o in acked else text("in msgTreeMap") for o in offsets],
            hovertemplate=text("offset %{x}: %{customdata}<extra></extra>"),
            name=text("offsets"),
            showlegend=False,
        )
    )
    key = (
        ("in msgTreeMap (pulled, not acknowledged)", HELD_COLOR, "#FFFFFF"),
        ("acknowledged", ACKED_COLOR, "#FFFFFF"),
        ("acknowledged at this step", ACKED_COLOR, LAST_COLOR),
    )
    for name, fill, edge in key:  # the colours' key, shown in the legend only
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=text(name),
                hoverinfo="skip",
                marker=dict(symbol="square", size=14, color=fill, line=dict(color=edge, width=2)),
            )
        )
    fig.add_annotation(
        x=commit - 0.5,
        y=0.5,
        ax=0,
        ay=-40,
        text=text("commit offset {commit}", commit=commit),
        showarrow=True,
        arrowhead=2,
        arrowcolor="#1CA71C",
        font=dict(color="#1CA71C"),
    )
    if step == 0:
        title = text(
            "{n} messages pulled (offsets {first}..{last}); none acknowledged",
            n=messages,
            first=first_offset,
            last=first_offset + messages - 1,
        )
    elif tree:
        title = text(
            "step {step}: offset {last} acknowledged; {left} left in the tree; removeMessage returned "
            "{commit} (lowest unacknowledged)",
            step=step,
            last=last,
            left=len(tree),
            commit=commit,
        )
    else:
        title = text(
            "step {step}: offset {last} acknowledged; {left} left in the tree; removeMessage returned "
            "{commit} (lowest unacknowledged: none left, so queueOffsetMax + 1)",
            step=step,
            last=last,
            left=len(tree),
            commit=commit,
        )
    fig.update_layout(
        title=title,
        height=230,
        xaxis=dict(
            title=text("queue offset"),
            range=[first_offset - 1.5, first_offset + messages + 0.5],
            dtick=1,
            showgrid=False,
        ),
        yaxis=dict(visible=False, range=[-0.8, 1.2]),
        margin=dict(t=60, b=40),
        meta={
            "view": "process_queue",
            "step": step,
            "acked": [s.acked for s in done],
            "tree": tree,
            "commit_offset": commit,
            "span": (tree[-1] - tree[0]) if tree else 0,
        },
    )
    return house_style(fig)


def process_queue_panel(messages: int = 12, seed: int = 0, slow: int = -1, max_messages: int = 24) -> Panel:
    """ "messages", "seed", "slow message" and "step" sliders plus ◀ / ▶ / reset buttons over
    :func:`process_queue_view`. ``panel.step_forward()`` / ``step_back()`` / ``reset()`` are what the
    buttons call. ``max_messages`` is at most :data:`MAX_VIEW_MESSAGES` (64); ``seed`` in 0..20 (the
    slider's range); ``slow`` -1 or an index below ``max_messages``."""
    max_messages = check_int(max_messages, "max_messages", 1, MAX_VIEW_MESSAGES)
    messages = check_int(messages, "messages (at most max_messages)", 1, max_messages)
    seed = check_int(seed, "seed", 0, 20)
    slow = check_int(slow, "slow", -1, max_messages - 1)
    controls = {
        "messages": labelled(
            widgets.IntSlider(value=messages, min=1, max=max_messages, continuous_update=False), "messages"
        ),
        "seed": labelled(widgets.IntSlider(value=seed, min=0, max=20, continuous_update=False), "seed"),
        "slow": labelled(
            widgets.IntSlider(
                value=slow,
                min=-1,
                max=max_messages - 1,
                continuous_update=False,
                style={"description_width": "initial"},
            ),
            "slow message",
        ),
        "step": labelled(widgets.IntSlider(value=0, min=0, max=messages, continuous_update=False), "step"),
    }

    def combine(params: dict) -> dict:
        n = params["messages"]
        return {
            "messages": n,
            "seed": params["seed"],
            "step": min(params["step"], n),
            "slow": params["slow"] if params["slow"] < n else -1,
        }

    panel = Panel(process_queue_view, controls, combine)
    step = controls["step"]

    def on_messages(change):  # keep the step slider within the message count
        step.max = change["new"]
        controls["slow"].max = change["new"] - 1

    controls["messages"].observe(on_messages, names="value")

    def forward(_=None):
        step.value = min(step.max, step.value + 1)

    def back(_=None):
        step.value = max(0, step.value - 1)

    def reset(_=None):
        step.value = 0

    buttons = [
        widgets.Button(description=text("◀ undo"), layout=widgets.Layout(width="90px")),
        widgets.Button(description=text("acknowledge next ▶"), layout=widgets.Layout(width="170px")),
        widgets.Button(description=text("reset"), layout=widgets.Layout(width="80px")),
    ]
    for button, action in zip(buttons, (back, forward, reset)):
        button.on_click(action)
    panel.step_forward, panel.step_back, panel.reset, panel.buttons = forward, back, reset, buttons
    panel.widget = widgets.VBox([widgets.HBox(buttons), panel.widget])
    return panel


__all__ = ["Step", "ack_order", "process_queue_panel", "process_queue_steps", "process_queue_view"]
