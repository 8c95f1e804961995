"""RebalanceLockManager: grant, refresh, steal after 60 s, owner-only unlock."""

import random

import pytest

from rmqlib.broker import REBALANCE_LOCK_MAX_LIVE_TIME, RebalanceLockManager
from rmqlib.model import MessageQueue

G = "defaultGroup"
MQ0, MQ1 = MessageQueue("defaultTopic", "defaultBroker", 0), MessageQueue("defaultTopic", "defaultBroker", 1)


def test_lock_max_live_time_is_60s():
    assert REBALANCE_LOCK_MAX_LIVE_TIME == 60_000


def test_lock_all_expired_for_unknown_group():
    assert RebalanceLockManager().is_lock_all_expired(G, 0)


def test_try_lock_free_queue_is_granted():
    lm = RebalanceLockManager()
    assert lm.try_lock(G, MQ0, "c1", 0)
    assert lm.lock_owner(G, MQ0) == "c1"
    assert not lm.is_lock_all_expired(G, 0)


def test_try_lock_batch_all_free_returns_all():
    lm = RebalanceLockManager()
    assert lm.try_lock_batch(G, {MQ0, MQ1}, "c1", 0) == {MQ0, MQ1}


def test_orderly_queue_cannot_be_taken_by_another_client_until_expiry():
    lm = RebalanceLockManager()
    assert lm.try_lock_batch(G, [MQ0], "owner", 0) == {MQ0}
    assert lm.try_lock_batch(G, [MQ0], "thief", 30_000) == set()
    assert lm.try_lock_batch(G, [MQ0], "thief", 60_000) == set()  # exactly 60 s: still live
    assert lm.try_lock_batch(G, [MQ0], "thief", 60_001) == {MQ0}  # strictly over 60 s: taken over
    assert lm.lock_owner(G, MQ0) == "thief"
    assert lm.try_lock_batch(G, [MQ0], "owner", 60_002) == set()


def test_owner_refresh_every_20s_keeps_the_lock_forever():
    lm = RebalanceLockManager()
    for now in range(0, 300_001, 20_000):
        assert lm.try_lock_batch(G, [MQ0], "owner", now) == {MQ0}
        assert lm.try_lock_batch(G, [MQ0], "other", now + 1) == set()


def test_release_by_owner_lets_another_client_lock_at_once():
    lm = RebalanceLockManager()
    lm.try_lock(G, MQ0, "owner", 0)
    report = lm.unlock_batch(G, [MQ0], "owner")
    assert report.unlocked == {MQ0}
    assert lm.try_lock(G, MQ0, "other", 1)


def test_unlock_by_non_owner_is_a_reported_no_op():
    lm = RebalanceLockManager()
    lm.try_lock_batch(G, [MQ0, MQ1], "owner", 0)
    report = lm.unlock_batch(G, [MQ0], "otherClientId")
    assert report.unlocked == set() and report.held_by_other == {MQ0: "owner"}
    assert len(lm.mq_lock_table[G]) == 2
    assert lm.lock_owner(G, MQ0) == "owner"


def test_unlock_unknown_queue_or_group_reports_not_locked():
    lm = RebalanceLockManager()
    assert lm.unlock_batch(G, [MQ0], "c").not_locked == {MQ0}
    lm.try_lock(G, MQ0, "c", 0)
    assert lm.unlock_batch(G, [MQ1], "c").not_locked == {MQ1}


def test_owner_can_unlock_its_expired_lock():
    lm = RebalanceLockManager()
    lm.try_lock(G, MQ0, "owner", 0)
    assert lm.unlock_batch(G, [MQ0], "owner").unlocked == {MQ0}


def test_batch_mixes_granted_and_denied():
    lm = RebalanceLockManager()
    lm.try_lock(G, MQ0, "other", 0)
    assert lm.try_lock_batch(G, [MQ0, MQ1], "me", 10) == {MQ1}


def test_is_locked_refreshes_like_java():
    lm = RebalanceLockManager()
    lm.try_lock(G, MQ0, "c", 0)
    assert lm.is_locked(G, MQ0, "c", 50_000)
    assert not lm.try_lock(G, MQ0, "x", 100_000)  # refreshed at 50 s, so live until 110 s
    assert not lm.is_locked(G, MQ0, "x", 100_000)


def test_locks_are_per_group():
    lm = RebalanceLockManager()
    lm.try_lock("g1", MQ0, "a", 0)
    assert lm.try_lock("g2", MQ0, "b", 0)


def test_custom_live_time():
    lm = RebalanceLockManager(lock_max_live_time=1000)
    lm.try_lock(G, MQ0, "a", 0)
    assert lm.try_lock(G, MQ0, "b", 1001)


def test_bad_arguments():
    lm = RebalanceLockManager()
    with pytest.raises(ValueError, match="mqs"):
        lm.try_lock_batch(G, ["not a queue"], "c", 0)
    with pytest.raises(ValueError, match="mqs"):
        lm.try_lock_batch(G, MQ0, "c", 0)
    with pytest.raises(ValueError, match="client_id"):
        lm.try_lock_batch(G, [MQ0], "", 0)
    with pytest.raises(ValueError, match="lock_max_live_time"):
        RebalanceLockManager(-1)


@pytest.mark.parametrize("seed", range(20))
def test_seeded_stress_at_most_one_live_owner(seed):
    rng = random.Random(seed)
    lm = RebalanceLockManager()
    mqs = [MessageQueue("T", "b", i) for i in range(4)]
    clients = ["c1", "c2", "c3"]
    granted_at = {}  # mq -> (client, time of last grant/refresh)
    now = 0
    for _ in range(500):
        now += rng.randrange(0, 15_000)
        c = rng.choice(clients)
        batch = rng.sample(mqs, rng.randrange(1, 5))
        if rng.random() < 0.7:
            got = lm.try_lock_batch(G, batch, c, now)
            for mq in batch:
                prev = granted_at.get(mq)
                live_other = prev is not None and prev[0] != c and now - prev[1] <= 60_000
                assert (mq in got) == (not live_other), (mq, prev, c, now)
                if mq in got:
                    granted_at[mq] = (c, now)
        else:
            report = lm.unlock_batch(G, batch, c)
            for mq in report.unlocked:
                assert granted_at.pop(mq)[0] == c
            for mq, owner in report.held_by_other.items():
                assert owner != c and granted_at[mq][0] == owner
        lm._check()
