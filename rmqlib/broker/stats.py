"""The broker's running counters and the rates a dashboard reads from them: what ``mqadmin consumerProgress`` prints as
"Consume TPS" is how many messages the broker handed the group (in pull and pop answers) per second, averaged over
the last minute of 10-second samples.

Mirrors: common/.../stats/StatsItem.java, StatsItemSet.java, StatsSnapshot.java and store/.../stats/
BrokerStatsManager.java (its GROUP_GET_NUMS set, the one GET_CONSUME_STATS reads; the hour and day lists, the
other sets and the periodic log lines are not modelled).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from rmqlib.checks import check_int, check_str, check_time_ms

#: StatsItemSet#init samples every item this often, from the set's creation on
SAMPLING_INTERVAL_MS = 10_000
#: StatsItem#samplingInSeconds keeps this many samples: the latest minute
MINUTE_SAMPLES = 7
#: the set GET_CONSUME_STATS reads its consumeTps from (Stats.GROUP_GET_NUMS)
GROUP_GET_NUMS = "GROUP_GET_NUMS"


@dataclass(frozen=True)
class StatsSnapshot:
    """What a list of samples says: the growth of the value from its first sample to its last, per second, and per
    call. Mirrors: StatsSnapshot"""

    sum: int = 0
    tps: float = 0.0
    avgpt: float = 0.0
    times: int = 0


class StatsItem:
    """One key's counters (``value``: messages, ``times``: calls) and the samples of them taken every 10 s, the
    latest seven. Mirrors: StatsItem (its minute list)"""

    def __init__(self, stats_name: str, stats_key: str):
        self.stats_name = check_str(stats_name, "stats_name")
        self.stats_key = check_str(stats_key, "stats_key")
        self.value = 0
        self.times = 0
        self.cs_list_minute: deque[tuple[int, int, int]] = deque()  # (timestamp, times, value)

    def sampling_in_seconds(self, now_ms: int) -> None:
        """Take a sample; the first one also records the counters as 0 one interval before. Mirrors:
        #samplingInSeconds"""
        check_time_ms(now_ms)
        samples = self.cs_list_minute
        if not samples:
            samples.append((now_ms - SAMPLING_INTERVAL_MS, 0, 0))
        samples.append((now_ms, self.times, self.value))
        if len(samples) > MINUTE_SAMPLES:
            samples.popleft()

    def get_stats_data_in_minute(self) -> StatsSnapshot:
        """Mirrors: #getStatsDataInMinute (#computeStatsData over the minute list)"""
        samples = self.cs_list_minute
        if not samples:
            return StatsSnapshot()
        (first_ms, first_times, first_value), (last_ms, last_times, last_value) = samples[0], samples[-1]
        total = last_value - first_value
        times = last_times - first_times
        return StatsSnapshot(total, total * 1000.0 / (last_ms - first_ms), total / times if times > 0 else 0.0, times)


class StatsItemSet:
    """The items of one statistic by key, created at their first value. Mirrors: StatsItemSet"""

    def __init__(self, stats_name: str):
        self.stats_name = check_str(stats_name, "stats_name")
        self.stats_item_table: dict[str, StatsItem] = {}

    def add_value(self, stats_key: str, inc_value: int, inc_times: int) -> None:
        """Mirrors: #addValue (through #getAndCreateStatsItem)"""
        item = self.stats_item_table.get(stats_key)
        if item is None:
            item = self.stats_item_table[check_str(stats_key, "stats_key")] = StatsItem(self.stats_name, stats_key)
        item.value += check_int(inc_value, "inc_value", lo=0)
        item.times += check_int(inc_times, "inc_times", lo=0)

    def sampling_in_seconds(self, now_ms: int) -> None:
        """Sample every item (the set's 10-second task). Mirrors: #samplingInSeconds"""
        for item in self.stats_item_table.values():
            item.sampling_in_seconds(now_ms)

    def get_stats_data_in_minute(self, stats_key: str) -> StatsSnapshot:
        """An empty snapshot for a key nothing has counted yet. Mirrors: #getStatsDataInMinute"""
        item = self.stats_item_table.get(stats_key)
        return StatsSnapshot() if item is None else item.get_stats_data_in_minute()


def build_stats_key(topic: str, group: str) -> str:
    """Mirrors: BrokerStatsManager#buildStatsKey"""
    return f"{topic}@{group}"


class BrokerStatsManager:
    """A broker's statistics, kept in memory from its start (a restarted broker counts from zero again). Only the
    messages handed to each group per topic are modelled. Mirrors: BrokerStatsManager"""

    def __init__(self) -> None:
        self.group_get_nums = StatsItemSet(GROUP_GET_NUMS)

    def inc_group_get_nums(self, group: str, topic: str, inc_value: int) -> None:
        """A pull or pop answer handed ``inc_value`` messages of ``topic`` to ``group``. Mirrors: #incGroupGetNums"""
        self.group_get_nums.add_value(build_stats_key(topic, group), inc_value, 1)

    def tps_group_get_nums(self, group: str, topic: str) -> float:
        """Messages of ``topic`` handed to ``group`` per second over the latest minute of samples. Mirrors:
        #tpsGroupGetNums"""
        return self.group_get_nums.get_stats_data_in_minute(build_stats_key(topic, group)).tps

    def sampling_in_seconds(self, now_ms: int) -> None:
        """The sampling task's run (StatsItemSet#init schedules it every 10 s from the broker's start; the caller
        keeps that schedule)."""
        self.group_get_nums.sampling_in_seconds(now_ms)
