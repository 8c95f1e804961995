"""The sequence diagram is drawn from the run's own log; tracing adds records but changes nothing else."""

import pytest

from rmqlib.sim import ConsumeMode, scenarios, simulate
from rmqlib.viz import sequence_figure

TRACED = ("find consumer ids", "step", "pull", "pull answered", "reput")


@pytest.fixture(scope="module")
def runs():
    sc = scenarios.scale_out(produce_rate_per_queue=2.0, duration_ms=90_000, drain_ms=10_000)
    return simulate(sc, seed=1), simulate(sc, seed=1, trace=True)


def test_tracing_adds_log_records_and_changes_nothing_else(runs):
    plain, traced = runs
    assert traced.summary() == plain.summary()
    assert [e for e in traced.events if e.kind not in TRACED] == plain.events
    assert {e.kind for e in traced.events} >= set(TRACED) and not {e.kind for e in plain.events} & set(TRACED)


def test_the_diagram_shows_the_logged_events_in_order_between_their_ends(runs):
    _, traced = runs
    fig = sequence_figure(
        traced, 61_931, 63_440, actors=["10.0.0.2@1002", "10.0.0.3@1003", "broker-b"], queue=("broker-b", "TopicTest@2")
    )
    rows = fig.layout.meta["events"]
    assert [r[0] for r in rows] == sorted(r[0] for r in rows) and 61_931 <= rows[0][0] and rows[-1][0] <= 63_440
    kinds = [r[1] for r in rows]
    # the whole hand-over of broker-b:2: notify, the old owner's drop, the newcomer's query, steps, first pull
    for kind in ("notify", "step", "find consumer ids", "pull", "pull held"):
        assert kind in kinds
    assert kinds.index("notify") < kinds.index("find consumer ids") < kinds.index("pull")
    assert all("TopicTest@2" in r[4] for r in rows if r[1] in ("step", "pull", "pull answered"))
    notify = next(r for r in rows if r[1] == "notify")
    assert notify[2] == "broker-b" and notify[3] in ("10.0.0.2@1002", "10.0.0.3@1003")
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert len(arrows) == sum(1 for r in rows if r[3] is not None)


def test_left_out_events_are_counted_in_the_title(runs):
    _, traced = runs
    fig = sequence_figure(traced, 61_931, 63_440, max_events=5)
    assert len(fig.layout.meta["events"]) == 5 and fig.layout.meta["left_out"] > 0
    assert "first 5 of" in fig.layout.title.text + "".join(a.text or "" for a in fig.layout.annotations)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(start_ms=10, end_ms=5), ValueError),
        (dict(max_events=0), ValueError),
        (dict(actors=["broker-a", "broker-a"]), ValueError),
    ],
)
def test_bad_arguments_are_named(runs, kwargs, error):
    args = dict(start_ms=0, end_ms=1_000) | kwargs
    with pytest.raises(error, match=next(iter(kwargs)) if "actors" not in kwargs else "actors"):
        sequence_figure(runs[1], **args)


def test_trace_must_be_a_bool():
    with pytest.raises(TypeError, match="trace"):
        simulate(scenarios.steady_state(duration_ms=20_000, drain_ms=5_000), seed=1, trace="yes")


def test_a_graceful_orderly_shutdown_unlocks_before_anyone_locks_the_queue_again():
    run = simulate(
        scenarios.scale_in(
            consume_mode=ConsumeMode.ORDERLY, produce_rate_per_queue=2.0, duration_ms=80_000, drain_ms=10_000
        ),
        seed=1,
        trace=True,
    )
    fig = sequence_figure(
        run, 60_000, 60_600, actors=["10.0.0.4@1004", "10.0.0.2@1002", "broker-b"], queue=("broker-b", "TopicTest@2")
    )
    kinds = [(r[1], r[2]) for r in fig.layout.meta["events"]]
    assert (
        kinds.index(("unlock", "10.0.0.4@1004"))
        < kinds.index(("leave", "10.0.0.4@1004"))
        < kinds.index(("lock", "10.0.0.2@1002"))
        < kinds.index(("pull", "10.0.0.2@1002"))
    )
    # events about other queues are left out
    assert all("queueId=3" not in r[4] or "queueId=2" in r[4] for r in fig.layout.meta["events"])
