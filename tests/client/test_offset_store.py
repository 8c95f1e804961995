"""OffsetStore (RemoteBrokerOffsetStore) and LocalFileOffsetStore."""

import pytest

from rmqlib.client import LocalFileOffsetStore, OffsetStore, ReadOffsetType
from rmqlib.model import MessageQueue

MQ = MessageQueue("T", "b", 0)
MQ2 = MessageQueue("T", "b", 1)


def test_increase_only_update_never_moves_offset_back():
    st = OffsetStore("G", None)
    st.update_offset(MQ, 10, True)
    st.update_offset(MQ, 7, True)
    assert st.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == 10


def test_plain_update_overwrites_offset():
    st = OffsetStore("G", None)
    st.update_offset(MQ, 10, False)
    st.update_offset(MQ, 7, False)
    assert st.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == 7


def test_update_offset_rejects_negative_offset():
    with pytest.raises(ValueError, match="offset"):
        OffsetStore("G", None).update_offset(MQ, -1, True)


def test_read_from_memory_without_entry_is_minus_one():
    assert OffsetStore("G", None).read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == -1


def test_read_from_store_caches_broker_offset_in_memory(api):
    api.offsets[("G", MQ)] = 42
    st = OffsetStore("G", api)
    assert st.read_offset(MQ, ReadOffsetType.READ_FROM_STORE) == 42
    assert st.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == 42


def test_read_from_store_distinguishes_not_found_from_failure(api):
    st = OffsetStore("G", api)
    assert st.read_offset(MQ, ReadOffsetType.READ_FROM_STORE) == -1
    api.fail.add("query_consumer_offset")
    assert st.read_offset(MQ, ReadOffsetType.READ_FROM_STORE) == -2


def test_memory_first_then_store_falls_back_to_broker(api):
    api.offsets[("G", MQ)] = 5
    st = OffsetStore("G", api)
    assert st.read_offset(MQ, ReadOffsetType.MEMORY_FIRST_THEN_STORE) == 5
    st.update_offset(MQ, 9, False)
    assert st.read_offset(MQ, ReadOffsetType.MEMORY_FIRST_THEN_STORE) == 9


def test_crash_loses_unpersisted_progress(api):
    st = OffsetStore("G", api)
    st.update_offset(MQ, 10, True)
    st.persist(MQ)
    st.update_offset(MQ, 25, True)  # consumed further, not yet persisted
    # crash: the in-memory store is gone; a new client reads what the broker kept
    fresh = OffsetStore("G", api)
    assert fresh.read_offset(MQ, ReadOffsetType.READ_FROM_STORE) == 10


def test_persist_failure_is_swallowed_like_a_oneway_call(api):
    st = OffsetStore("G", api)
    st.update_offset(MQ, 3, True)
    api.fail.add("update_consumer_offset")
    st.persist(MQ)
    assert ("G", MQ) not in api.offsets


def test_persist_all_sends_held_queues_and_forgets_others(api):
    st = OffsetStore("G", api)
    st.update_offset(MQ, 3, True)
    st.update_offset(MQ2, 4, True)
    st.persist_all({MQ})
    assert api.offsets == {("G", MQ): 3}
    assert st.read_offset(MQ2, ReadOffsetType.READ_FROM_MEMORY) == -1


def test_frozen_offset_ignores_updates_until_removed():
    st = OffsetStore("G", None)
    st.update_offset(MQ, 50, True)
    st.update_and_freeze_offset(MQ, 20)
    st.update_offset(MQ, 60, True)
    st.update_offset(MQ, 10, False)
    assert st.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == 20
    st.remove_offset(MQ)
    st.update_offset(MQ, 60, True)
    assert st.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == 60


def test_local_file_store_survives_restart_with_same_file():
    file = {}
    st = LocalFileOffsetStore("G", file)
    st.update_offset(MQ, 8, True)
    st.persist(MQ)
    st.update_offset(MQ, 9, True)
    again = LocalFileOffsetStore("G", file)
    again.load()
    assert again.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == 8
    assert LocalFileOffsetStore("G").read_offset(MQ, ReadOffsetType.READ_FROM_STORE) == -1


def test_offset_store_rejects_empty_group():
    with pytest.raises(ValueError, match="consumer_group"):
        OffsetStore("", None)
