"""simulate/sweep as a user calls them: determinism, executors, validation, the event log."""

from concurrent.futures import ProcessPoolExecutor

import pytest

from rmqlib.protocol import MessageModel
from rmqlib.sim import ConsumeMode, ConsumerSpec, LeaveKind, Scenario, scenarios, simulate, sweep
from rmqlib.sim.result import EVENT_KINDS

SHORT = dict(duration_ms=20_000, drain_ms=20_000)


def test_same_seed_same_result_byte_for_byte():
    scenario = scenarios.scale_out(duration_ms=80_000, drain_ms=20_000, consume_time_dist="exponential")
    a, b = simulate(scenario, seed=7), simulate(scenario, seed=7)
    assert a.events == b.events and a.delivered == b.delivered and a.summary() == b.summary()
    assert list(a.latencies_ms) == list(b.latencies_ms)


def test_seed_drives_start_jitter_and_consume_times():
    scenario = scenarios.steady_state(**SHORT, consume_time_dist="exponential")
    runs = [simulate(scenario, seed=s) for s in range(3)]
    joins = {tuple(e.time_ms for e in r.events_of("join")) for r in runs}
    assert len(joins) == 3
    assert all(0 <= t <= scenario.start_jitter_ms for js in joins for t in js)
    assert len({tuple(r.latencies_ms[:50]) for r in runs}) == 3
    assert all(r.lost == [] for r in runs)


def test_process_pool_sweep_equals_in_process_sweep():
    base = scenarios.crash(duration_ms=70_000, drain_ms=30_000)
    inline = sweep(base, "rebalance_interval_ms", [5_000, 20_000], seeds=[1, 2], progress=False)
    with ProcessPoolExecutor(max_workers=2) as pool:
        pooled = sweep(base, "rebalance_interval_ms", [5_000, 20_000], seeds=[1, 2], executor=pool, progress=False)
    assert pooled == inline
    assert [(r["rebalance_interval_ms"], r["seed"]) for r in inline] == [
        (5_000, 1),
        (5_000, 2),
        (20_000, 1),
        (20_000, 2),
    ]


def test_sweep_labels_strategies_by_name_and_rejects_bad_grids():
    rows = sweep(scenarios.steady_state(**SHORT), "strategy", ["AVG", "CONSISTENT_HASH"], seeds=[1], progress=False)
    assert [r["strategy"] for r in rows] == ["AVG", "CONSISTENT_HASH"]
    with pytest.raises(ValueError, match="unknown Scenario field"):
        sweep(scenarios.steady_state(), "rebalance_every", [1], progress=False)
    with pytest.raises(ValueError, match="values"):
        sweep(scenarios.steady_state(), "rebalance_interval_ms", [], progress=False)
    with pytest.raises(ValueError, match="rebalance_interval_ms"):
        sweep(scenarios.steady_state(), "rebalance_interval_ms", [0], progress=False)


def test_sweep_shows_a_progress_bar_unless_silenced(capsys):
    sweep(scenarios.steady_state(**SHORT), "rebalance_interval_ms", [20_000], seeds=[1], progress=True)
    assert "steady_state" in capsys.readouterr().err
    sweep(scenarios.steady_state(**SHORT), "rebalance_interval_ms", [20_000], seeds=[1], progress=False)
    assert capsys.readouterr().err == ""


def test_event_log_is_time_ordered_and_covers_the_rebalance_story():
    result = simulate(
        scenarios.orderly_crash(
            **SHORT, consumers=(ConsumerSpec("a@1"), ConsumerSpec("b@1", leave_ms=15_000, leave="crash"))
        ),
        seed=1,
    )
    times = [e.time_ms for e in result.events]
    assert times == sorted(times)
    kinds = {e.kind for e in result.events}
    assert kinds <= set(EVENT_KINDS)
    assert {
        "join",
        "heartbeat",
        "notify",
        "rebalance",
        "lock",
        "take",
        "pull held",
        "pull woken",
        "leave",
        "channel closed",
    } <= kinds


