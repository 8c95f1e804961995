"""The command line: golden output, JSON that round-trips to rmqlib, one-line errors with exit code 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rmqlib.allocation import allocate_group, make_queues
from rmqlib.cli import main
from rmqlib.strategies import AllocateMessageQueueConsistentHash

GOLDEN_AVG = """\
strategy AVG | topic T | 10 queues on 2 broker(s) | 3 consumer(s)
consumer       queues  owns
10.0.0.1@1001       4  broker-a:0-3
10.0.0.2@1002       3  broker-a:4 broker-b:0-1
10.0.0.3@1003       3  broker-b:2-4
imbalance (max - min): 1 | idle consumers: 0
"""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_allocate_prints_golden_table(capsys):
    code, out, err = run(
        capsys,
        "allocate",
        "--topic",
        "T",
        "--brokers",
        "broker-a,broker-b",
        "--queues-per-broker",
        "5",
        "--consumers",
        "3",
    )
    assert (code, out, err) == (0, GOLDEN_AVG, "")


def test_allocate_json_equals_library_allocation(capsys):
    code, out, _ = run(
        capsys,
        "allocate",
        "--strategy",
        "CONSISTENT_HASH",
        "--virtual-nodes",
        "3",
        "--cids",
        "c,a,b",
        "--queues-per-broker",
        "8",
        "--json",
    )
    expected = allocate_group(
        AllocateMessageQueueConsistentHash(3), make_queues("TopicTest", ["broker-a"], 8), ["c", "a", "b"]
    )
    data = json.loads(out)
    assert code == 0 and data["strategy"] == "CONSISTENT_HASH"
    assert {cid: [q["queueId"] for q in qs] for cid, qs in data["allocation"].items()} == {
        cid: [mq.queue_id for mq in mqs] for cid, mqs in expected.items()
    }


def test_strategies_lists_every_registered_strategy(capsys):
    code, out, _ = run(capsys, "strategies")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == [
        "AVG",
        "AVG_BY_CIRCLE",
        "CONSISTENT_HASH",
        "CONFIG",
        "MACHINE_ROOM",
        "MACHINE_ROOM_NEARBY",
    ]


@pytest.mark.parametrize(
    "argv, names",
    [
        (["allocate", "--strategy", "NOPE"], "--strategy"),
        (["allocate", "--consumers", "0"], "--consumers"),
        (["allocate", "--queues-per-broker", "x"], "--queues-per-broker"),
        (["allocate", "--virtual-nodes", "-1"], "--virtual-nodes"),
        (["allocate", "--brokers", "a,,b"], "--brokers"),
        (["allocate", "--consumers", "2", "--cids", "a"], "--cids"),
        (["allocate", "--strategy", "CONFIG", "--config-queues", "broker-a"], "--config-queues"),
        (["allocate", "--strategy", "MACHINE_ROOM_NEARBY"], "--strategy"),
        (["frobnicate"], "frobnicate"),
    ],
)
def test_bad_arguments_print_one_line_and_exit_2(capsys, argv, names):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and names in err


def test_module_entry_point_runs_without_traceback():
    done = subprocess.run(
        [sys.executable, "-m", "rmqlib", "allocate", "--strategy", "NOPE"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_simulate_prints_the_summary_of_a_ready_made_scenario(capsys):
    from rmqlib.sim import scenarios, simulate

    code, out, err = run(capsys, "simulate", "crash", "--seed", "3", "--set", "duration_ms=70000", "--json")
    expected = simulate(scenarios.crash(duration_ms=70_000), seed=3).summary()
    assert code == 0 and err == ""
    assert json.loads(out) == json.loads(json.dumps(expected))


@pytest.mark.parametrize(
    "argv, names",
    [
        (["simulate", "nope"], "nope"),
        (["simulate", "crash", "--set", "rebalance_every=1"], "rebalance_every"),
        (["simulate", "crash", "--set", "rebalance_interval_ms=0"], "rebalance_interval_ms"),
        (["simulate", "crash", "--set", "novalue"], "FIELD=VALUE"),
    ],
)
def test_simulate_bad_arguments_print_one_line_and_exit_2(capsys, argv, names):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and names in err


@pytest.mark.parametrize(
    "argv, names",
    [
        (["allocate", "--strategy", "MACHINE_ROOM_NEARBY-" * 2000 + "AVG"], "--strategy"),
        (["allocate", "--strategy", "MACHINE_ROOM_NEARBY-" * 9 + "AVG"], "at most 8"),
        (["allocate", "--strategy", "CONFIG", "--config-queues", "a:99999999999"], "--config-queues"),
        (["allocate", "--strategy", "CONFIG", "--config-queues", "a:²"], "--config-queues"),
        (["allocate", "--brokers", "a,a"], "--brokers"),
        (["allocate", "--consumers", "10000000"], "--consumers"),
        (["allocate", "--consumers", "١٢"], "--consumers"),
        (["allocate", "--queues-per-broker", "1000000000"], "--queues-per-broker"),
        (["allocate", "--queues-per-broker", "60000", "--brokers", "a,b"], "--queues-per-broker"),
        (["allocate", "--strategy", "CONSISTENT_HASH", "--virtual-nodes", "100000000"], "--virtual-nodes"),
        (
            ["allocate", "--strategy", "CONSISTENT_HASH", "--virtual-nodes", "10000", "--consumers", "101"],
            "--virtual-nodes",
        ),
        (["allocate", "--room-separator", ""], "--room-separator"),
        (["allocate", "--topic", "t" * 128], "--topic"),
        (["allocate", "unexpected\nsecond line"], "unexpected"),
        (["simulate", "crash", "--set", "long_polling=no"], "long_polling"),
        (["simulate", "crash", "--set", "produce_rate_per_queue=inf"], "produce_rate_per_queue"),
        (["simulate", "crash", "--set", "duration_ms=1e3"], "duration_ms"),
        (["simulate", "crash", "--set", "brokers=a,,b"], "brokers"),
        (["simulate", "crash", "--set", "topics=TopicTest:8,TopicTest:4"], "topics"),
        (["simulate", "crash", "--set", "topics=TopicTest:eight"], "topics"),
        (["simulate", "crash", "--set", "slaves=broker-x"], "slaves"),
        (["simulate", "crash", "--set", "consumers=10.0.0.1@1"], "consumers"),
        (["simulate", "crash", "--set", "strategy=" + "MACHINE_ROOM_NEARBY-" * 9 + "AVG"], "strategy"),
        (["simulate", "crash", "--set", "drain_ms=99999999999999"], "drain_ms"),
        (["simulate", "crash", "--seed", "9" * 30], "--seed"),
    ],
)
def test_hardening_bad_input_prints_one_line_naming_the_flag(capsys, argv, names):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and names in err and "Traceback" not in err


def test_set_booleans_parse_only_true_and_false(capsys):
    span = ["--set", "duration_ms=30000", "--set", "drain_ms=1000", "--json"]
    code, on, _ = run(capsys, "simulate", "steady_state", *span, "--set", "long_polling=True")
    assert code == 0
    code, off, _ = run(capsys, "simulate", "steady_state", *span, "--set", "long_polling=FALSE")
    assert code == 0 and json.loads(on) != json.loads(off)  # polling differs, so does the run
    code, _, err = run(capsys, "simulate", "steady_state", *span, "--set", "long_polling=no")
    assert code == 2 and "expected true or false" in err


def test_set_takes_an_enum_field_by_name(capsys):
    from rmqlib.sim import ConsumeMode, scenarios, simulate

    span = ["--set", "duration_ms=70000", "--set", "drain_ms=1000", "--json"]
    code, out, err = run(capsys, "simulate", "orderly_crash", *span, "--set", "consume_mode=CONCURRENT")
    expected = simulate(
        scenarios.orderly_crash(duration_ms=70_000, drain_ms=1_000, consume_mode=ConsumeMode.CONCURRENT), seed=1
    ).summary()
    assert code == 0 and err == "" and json.loads(out) == json.loads(json.dumps(expected))
    code, out, err = run(capsys, "simulate", "crash", "--set", "message_model=BROADCAST")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "Scenario.message_model must be one of BROADCASTING, CLUSTERING, got 'BROADCAST'" in err


def test_set_takes_broker_names_and_topic_queue_counts(capsys):
    from rmqlib.sim import scenarios, simulate

    span = ["--set", "duration_ms=30000", "--set", "drain_ms=1000", "--json"]
    argv = ["--set", "topics=TopicTest:3,TopicOrders:2", "--set", "slaves=broker-a", "--set", "slave_read_enable=true"]
    code, out, err = run(capsys, "simulate", "steady_state", *span, *argv)
    scenario = scenarios.steady_state(
        duration_ms=30_000,
        drain_ms=1_000,
        topics={"TopicTest": 3, "TopicOrders": 2},
        slaves=("broker-a",),
        slave_read_enable=True,
    )
    assert code == 0 and err == ""
    assert json.loads(out) == json.loads(json.dumps(simulate(scenario, seed=1).summary()))
    code, plain, _ = run(capsys, "simulate", "steady_state", *span)
    assert code == 0 and json.loads(plain)["produced"] != json.loads(out)["produced"]  # the topics took effect
    code, out, err = run(capsys, "simulate", "broker_outage", "--set", "slaves=", "--json")
    assert code == 0 and json.loads(out) == json.loads(
        json.dumps(simulate(scenarios.broker_outage(), seed=1).summary())
    )


def test_simulate_help_names_every_ready_made_scenario(capsys):
    from rmqlib.sim import scenarios

    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert [name for name in scenarios.ALL if name not in text] == []
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert [name for name in scenarios.ALL if f"`{name}`" not in readme] == []


def test_largest_group_answers_and_help_states_the_limits(capsys):
    code, out, _ = run(capsys, "allocate", "--consumers", "100000")
    assert code == 0 and len(out.splitlines()) == 100_003
    with pytest.raises(SystemExit):
        main(["allocate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for limit in ("100,000 consumers", "100,000 queues", "10,000 virtual nodes", "1,000,000 ring points"):
        assert limit in text


def test_set_takes_message_tags(capsys):
    from rmqlib.sim import scenarios, simulate

    span = ["--set", "duration_ms=30000", "--set", "drain_ms=20000", "--json"]
    code, out, err = run(capsys, "simulate", "mixed_subscriptions", *span, "--set", "message_tags=TagB,TagC")
    expected = simulate(
        scenarios.mixed_subscriptions(duration_ms=30_000, drain_ms=20_000, message_tags=("TagB", "TagC")), seed=1
    ).summary()
    assert code == 0 and err == "" and json.loads(out) == json.loads(json.dumps(expected))
    code, out, err = run(capsys, "simulate", "mixed_subscriptions", *span, "--set", "message_tags=TagA,TagA")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "message_tags" in err
