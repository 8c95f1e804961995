"""SimResult's window methods: which listener calls started, and which ownership intervals ended or began, in a
span of time on some queues; and the queues on a broker."""

import pytest

from rmqlib.sim import scenarios, simulate


@pytest.fixture(scope="module")
def outage():
    return simulate(scenarios.broker_outage(produce_rate_per_queue=2.0, duration_ms=160_000, drain_ms=20_000), seed=3)


def test_queues_on_a_broker_include_the_retry_topics_and_a_topic_narrows_them(outage):
    on_b = outage.queues_on("broker-b")
    assert on_b and all("brokerName=broker-b," in q for q in on_b)
    assert any(q.startswith("MessageQueue [topic=%RETRY%") for q in on_b)
    topic = outage.queues_on("broker-b", "TopicTest")
    assert topic == [q for q in outage.queues if "brokerName=broker-b," in q] and len(topic) == 4
    assert outage.queues_on("broker-z") == [] == outage.queues_on("broker-b", "Nope")


@pytest.mark.parametrize("window", [(0, None), (70_000, 130_000), (130_000, None), (70_000, 70_000)])
def test_a_window_takes_exactly_what_falls_in_it(outage, window):
    since, until = window
    end = outage.scenario.end_ms + 1 if until is None else until
    queues = outage.queues_on("broker-b")
    calls = outage.listener_calls(queues, since, until)
    every_call = [b for q in queues for b in outage.consumption.get(q, ())]
    assert sorted(calls) == sorted(b for b in every_call if since <= b.start_ms < end)
    intervals = [i for q in queues for i in outage.ownership.get(q, ())]
    released, taken = outage.released(queues, since, until), outage.taken(queues, since, until)
    assert sorted(released) == sorted(i for i in intervals if since <= i.end_ms < end)
    assert sorted(taken) == sorted(i for i in intervals if since <= i.start_ms < end)
    if since == until:
        assert calls == released == taken == []


def test_the_outage_shows_in_the_windows(outage):
    down, up = outage.scenario.outages[0].down_ms, outage.scenario.outages[0].up_ms
    on_b = outage.queues_on("broker-b", "TopicTest")
    assert outage.listener_calls(on_b, down + 1_000, up) == []  # nothing of broker-b is read while it is away
    assert {i.queue for i in outage.released(on_b, down, up)} == set(on_b)  # every consumer lets its queues go
    assert {i.queue for i in outage.taken(on_b, up)} == set(on_b)  # and they are taken again after the return
    assert len(outage.listener_calls()) == sum(map(len, outage.consumption.values()))  # default: every queue


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda r: r.listener_calls("MessageQueue [topic=TopicTest, brokerName=broker-b, queueId=0]"),
            TypeError,
            "queues must be a sequence",
        ),
        (lambda r: r.released(["nope"]), ValueError, "queues must be queues of this run, got 'nope'"),
        (lambda r: r.taken(since_ms=-1), ValueError, "since_ms"),
        (lambda r: r.listener_calls(until_ms=1.5), TypeError, "until_ms"),
        (lambda r: r.queues_on(None), TypeError, "broker"),
        (lambda r: r.queues_on("broker-b", 3), TypeError, "topic"),
    ],
)
def test_bad_arguments_are_refused_by_name(outage, call, error, message):
    with pytest.raises(error, match=message):
        call(outage)
