"""Every Scenario field and the simulator's entry points refuse bad input by name, quickly, before a run starts."""

import dataclasses
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import TooSlow, time_limit

from rmqlib.sim import (
    BrokerOutage,
    ConsumerSpec,
    Scenario,
    TopicChange,
    scenarios,
    simulate,
    sweep,
    sweep_stats,
    sweep_values,
)

FIELDS = [f.name for f in dataclasses.fields(Scenario)]
# a field whose value constrains others: an error may name the field it invalidated instead
DEPENDS = {
    "duration_ms": {
        "consumers",
        "produce_start_ms",
        "produce_rate_per_queue",
        "topic_changes",
        "outages",
        "rebalance_interval_ms",
        "heartbeat_interval_ms",
        "offset_persist_interval_ms",
        "produce_batch_ms",
        "long_polling_check_ms",
        "channel_scan_ms",
    },
    "drain_ms": {
        "consumers",
        "topic_changes",
        "outages",
        "duration_ms",
        "rebalance_interval_ms",
        "heartbeat_interval_ms",
        "offset_persist_interval_ms",
        "produce_batch_ms",
        "long_polling_check_ms",
        "channel_scan_ms",
    },
    "start_jitter_ms": {"consumers"},
    "brokers": {"outages"},
    "topics": {"produce_rate_per_queue"},
    "consume_mode": {"strategy"},
    "message_model": {"consume_mode"},
    "produce_start_ms": {"produce_rate_per_queue"},
    "long_polling": {"short_polling_ms", "long_polling_check_ms"},
}
BAD = st.sampled_from(
    [
        None,
        "x",
        "",
        True,
        False,
        -1,
        0,
        1.5,
        math.nan,
        math.inf,
        -math.inf,
        10**18,
        [],
        {},
        (),
        "10",
        "NO",
        object(),
        "%RETRY%x",
        "a@b",
        "名字",
        2**64,
    ]
)


def _build(**fields):
    with time_limit(10.0):
        return Scenario(**fields)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(FIELDS), value=BAD)
def test_a_bad_value_in_any_field_is_refused_naming_that_field(field, value):
    try:
        _build(**{field: value})
    except (ValueError, TypeError) as error:
        named = re.match(r"Scenario\.(\w+)", str(error))
        assert named, f"{field}={value!r}: the error does not name a Scenario field: {error}"
        assert named[1] == field or named[1] in DEPENDS.get(field, set()), (
            f"{field}={value!r}: blamed on {named[1]}: {error}"
        )
    except TooSlow:
        pytest.fail(f"{field}={value!r}: validating took more than 10 s")
    else:  # accepted: then it must be a value the field can really take, and a run must be allowed to start
        assert not (isinstance(value, float) and not math.isfinite(value)), f"{field} accepted {value!r}"


@pytest.mark.parametrize(
    "changes, field",
    [
        (dict(drain_ms=1_000_000_000_000), "drain_ms"),
        (dict(duration_ms=1_000_000_000_000), "duration_ms"),
        (dict(produce_rate_per_queue=float("inf")), "produce_rate_per_queue"),
        (dict(consume_time_ms=float("inf")), "consume_time_ms"),
        (dict(produce_rate_per_queue=1e9), "produce_rate_per_queue"),
        (dict(retry_queue_nums=100_000), "retry_queue_nums"),
        (dict(long_polling="no"), "long_polling"),
        (dict(real_time_notify=None), "real_time_notify"),
        (dict(slave_read_enable="yes"), "slave_read_enable"),
        (dict(slave_read_enable=True), "slave_read_enable"),  # crash has no slave to read from
        (dict(pull_batch_size=1025), "pull_batch_size"),
        (dict(order_keys=-1), "order_keys"),
        (dict(order_keys=10**7), "order_keys"),
        (dict(consumer_group="G@x"), "consumer_group"),
        (dict(topics={"a@b": 2}), "topics"),
        (dict(rebalance_interval_ms=1, duration_ms=80_000_000, produce_rate_per_queue=0.001), "rebalance_interval_ms"),
        (dict(outages=(BrokerOutage("broker-a", 10_000, 5_000),)), "outages"),
        (dict(topic_changes=(TopicChange(10_000, "broker-a", 4, 2_000),)), "topic_changes"),
    ],
)
def test_the_reported_reproducers_are_refused_with_the_limit(changes, field):
    with pytest.raises(ValueError, match=rf"^Scenario\.{field}:"):
        scenarios.crash(**changes)


def test_a_broadcasting_run_is_bounded_by_its_deliveries_not_only_its_messages():
    """Every member consumes every message, and the run records each delivery: 1,024 members of a run of 10,000
    messages would record ten million."""
    members = tuple(ConsumerSpec(cid) for cid in scenarios.client_ids(1_024))
    fields = dict(consumers=members, produce_rate_per_queue=10.0, duration_ms=125_000)  # 8 queues: 10,000 messages
    assert scenarios.steady_state(**fields).expected_messages() <= 10_000  # far inside the messages' own limit
    with pytest.raises(ValueError, match=r"^Scenario\.produce_rate_per_queue: .*deliveries"):
        scenarios.steady_state(message_model="BROADCASTING", **fields)
    scenarios.steady_state(**fields)  # the same group clustering: each message delivered once


def test_ready_made_scenarios_take_any_field_including_name():
    assert scenarios.crash(name="x").name == "x"
    assert scenarios.topic_grows(name="y", drain_ms=10_000).drain_ms == 10_000


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(scenario="crash"), "scenario"),
        (dict(seed="1"), "seed"),
        (dict(seed=True), "seed"),
        (dict(trace=1), "trace"),
    ],
)
def test_simulate_refuses_bad_arguments_by_name(kwargs, match):
    args = {"scenario": scenarios.crash(), "seed": 0, **kwargs}
    with pytest.raises((TypeError, ValueError), match=match):
        simulate(**args)


def test_sweep_helpers_name_what_is_missing():
    rows = [{"a": 1, "b": 2}]
    with pytest.raises(ValueError, match="y: no column 'z'"):
        sweep_stats(rows, "a", "z")
    with pytest.raises(ValueError, match="group: no column 'g'"):
        sweep_values(rows, "a", "b", group="g")
    with pytest.raises(TypeError, match="must hold numbers"):
        sweep_stats([{"a": 1, "b": "fast"}], "a", "b")
    with pytest.raises(ValueError, match="unknown Scenario field"):
        sweep(scenarios.crash(), "no_such_field", [1], seeds=[0], progress=False)
    with pytest.raises(TypeError, match="progress"):
        sweep(scenarios.crash(), "drain_ms", [1_000], seeds=[0], progress="yes")
