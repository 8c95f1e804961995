"""Bad input to rmqlib.allocation, rmqlib.viz and the ``rmqlib`` command.

Every public function either answers or refuses with a ValueError/TypeError whose message names the
argument it was given, within a time bound (a SIGALRM per call); never another exception, never a hang.
On the command line a refusal is exactly one line on stderr, exit code 2, no traceback; the command also
runs as a subprocess under a memory limit.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import math
import resource
import subprocess
import sys

import plotly.graph_objects as go
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from support import time_limit

from rmqlib import allocation as alloc
from rmqlib import viz
from rmqlib.cli import main
from rmqlib.strategies import (
    AllocateMachineRoomNearby,
    AllocateMessageQueueAveragely,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueConsistentHash,
    PrefixMachineRoomResolver,
)
from rmqlib.viz import style

SECONDS = 20.0  # catches a hang; the limits keep every call here to about a second on the development machine
CLI_MEMORY = 1536 * 2**20  # address space for a command-line subprocess
# no explain phase: it traces every line, which would trip the per-call alarm while it reports a failure
FAST = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
)


def attempt(fn, argument: str, **kwargs):
    """``fn(**kwargs)`` within the time limit: ``(True, result)``, or ``(False, error)`` for a ValueError or
    TypeError that names ``argument``. Anything else (another exception, TooSlow) fails the test."""
    with time_limit(SECONDS):
        try:
            return True, fn(**kwargs)
        except (ValueError, TypeError) as error:
            assert argument in str(error), f"{fn.__name__}({argument}=...) raised {error!r}, not naming {argument}"
            return False, error


# --------------------------------------------------------------------------- values

NASTY_TEXT = ["", " ", "é", "😀", "\n", "a,a", "x" * 300, "MACHINE_ROOM_NEARBY-" * 40 + "AVG", "\udcff"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 12),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 10**6, 10**9, 2**31, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 2.0]),
    st.text(max_size=6),
    st.sampled_from(NASTY_TEXT),
    st.binary(max_size=3),
)
junk = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.tuples(scalars, scalars),
    st.dictionaries(st.text(max_size=3), scalars, max_size=2),
    st.just(object()),
    st.just(range(3)),
)

QUEUES = alloc.make_queues("T", ["broker-a", "broker-b"], 3)
mqs = st.lists(st.sampled_from(QUEUES), max_size=8)
cid_text = st.sampled_from(["10.0.0.1@1", "10.0.0.2@2", "b", "a", "é", "😀"])
cid_lists = st.lists(cid_text, min_size=1, max_size=5)
allocations = st.dictionaries(cid_text, mqs, max_size=4)
mixed_lists = st.lists(st.one_of(cid_text, st.sampled_from(QUEUES), scalars), max_size=4)
strategies_ = st.sampled_from(
    [
        AllocateMessageQueueAveragely(),
        AllocateMessageQueueConsistentHash(3),
        AllocateMessageQueueConsistentHash(10**5),
        AllocateMessageQueueByConfig(QUEUES * 10),
        AllocateMachineRoomNearby(AllocateMessageQueueConsistentHash(2), PrefixMachineRoomResolver("-")),
    ]
)
names = st.sampled_from(
    ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "MACHINE_ROOM_NEARBY-AVG", "MACHINE_ROOM", "NOPE", ""]
)
counts = st.one_of(st.integers(-2, 20), st.sampled_from([0, 64, 65, 128, 129, 1000, 10**5, 10**8]))
count_lists = st.one_of(st.lists(counts, max_size=6), st.just(range(1, 201)), st.just([]))
brokers = st.one_of(st.lists(st.sampled_from(["broker-a", "broker-b", "c", ""]), max_size=3), st.just("ab"))
room_counts = st.lists(st.integers(-2, 20), max_size=4)


def candidates(plausible):
    """Right-looking values and junk, one argument at a time."""
    return st.one_of(plausible, junk)


# --------------------------------------------------------------------------- specs: function, valid defaults,
# and what to try for each argument

SAMPLE_ALLOCATION = {"10.0.0.1@1": QUEUES[:3], "10.0.0.2@2": QUEUES[3:]}

ALLOCATION_SPECS = {
    "allocate_group": (
        alloc.allocate_group,
        dict(strategy=AllocateMessageQueueAveragely(), mq_all=QUEUES, cid_all=["a", "b"]),
        dict(
            strategy=strategies_,
            mq_all=mqs,
            cid_all=st.one_of(cid_lists, mixed_lists),
            consumer_group=st.text(max_size=4),
        ),
    ),
    "make_queues": (alloc.make_queues, {}, dict(topic=st.text(max_size=4), brokers=brokers, queues_per_broker=counts)),
    "make_cids": (alloc.make_cids, dict(count=3), dict(count=counts, prefix=st.text(max_size=4))),
    "spread_queues": (
        alloc.spread_queues,
        dict(count=3),
        dict(count=counts, brokers=brokers, topic=st.text(max_size=4)),
    ),
    "random_cids": (alloc.random_cids, dict(count=3, seed=1), dict(count=counts, seed=st.integers())),
    "queues_per_consumer": (
        alloc.queues_per_consumer,
        dict(allocation=SAMPLE_ALLOCATION),
        dict(allocation=allocations),
    ),
    "idle_consumers": (alloc.idle_consumers, dict(allocation=SAMPLE_ALLOCATION), dict(allocation=allocations)),
    "imbalance": (alloc.imbalance, dict(allocation=SAMPLE_ALLOCATION), dict(allocation=allocations)),
    "owners": (alloc.owners, dict(allocation=SAMPLE_ALLOCATION), dict(allocation=allocations)),
    "moved_queues": (
        alloc.moved_queues,
        dict(before=SAMPLE_ALLOCATION, after={}),
        dict(before=allocations, after=allocations),
    ),
    "unassigned_queues": (
        alloc.unassigned_queues,
        dict(allocation=SAMPLE_ALLOCATION, mq_all=QUEUES),
        dict(allocation=allocations, mq_all=st.one_of(mqs, mixed_lists)),
    ),
    "overlapping_queues": (alloc.overlapping_queues, dict(allocation=SAMPLE_ALLOCATION), dict(allocation=allocations)),
    "allocate_topics": (
        alloc.allocate_topics,
        dict(strategy=AllocateMessageQueueAveragely(), topics={"T": QUEUES}, cid_all=["a"]),
        dict(strategy=strategies_, topics=st.dictionaries(st.text(max_size=2), mqs, max_size=2), cid_all=cid_lists),
    ),
    "multi_topic_totals": (
        alloc.multi_topic_totals,
        dict(strategy=AllocateMessageQueueAveragely(), topics={"T": QUEUES}, cid_all=["a"]),
        dict(strategy=strategies_, cid_all=st.one_of(cid_lists, mixed_lists)),
    ),
    "moved_on_scale_out": (
        alloc.moved_on_scale_out,
        dict(strategy=AllocateMessageQueueAveragely(), mq_all=QUEUES, consumers=2),
        dict(consumers=counts, mq_all=mqs),
    ),
    "imbalance_spread": (
        alloc.imbalance_spread,
        dict(consumers=3, queues=6, vnode_counts=[1, 5]),
        dict(consumers=counts, queues=counts, vnode_counts=count_lists, seeds=count_lists, brokers=brokers),
    ),
    "random_assignment_imbalance": (
        alloc.random_assignment_imbalance,
        dict(consumers=3, queues=6),
        dict(consumers=counts, queues=counts, seeds=count_lists),
    ),
}


def _small_result():
    from rmqlib.sim import scenarios, simulate

    return simulate(scenarios.crash(), seed=1, trace=True)


_RESULT: list = []


def small_result():
    if not _RESULT:
        _RESULT.append(_small_result())
    return _RESULT[0]


def use_language(lang):
    """``viz.use_language(lang)``, then English again: a drawn language must not leak into the next example."""
    try:
        viz.use_language(lang)
    finally:
        viz.use_language("en")


def has_entry(message, lang="zh"):
    return viz.i18n.has_entry(message, lang)


VIZ_SPECS = {
    "use_language": (use_language, dict(lang="en"), dict(lang=st.one_of(scalars, st.sampled_from(["zh", "ZH", "fr"])))),
    "has_entry": (
        has_entry,
        dict(message="consumers"),
        dict(message=st.one_of(scalars, st.just("queues")), lang=st.one_of(scalars, st.just("zh"))),
    ),
    "color_of": (viz.color_of, dict(index=0), dict(index=counts)),
    "consumer_colors": (viz.consumer_colors, dict(cids=["a"]), dict(cids=st.one_of(cid_lists, mixed_lists))),
    "queue_label": (viz.queue_label, dict(mq=QUEUES[0]), dict(mq=st.sampled_from(QUEUES), mq_all=mqs)),
    "allocation_figure": (
        viz.allocation_figure,
        dict(allocation=SAMPLE_ALLOCATION),
        dict(
            allocation=allocations,
            cids=st.one_of(cid_lists, mixed_lists),
            mq_all=mqs,
            title=st.text(max_size=4),
            label=st.text(max_size=4),
        ),
    ),
    "queues_per_consumer_figure": (
        viz.queues_per_consumer_figure,
        dict(allocation=SAMPLE_ALLOCATION),
        dict(allocation=allocations, cids=cid_lists),
    ),
    "allocation_view": (
        viz.allocation_view,
        {},
        dict(
            strategy=names,
            queues=counts,
            consumers=counts,
            virtual_nodes=counts,
            brokers=brokers,
            topic=st.text(max_size=4),
        ),
    ),
    "ring_figure": (
        viz.ring_figure,
        dict(cids=["a", "b"], virtual_nodes=3, mq_all=QUEUES),
        dict(cids=cid_lists, virtual_nodes=counts, mq_all=mqs),
    ),
    "ring_view": (viz.ring_view, {}, dict(consumers=counts, queues=counts, virtual_nodes=counts, brokers=brokers)),
    "imbalance_vs_vnodes_figure": (
        viz.imbalance_vs_vnodes_figure,
        dict(consumers=3, queues=6, vnode_counts=[1, 5]),
        dict(consumers=counts, queues=counts, vnode_counts=count_lists, seeds=count_lists),
    ),
    "moved_queues_figure": (
        viz.moved_queues_figure,
        dict(queues=8, max_consumers=4),
        dict(queues=counts, max_consumers=counts, virtual_nodes=counts),
    ),
    "multi_topic_figure": (
        viz.multi_topic_figure,
        dict(strategy=AllocateMessageQueueAveragely(), topics={"T": QUEUES}, cids=["a"]),
        dict(
            strategy=strategies_,
            topics=st.dictionaries(st.text(max_size=2), mqs, max_size=2),
            cids=st.one_of(cid_lists, mixed_lists),
        ),
    ),
    "machine_room_layout": (
        viz.machine_room_layout,
        dict(brokers=(1, 1, 1), consumers=(1, 0, 1)),
        dict(
            brokers=room_counts,
            consumers=room_counts,
            queues_per_broker=counts,
            rooms=st.lists(st.sampled_from(["IDC1", "IDC2", "IDC3", ""]), max_size=4),
        ),
    ),
    "machine_room_view": (
        viz.machine_room_view,
        {},
        dict(
            strategy=names,
            brokers=room_counts,
            consumers=room_counts,
            queues_per_broker=counts,
            consumer_idcs=st.one_of(st.just("IDC1"), cid_lists),
        ),
    ),
    "allocation_panel": (
        viz.allocation_panel,
        {},
        dict(strategies=st.lists(names, max_size=3), max_queues=counts, max_consumers=counts),
    ),
    "ring_panel": (viz.ring_panel, {}, dict(max_consumers=counts, max_queues=counts, max_virtual_nodes=counts)),
    "machine_room_panel": (
        viz.machine_room_panel,
        {},
        dict(
            strategies=st.lists(names, max_size=3),
            brokers=room_counts,
            consumers=room_counts,
            max_brokers=counts,
            max_consumers=counts,
        ),
    ),
    "allocation_frames_figure": (
        viz.allocation_frames_figure,
        dict(queues=4, consumer_counts=(1, 2)),
        dict(queues=counts, consumer_counts=count_lists, virtual_nodes=counts),
    ),
    "ring_frames_figure": (
        viz.ring_frames_figure,
        dict(vnode_counts=(0, 2)),
        dict(consumers=counts, queues=counts, vnode_counts=count_lists),
    ),
    "machine_room_frames_figure": (
        viz.machine_room_frames_figure,
        dict(strategies=["MACHINE_ROOM"]),
        dict(strategies=st.lists(names, max_size=3), brokers=room_counts),
    ),
    "process_queue_frames_figure": (
        viz.process_queue_frames_figure,
        dict(messages=3),
        dict(messages=counts, seed=st.integers(), slow=counts),
    ),
    "process_queue_view": (
        viz.process_queue_view,
        {},
        dict(messages=counts, seed=st.integers(), step=counts, slow=counts),
    ),
    "process_queue_panel": (
        viz.process_queue_panel,
        dict(messages=4, max_messages=8),
        dict(messages=counts, max_messages=counts, seed=counts, slow=counts),
    ),
    "ack_order": (
        viz.ack_order,
        dict(messages=4),
        dict(messages=counts, seed=st.integers(), first_offset=counts, slow_offset=counts),
    ),
    "process_queue_steps": (viz.process_queue_steps, dict(messages=4), dict(messages=counts, first_offset=counts)),
    "frames_figure": (
        viz.frames_figure,
        dict(steps=[(1, go.Figure())], slider_label="x"),
        dict(
            steps=st.lists(st.tuples(st.integers(0, 3), st.just(go.Figure())), max_size=3),
            slider_label=st.text(max_size=3),
            height=counts,
        ),
    ),
    "short_queue": (
        viz.short_queue,
        dict(queue="q"),
        dict(queue=st.one_of(st.just(str(QUEUES[0])), st.just("MessageQueue [x]"))),
    ),
    "handover_figure": (viz.handover_figure, dict(replay=None, index=0), dict(replay=junk, index=counts)),
    "sequence_figure": (
        viz.sequence_figure,
        dict(result=None, start_ms=0, end_ms=1000),
        dict(result=junk, max_events=counts, kinds=st.lists(st.sampled_from(["pull", "join"]))),
    ),
    "ownership_timeline_figure": (viz.ownership_timeline_figure, dict(result=None), dict(result=junk)),
    "lock_timeline_figure": (viz.lock_timeline_figure, dict(result=None), dict(result=junk)),
    "load_figure": (
        viz.load_figure,
        dict(result=None),
        dict(result=junk, events=st.lists(st.sampled_from(["pop failed", "join"]))),
    ),
    "latency_figure": (viz.latency_figure, dict(results=None), dict(results=junk)),
    "dashboard_figure": (viz.dashboard_figure, dict(result=None), dict(result=junk)),
    "backlog_figure": (
        viz.backlog_figure,
        dict(results=None),
        dict(results=junk, step_ms=counts, by_member=st.one_of(st.booleans(), junk)),
    ),
    "sweep_figure": (
        viz.sweep_figure,
        dict(rows=[{"a": 1, "b": 2, "seed": 0}], x="a", y="b"),
        dict(
            rows=st.lists(st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 3)), max_size=3),
            x=st.text(max_size=2),
            y=st.sampled_from(["a", "b"]),
            kind=st.text(max_size=3),
        ),
    ),
    "retry_figure": (
        viz.retry_figure,
        dict(timelines={}),
        dict(timelines=st.dictionaries(st.text(max_size=2), mixed_lists, max_size=2)),
    ),
    "moved_queues (handover)": (viz.moved_queues, dict(result=None), dict(result=junk)),
    "fit_title": (style.fit_title, dict(text="a: b"), dict(text=st.text(max_size=200), width_px=counts)),
    "legend_rows": (
        style.legend_rows,
        dict(names=["a"]),
        dict(names=cid_lists, title=st.text(max_size=3), width_px=counts),
    ),
    "house_style": (style.house_style, dict(fig=go.Figure()), dict(fig=st.just(go.Figure()), width_px=counts)),
    "queue_handover_figure": (viz.queue_handover_figure, dict(result=None), dict(result=junk)),
    "replica_locks_figure": (
        viz.replica_locks_figure,
        {},
        dict(
            master_back_ms=st.one_of(counts, st.sampled_from([25_001, 28_000, 120_000, 120_001])),
            setups=st.one_of(
                st.dictionaries(names, st.tuples(counts, st.booleans()), max_size=9),
                st.dictionaries(names, junk, max_size=2),
            ),
            enable_slave_acting_master=st.booleans(),
            end_ms=st.one_of(counts, st.sampled_from([48_999, 49_000, 3_600_000, 3_600_001])),
            title=st.text(max_size=5),
        ),
    ),
    "replica_locks_view": (
        viz.replica_locks_view,
        {},
        dict(
            master_away=st.one_of(st.sampled_from(["3 s", "for good", "4 s", ""]), names), acting_master=st.booleans()
        ),
    ),
    "replica_locks_panel": (
        viz.replica_locks_panel,
        {},
        dict(master_away=st.one_of(st.sampled_from(["10 s", "60 s", "x"]), names), acting_master=st.booleans()),
    ),
}

# arguments that take a SimResult or a HandoverReplay: junk only for those, the real thing for the rest
NEEDS_RESULT = {
    "sequence_figure",
    "ownership_timeline_figure",
    "lock_timeline_figure",
    "load_figure",
    "moved_queues (handover)",
    "queue_handover_figure",
}


def check_answer(name: str, kwargs: dict, result) -> None:
    """What a successful call must give: the right count, no silent duplicates, a figure or a panel."""
    if name in ("random_cids", "make_cids"):
        assert len(result) == kwargs.get("count", 3) and len(set(result)) == len(result)
    elif name == "spread_queues":
        assert len(result) == kwargs["count"] and len(set(result)) == len(result)
    elif name == "make_queues":
        assert (
            len(result)
            == len(set(result))
            == len(kwargs.get("brokers", ["broker-a"])) * kwargs.get("queues_per_broker", 4)
        )
    elif name.endswith(("_figure", "_view")):
        assert isinstance(result, go.Figure)
    elif name.endswith("_panel"):
        assert isinstance(result, viz.Panel) and result.error is None, result.error


def run_spec(specs: dict, name: str, data) -> None:
    fn, defaults, tries = specs[name]
    argument = data.draw(st.sampled_from(sorted(tries)), label="argument")
    kwargs = dict(defaults)
    if name in NEEDS_RESULT and argument != "result":
        kwargs["result"] = small_result()
    if name == "backlog_figure" and argument != "results":  # its other arguments are checked against a run
        kwargs["results"] = small_result()
    if name == "handover_figure" and argument != "replay":
        from rmqlib.client.handover import replay_handover

        kwargs["replay"] = replay_handover()
    kwargs[argument] = data.draw(candidates(tries[argument]), label=argument)
    ok, answer = attempt(fn, argument, **kwargs)
    if ok:
        check_answer(name, kwargs, answer)


@pytest.mark.parametrize("name", sorted(ALLOCATION_SPECS))
@FAST
@given(data=st.data())
def test_allocation_functions_answer_or_refuse_naming_the_argument(name, data):
    run_spec(ALLOCATION_SPECS, name, data)


@pytest.mark.parametrize("name", sorted(VIZ_SPECS))
@settings(FAST, max_examples=6)
@given(data=st.data())
def test_viz_functions_answer_or_refuse_naming_the_argument(name, data):
    run_spec(VIZ_SPECS, name, data)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: alloc.spread_queues(3, []), "brokers"),
        (lambda: viz.allocation_view(brokers=()), "brokers"),
        (lambda: alloc.imbalance_spread(4, 8, [1], brokers=[]), "brokers"),
        (lambda: alloc.random_cids(math.nan, 1), "count"),
        (lambda: alloc.queues_per_consumer([]), "allocation"),
        (lambda: viz.imbalance_vs_vnodes_figure(vnode_counts=[]), "vnode_counts"),
        (lambda: viz.imbalance_vs_vnodes_figure(seeds=[]), "seeds"),
        (lambda: viz.machine_room_view(brokers=(1, 1)), "brokers"),
        (lambda: viz.machine_room_panel(strategies=[]), "strategies"),
        (lambda: viz.machine_room_view(consumers=(-2, 1, 0)), "consumers"),
        (lambda: viz.ring_view(4, 16, 100000), "virtual_nodes"),
        (lambda: viz.moved_queues_figure(max_consumers=1000), "max_consumers"),
        (lambda: viz.allocation_frames_figure(consumer_counts=range(1, 201)), "consumer_counts"),
        (lambda: viz.process_queue_view(messages=10000, step=5000), "messages"),
        (lambda: viz.ring_panel(max_virtual_nodes=10**6), "max_virtual_nodes"),
        (lambda: viz.allocation_panel(max_consumers=10**4), "max_consumers"),
    ],
)
def test_the_reported_reproducers_are_refused_quickly_by_name(call, argument):
    with time_limit(SECONDS), pytest.raises((ValueError, TypeError), match=argument):  # refused before any work
        call()


def test_random_cids_is_linear_and_keeps_its_ids():
    with time_limit(SECONDS):  # a list search would take minutes here (40,000 ids took 7 s); linear: under a second
        ids = alloc.random_cids(100_000, 3)
    assert len(set(ids)) == 100_000
    # the ids the quadratic version drew (notebooks and tests depend on them)
    assert alloc.random_cids(3, 1) == ["10.68.32.66@8727", "10.253.230.121@43702", "10.194.107.25@32972"]
    digest = hashlib.sha256(repr(alloc.random_cids(2000, 5)).encode()).hexdigest()
    assert digest == "e4dcb390e0fecc29ae6b6a027fb10d357825cf0880bb1f2c7714cdee9296fde8"


# --------------------------------------------------------------------------- the command line, in process


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with time_limit(SECONDS), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as done:  # --help
            code = done.code
    return code, out.getvalue(), err.getvalue()


def assert_clean(argv, code, out, err) -> None:
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err
    if code == 2:
        assert len(err.splitlines()) == 1 and err.strip(), (argv, err)
        assert out == "", (argv, out[:200])


FLAGS = [
    "--topic",
    "--brokers",
    "--queues-per-broker",
    "--consumers",
    "--cids",
    "--strategy",
    "--virtual-nodes",
    "--consumer-idcs",
    "--config-queues",
    "--room-separator",
    "--group",
]
VALUES = st.one_of(
    st.sampled_from(
        [
            "0",
            "-1",
            "1",
            "3",
            "65",
            "100001",
            "99999999999",
            "1e3",
            "²",
            "١٢",
            "nan",
            "",
            "a,a",
            "a,,b",
            "b:1",
            "b:99999999999",
            "b:²",
            "a:-1,a:2",
            "x" * 300,
            "CONFIG",
            "CONSISTENT_HASH",
            "MACHINE_ROOM_NEARBY-" * 20 + "AVG",
            "MACHINE_ROOM",
            "a\nb",
            "\u2028",
            "--json",
        ]
    ),
    st.text(max_size=6),
)


@FAST
@given(pairs=st.lists(st.tuples(st.sampled_from(FLAGS), VALUES), min_size=1, max_size=3))
def test_allocate_answers_or_refuses_in_one_line(pairs):
    argv = ["allocate"] + [token for pair in pairs for token in pair]
    assert_clean(argv, *run_cli(argv))


def _scenario_fields() -> list[str]:
    import dataclasses

    from rmqlib.sim import Scenario

    return [f.name for f in dataclasses.fields(Scenario)]


SET_VALUES = st.one_of(
    st.sampled_from(
        [
            "no",
            "yes",
            "TRUE",
            "false",
            "0",
            "-1",
            "1.5",
            "nan",
            "inf",
            "-inf",
            "1e400",
            "99999999999999999999",
            "²",
            "",
            "AVG",
            "NOPE",
            "x" * 300,
            "MACHINE_ROOM_NEARBY-" * 20 + "AVG",
            "0x10",
        ]
    ),
    st.text(max_size=5),
)
SPAN = ["--set", "duration_ms=30000", "--set", "drain_ms=1000"]


def _positive_number(text: str) -> bool:
    try:
        number = float(text)
    except ValueError:
        return False
    return math.isfinite(number) and number > 0


@FAST
@given(field=st.one_of(st.sampled_from(_scenario_fields()), st.just("nope")), value=SET_VALUES)
def test_simulate_set_answers_or_refuses_in_one_line(field, value):
    if _positive_number(value):
        # keep every run short: a valid span, rate or 1 ms timer may ask for a long (valid) simulation;
        # this test is about bad input, which a negative number is for every numeric field
        value = "-" + value.strip().lstrip("+")
    argv = ["simulate", "steady_state", *SPAN, "--set", f"{field}={value}"]
    code, out, err = run_cli(argv)
    assert_clean(argv, code, out, err)


def test_set_long_polling_no_is_refused_not_read_as_true():
    code, out, err = run_cli(["simulate", "steady_state", *SPAN, "--set", "long_polling=no"])
    assert code == 2 and "long_polling" in err and "true or false" in err
    code, out, _ = run_cli(["simulate", "steady_state", *SPAN, "--set", "long_polling=FALSE", "--json"])
    assert code == 0 and out.startswith("{")


# --------------------------------------------------------------------------- the command line, as a subprocess


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (CLI_MEMORY, CLI_MEMORY))


def run_cli_process(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rmqlib", *argv], capture_output=True, text=True, timeout=60, preexec_fn=_limit_memory
    )


REPRODUCERS = [
    (["allocate", "--strategy", "MACHINE_ROOM_NEARBY-" * 2000 + "AVG"], "--strategy"),
    (["allocate", "--strategy", "CONFIG", "--config-queues", "a:99999999999"], "--config-queues"),
    (["allocate", "--strategy", "CONFIG", "--config-queues", "a:²"], "--config-queues"),
    (["allocate", "--brokers", "a,a"], "--brokers"),
    (["allocate", "--consumers", "10000000"], "--consumers"),
    (["allocate", "--queues-per-broker", "1000000000"], "--queues-per-broker"),
    (["allocate", "--strategy", "CONSISTENT_HASH", "--virtual-nodes", "100000000"], "--virtual-nodes"),
    (
        ["allocate", "--strategy", "CONSISTENT_HASH", "--virtual-nodes", "10000", "--consumers", "1000"],
        "--virtual-nodes",
    ),
    (["simulate", "crash", "--set", "long_polling=no"], "long_polling"),
    (["simulate", "crash", "--set", "drain_ms=99999999999999"], "drain_ms"),
    (["simulate", "crash", "--set", "produce_rate_per_queue=inf"], "produce_rate_per_queue"),
    (["simulate", "crash", "--set", "retry_queue_nums=99999999999"], "retry_queue_nums"),
]


@pytest.mark.parametrize("argv, names", REPRODUCERS, ids=[" ".join(a)[:50] for a, _ in REPRODUCERS])
def test_reported_command_lines_fail_in_one_line_under_a_memory_limit(argv, names):
    done = run_cli_process(argv)
    assert done.returncode == 2 and done.stdout == "", done.stderr[-500:]
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1 and names in done.stderr


def test_the_largest_group_answers_under_a_memory_limit():
    done = run_cli_process(["allocate", "--consumers", "100000", "--queues-per-broker", "50000", "--brokers", "a,b"])
    assert done.returncode == 0 and done.stderr == ""
    assert len(done.stdout.splitlines()) == 100_003


@settings(FAST, max_examples=4)
@given(pairs=st.lists(st.tuples(st.sampled_from(FLAGS), VALUES), min_size=1, max_size=2))
def test_allocate_as_a_subprocess_answers_or_refuses_in_one_line(pairs):
    argv = ["allocate"] + [token for pair in pairs for token in pair]
    done = run_cli_process(argv)
    assert_clean(argv, done.returncode, done.stdout, done.stderr)
