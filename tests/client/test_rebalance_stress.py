"""Seeded stress runs of several RebalanceImpl clients sharing one fake broker side."""

import random

import pytest

from rmqlib.client import InMemoryClientBrokerAPI, PushConsumerConfig, RebalanceImpl
from rmqlib.model import MessageQueue


def run(seed, avg, orderly):
    rng = random.Random(seed)
    api = InMemoryClientBrokerAPI()
    mqs = [MessageQueue("TopicA", b, q) for b in ("broker-a", "broker-b") for q in range(rng.randint(1, 4))]
    clients: dict[str, RebalanceImpl] = {}
    now = 0

    def add(cid):
        impl = RebalanceImpl("G", cid, api, avg, config=PushConsumerConfig(), consume_orderly=orderly, now_ms=now)
        impl.subscribe("TopicA", "*", now)
        impl.update_topic_subscribe_info("TopicA", mqs)
        clients[cid] = impl

    for i in range(rng.randint(1, 3)):
        add(f"10.0.0.{i}@1")
    api.consumer_ids["G"] = sorted(clients)
    for step in range(150):
        now += rng.choice([0, 10, 500, 1000, 5000, 21_000])
        op = rng.random()
        if op < 0.1 and len(clients) < 6:
            add(f"10.0.0.{rng.randint(0, 9)}@{step}")
            api.consumer_ids["G"] = sorted(clients)
        elif op < 0.18 and len(clients) > 1:
            victim = rng.choice(sorted(clients))
            clients.pop(victim).destroy()  # crash: no unlock, no persist
            api.consumer_ids["G"] = sorted(clients)
        elif op < 0.3 and clients:
            impl = clients[rng.choice(sorted(clients))]
            for pq in impl.process_queue_table.values():
                if rng.random() < 0.5 and not pq.consume_in_progress:
                    pq.acquire_consume_lock()
                elif pq.consume_in_progress:
                    pq.release_consume_lock()
        elif op < 0.4 and orderly and clients:
            clients[rng.choice(sorted(clients))].lock_all(now)
        elif clients:
            impl = clients[rng.choice(sorted(clients))]
            impl.do_rebalance(orderly, now)
            for pq in impl.process_queue_table.values():  # pulls keep the queues alive
                if not pq.dropped and rng.random() < 0.9:
                    pq.last_pull_timestamp = now
        for impl in clients.values():
            impl._check()
            assert impl.get_working_message_queue("TopicA") <= set(mqs)
        if orderly:  # broker locks are exclusive
            owners = {}
            for (_group, mq), (cid, _) in api.locks.items():
                assert owners.setdefault(mq, cid) == cid

    # settle: release listener locks, then let everyone rebalance for a while
    for impl in clients.values():
        for pq in impl.process_queue_table.values():
            while pq.consume_in_progress:
                pq.release_consume_lock()
    for _ in range(5):
        now += 21_000
        for cid in sorted(clients):
            impl = clients[cid]
            impl.do_rebalance(orderly, now)
            for pq in impl.process_queue_table.values():
                pq.last_pull_timestamp = now
            impl._check()
    balanced = [clients[c].do_rebalance(orderly, now) for c in sorted(clients)]
    assert all(balanced)
    owned = [clients[c].get_working_message_queue("TopicA") for c in sorted(clients)]
    assert set().union(*owned) == set(mqs)
    assert sum(len(o) for o in owned) == len(mqs)  # disjoint


@pytest.mark.parametrize("seed", range(25))
def test_stress_concurrent_clients_converge_and_keep_invariants(seed, avg):
    run(seed, avg, orderly=False)


@pytest.mark.parametrize("seed", range(25))
def test_stress_orderly_clients_converge_and_keep_exclusive_locks(seed, avg):
    run(seed, avg, orderly=True)