@pytest.mark.parametrize(
    "changes, field",
    [
        (dict(topics={}), "topics"),
        (dict(topics={"T": 0}), "topics"),
        (dict(brokers=()), "brokers"),
        (dict(consumers=()), "consumers"),
        (dict(consumers=(ConsumerSpec("a", leave_ms=10**9, leave="crash"),)), "consumers"),
        (dict(consumers=(ConsumerSpec("a"), ConsumerSpec("a"))), "consumers"),
        (dict(rebalance_interval_ms=0), "rebalance_interval_ms"),
        (dict(heartbeat_interval_ms=-1), "heartbeat_interval_ms"),
        (dict(strategy="NOPE"), "strategy"),
        (dict(strategy=42), "strategy"),
        (dict(consume_mode="LAZY"), "consume_mode"),
        (dict(consume_mode=3), "consume_mode"),
        (dict(message_model="clustering"), "message_model"),
        (dict(message_model=MessageModel.BROADCASTING, consume_mode=ConsumeMode.POP), "consume_mode"),
        (dict(produce_rate_per_queue=-1), "produce_rate_per_queue"),
        (dict(duration_ms=0), "duration_ms"),
        (dict(consume_mode="POP", strategy="CONSISTENT_HASH"), "strategy"),
    ],
)
def test_bad_scenarios_are_rejected_before_anything_runs(changes, field):
    with pytest.raises(ValueError, match=f"Scenario.{field}"):
        Scenario(**changes)


def test_scenario_takes_the_enums_or_their_names_and_keeps_the_members():
    by_name = Scenario(
        message_model="BROADCASTING",
        consume_mode="ORDERLY",
        consumers=(ConsumerSpec("a@1", leave_ms=5_000, leave="host_loss"),),
    )
    by_member = Scenario(
        message_model=MessageModel.BROADCASTING,
        consume_mode=ConsumeMode.ORDERLY,
        consumers=(ConsumerSpec("a@1", leave_ms=5_000, leave=LeaveKind.HOST_LOSS),),
    )
    assert by_name == by_member.replace(strategy=by_name.strategy)  # a strategy object equals only itself
    assert by_name.message_model is MessageModel.BROADCASTING and by_name.consume_mode is ConsumeMode.ORDERLY
    assert by_name.consumers[0].leave is LeaveKind.HOST_LOSS
    assert ConsumerSpec("a@1", leave="CRASH").leave is LeaveKind.CRASH  # the member's name works too
    assert Scenario().consume_mode == "CONCURRENT" and Scenario().message_model == "CLUSTERING"  # str-valued


@pytest.mark.parametrize(
    "leave, error", [("explode", ValueError), ("", ValueError), (None, TypeError), (LeaveKind, TypeError)]
)
def test_a_bad_leave_kind_is_refused_naming_the_field(leave, error):
    with pytest.raises(error, match=r"^ConsumerSpec\.leave must be .*shutdown, crash, host_loss"):
        ConsumerSpec("a@1", leave_ms=5_000, leave=leave)


def test_a_leave_event_names_its_kind_as_plain_text():
    result = simulate(
        scenarios.crash(**SHORT, consumers=(ConsumerSpec("a@1"), ConsumerSpec("b@1", leave_ms=15_000, leave="crash"))),
        seed=1,
    )
    (leave,) = result.events_of("leave")
    assert leave.detail == "crash" and f"{leave.detail}" == "crash" and str(leave.detail) == "crash"
    assert "detail='crash'" in repr(leave)  # a plain str, not the LeaveKind member, as a printed event shows
    assert {type(e.detail) for e in result.events} == {str}


def test_ready_made_scenarios_take_overrides():
    for name, make in scenarios.ALL.items():
        scenario = make(rebalance_interval_ms=7_000)
        assert scenario.name == name and scenario.rebalance_interval_ms == 7_000
    with pytest.raises(ValueError, match="seed"):
        simulate(scenarios.steady_state(), seed="1")


def test_every_held_and_woken_pull_is_in_the_event_log():
    result = simulate(scenarios.steady_state(**SHORT), seed=1)
    assert len(result.events_of("pull held")) == result.counters["held"] > 0
    assert len(result.events_of("pull woken")) > 0
