"""A sequence diagram drawn from a simulated run's own event log, so the picture cannot drift from the model.

:func:`sequence_figure` takes a :class:`~rmqlib.sim.SimResult` (run with ``simulate(..., trace=True)``
for the consumer-list queries, queue-table steps, pulls, answers and reputs) and a time window, and
draws one lifeline per consumer and broker, time going down. A message between two parties is an
arrow; something one party does alone is a dot on its lifeline. Events are spaced one row apart in
log order (many happen in the same millisecond); the left axis gives each row's time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import plotly.graph_objects as go

from rmqlib.checks import ArgumentTypeError, check_each, check_instance, check_number, check_str
from rmqlib.client.rebalance import STEP_ACTIONS
from rmqlib.sim.result import SimResult
from rmqlib.viz.i18n import language, phrase, text
from rmqlib.viz.style import house_style
from rmqlib.viz.timeline import kind_label

MAX_EVENTS = 400
"""Most rows a sequence diagram draws (each row is one or two annotations for the browser to lay out)."""

#: Event kinds by the part of the loop they belong to, with the colour they are drawn in.
MEMBERSHIP = ("join", "leave", "heartbeat", "channel closed", "channel expired", "notify", "find consumer ids")
REBALANCE = ("rebalance", "step", "take", "drop", "lock", "unlock")
PULLING = ("pull", "pull held", "reput", "pull answered")
COLORS = {
    **dict.fromkeys(MEMBERSHIP, "#2E91E5"),
    **dict.fromkeys(REBALANCE, "#1CA71C"),
    **dict.fromkeys(PULLING, "#EB663B"),
}
_MQ = re.compile(r"MessageQueue \[topic=([^,]+), brokerName=([^,]+), queueId=(\d+)\]")
DEFAULT_KINDS = (
    "join",
    "heartbeat",
    "notify",
    "find consumer ids",
    "rebalance",
    "step",
    "lock",
    "unlock",
    "pull",
    "pull held",
    "reput",
    "pull answered",
    "channel closed",
    "channel expired",
    "leave",
)


def _ends(event, brokers: Sequence[str]) -> tuple[str, str | None, str]:
    """(from, to or None for a lone event, label) of one log event."""
    kind, who, detail = event.kind, event.who, event.detail
    if kind == "notify":  # detail "from broker-a": the broker tells the consumer
        return detail.removeprefix("from "), who, "NOTIFY_CONSUMER_IDS_CHANGED"
    if kind == "find consumer ids":  # "broker-a: TopicTest, 3 member(s)"
        broker, rest = detail.split(": ", 1)
        return who, broker, f"findConsumerIdList {rest}"
    if kind == "pull":  # "broker-a TopicTest@2 from 100"
        broker, rest = detail.split(" ", 1)
        return who, broker, f"pull {rest}"
    if kind == "pull answered":  # "to c1: TopicTest@2 3 message(s)"
        target, rest = detail.removeprefix("to ").split(": ", 1)
        return who, target, rest
    if kind == "channel closed":  # the broker sees the consumer's socket close
        return detail, who, "channel closed"
    if kind == "heartbeat":  # to every broker: drawn to the first, labelled for all
        return who, brokers[0] if brokers else None, "HEART_BEAT (to every broker)"
    if kind == "step":  # "drop broker-a TopicTest@2"
        return who, None, detail
    if kind in ("lock", "unlock", "take", "drop"):  # one or more "MessageQueue [topic=T, brokerName=b, queueId=2]"
        return who, None, f"{kind} " + ", ".join(f"{b} {t}@{q}" for t, b, q in _MQ.findall(detail))
    if kind == "pull held":  # "TopicTest@2 from c1"
        return who, None, f"hold {detail.split(' from ')[0]}"
    label = f"{kind} {detail}".strip()
    return who, None, label


_PATTERNS = (
    (
        "find consumer ids",
        re.compile(r"findConsumerIdList (?P<topic>.+), (?P<n>\d+) member\(s\)"),
        "findConsumerIdList {topic}, {n} member(s)",
    ),
    ("pull", re.compile(r"pull (?P<queue>\S+) from (?P<offset>\d+)"), "pull {queue} from {offset}"),
    ("pull answered", re.compile(r"(?P<queue>\S+) (?P<n>\d+) message\(s\)"), "{queue} {n} message(s)"),
    ("pull held", re.compile(r"hold (?P<queue>.+)"), "hold {queue}"),
)


def _shown(kind: str, label: str) -> str:
    """``label`` (from :func:`_ends`) as the diagram shows it, in the current language."""
    if language() == "en":
        return label
    for pattern_kind, pattern, message in _PATTERNS:
        match = pattern.fullmatch(label) if kind == pattern_kind else None
        if match:
            return text(message, **match.groupdict())
    if kind in ("heartbeat", "channel closed"):
        return text(label) if kind == "heartbeat" else kind_label(kind)
    if kind == "step":  # "<action> broker-a TopicTest@2", or the action alone
        action = next(
            (a for a in sorted(STEP_ACTIONS, key=len, reverse=True) if label == a or label.startswith(a + " ")), None
        )
        return label if action is None else text(action) + label[len(action) :]
    if label == kind or label.startswith(kind + " "):  # lock, unlock, take, drop and the rest: "<kind> <detail>"
        rest = label[len(kind) + 1 :]
        return kind_label(kind) + (" " + phrase(rest) if rest else "")
    return label  # a Java name (NOTIFY_CONSUMER_IDS_CHANGED) or the log's own detail


def _about_queue(event, broker: str, queue: str) -> bool:
    """Whether ``event`` concerns queue ``queue`` ("TopicTest@2") of ``broker``, or the whole group."""
    kind, who, detail = event.kind, event.who, event.detail
    if kind in ("step", "pull"):
        return f"{broker} {queue}" in detail
    if kind in ("pull held", "pull answered", "reput"):
        return who == broker and queue in detail.replace(",", " ").replace(":", " ").split()
    if kind in ("lock", "unlock", "take", "drop"):  # MessageQueue [topic=T, brokerName=b, queueId=2] (, ...)
        topic, queue_id = queue.split("@")
        return f"topic={topic}, brokerName={broker}, queueId={queue_id}]" in detail
    return True


def sequence_figure(
    result,
    start_ms: int,
    end_ms: int,
    kinds: Iterable[str] = DEFAULT_KINDS,
    actors: Sequence[str] | None = None,
    queue: tuple[str, str] | None = None,
    max_events: int = 80,
    title: str | None = None,
) -> go.Figure:
    """The events of ``result`` between ``start_ms`` and ``end_ms`` (inclusive) as a sequence diagram.

    ``kinds`` picks event kinds; ``actors`` (client ids and broker names) the lifelines, in order
    (default: every consumer in start order, then every broker); an event is kept when all its ends are
    lifelines. ``queue``, a ``(broker, "topic@id")`` pair such as ``("broker-b", "TopicTest@2")``, keeps the
    events about that queue and those about the whole group (heartbeats, notifications, rounds). At most ``max_events``
    rows are drawn (the first ones); the title says when some were left out.
    """
    check_instance(result, "result", SimResult)
    check_number(start_ms, "start_ms")
    check_number(end_ms, "end_ms")
    if start_ms > end_ms:
        raise ValueError(f"start_ms ({start_ms}) must not be after end_ms ({end_ms})")
    if isinstance(max_events, bool) or not isinstance(max_events, int) or not 1 <= max_events <= MAX_EVENTS:
        raise ValueError(f"max_events must be an int in 1..{MAX_EVENTS}, got {max_events!r}")
    kinds = set(check_each(kinds, "kinds", lambda v, label: check_str(v, label)))
    if actors is not None:
        actors = check_each(actors, "actors", lambda v, label: check_str(v, label))
    if queue is not None:
        if not isinstance(queue, (tuple, list)) or len(queue) != 2:
            raise ArgumentTypeError(f"queue must be a (broker, 'topic@id') pair, got {queue!r}"[:200])
        check_str(queue[0], "queue[0]")
        if "@" not in check_str(queue[1], "queue[1]"):
            raise ValueError(f"queue[1] must look like 'topic@id', got {queue[1]!r}"[:200])
    if title is not None:
        title = phrase(check_str(title, "title", empty=True))
    brokers = list(result.scenario.brokers)
    lifelines = list(actors) if actors is not None else [s.client_id for s in result.scenario.consumers] + brokers
    if len(set(lifelines)) != len(lifelines) or not lifelines:
        raise ValueError(f"actors must name distinct lifelines, got {lifelines}")
    column = {name: i for i, name in enumerate(lifelines)}
    rows = []
    for event in result.events:
        if event.time_ms < start_ms or event.kind not in kinds:
            continue
        if event.time_ms > end_ms:
            break
        src, dst, label = _ends(event, [b for b in brokers if b in column])
        if src not in column or (dst is not None and dst not in column):
            continue
        if queue is not None and not _about_queue(event, *queue):
            continue
        rows.append((event, src, dst, label))
    shown = rows[:max_events]
    fig = go.Figure()
    for x in range(len(lifelines)):  # the lifelines
        fig.add_trace(
            go.Scatter(
                x=[x, x],
                y=[-0.8, max(len(shown), 1) - 0.2],
                mode="lines",
                showlegend=False,
                line=dict(color="#BBBBBB", width=1, dash="dot"),
                hoverinfo="skip",
            )
        )
    lone: dict[str, list] = {"x": [], "y": [], "text": [], "color": [], "hover": [], "side": []}
    for y, (event, src, dst, label) in enumerate(shown):
        color = COLORS.get(event.kind, "#555")
        if language() == "en":
            hover = f"{event.time_ms} ms · {event.kind} · {event.who} {event.detail}"
        else:  # the log's detail is English: the label, translated, says the same
            label = _shown(event.kind, label)
            hover = text(
                "{time} ms · {kind} · {who} {label}",
                time=event.time_ms,
                kind=kind_label(event.kind),
                who=event.who,
                label=label,
            )
        if dst is None or dst == src:
            lone["x"].append(column[src])
            lone["y"].append(y)
            lone["text"].append(label)
            lone["color"].append(color)
            lone["hover"].append(hover)
            lone["side"].append("middle left" if column[src] == len(lifelines) - 1 else "middle right")
            continue
        a, b = column[src], column[dst]
        fig.add_annotation(
            x=b,
            y=y,
            ax=a,
            ay=y,
            xref="x",
            yref="y",
            axref="x",
            ayref="y",
            showarrow=True,
            arrowhead=2,
            arrowsize=1.2,
            arrowwidth=1.5,
            arrowcolor=color,
            text="",
        )
        fig.add_annotation(
            x=(a + b) / 2, y=y, text=label, showarrow=False, yshift=8, font=dict(size=10, color=color), hovertext=hover
        )
    fig.add_trace(
        go.Scatter(
            x=lone["x"],
            y=lone["y"],
            mode="markers+text",
            text=lone["text"],
            textposition=lone["side"],
            marker=dict(size=8, color=lone["color"]),
            textfont=dict(size=10),
            showlegend=False,
            hovertext=lone["hover"],
            hoverinfo="text",
        )
    )
    for name, color in (
        ("membership", COLORS["notify"]),
        ("rebalance", COLORS["rebalance"]),
        ("pulling", COLORS["pull"]),
    ):  # a legend entry per part of the loop
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=text(name), line=dict(color=color, width=3)))
    times = [event.time_ms for event, _, _, _ in shown]
    ticks = [y for y, t in enumerate(times) if y == 0 or t != times[y - 1]]
    if title is None:
        left_out = (
            text("; first {n} of {total} events", n=len(shown), total=len(rows)) if len(rows) > len(shown) else ""
        )
        title = text(
            "The run's own log, {start}-{end} ms ({name}, seed {seed}{left_out})",
            start=start_ms,
            end=end_ms,
            name=result.scenario.name,
            seed=result.seed,
            left_out=left_out,
        )
    fig.update_layout(
        title=title,
        height=170 + 26 * max(len(shown), 4),
        xaxis=dict(
            tickvals=list(range(len(lifelines))),
            ticktext=lifelines,
            side="top",
            showgrid=False,
            zeroline=False,
            range=[-0.5, len(lifelines) - 0.2],
        ),
        yaxis=dict(
            autorange="reversed",
            tickvals=ticks,
            ticktext=[text("{t} ms", t=times[y]) for y in ticks],
            showgrid=False,
            zeroline=False,
            title=None,
        ),
        legend=dict(title=text("part of the loop")),
        meta={
            "view": "sequence",
            "lifelines": lifelines,
            "events": [[e.time_ms, e.kind, src, dst, label] for e, src, dst, label in shown],
            "left_out": len(rows) - len(shown),
        },
    )
    return house_style(fig)


__all__ = ["COLORS", "DEFAULT_KINDS", "MEMBERSHIP", "PULLING", "REBALANCE", "sequence_figure"]
