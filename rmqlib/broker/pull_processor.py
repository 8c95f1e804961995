"""PULL_MESSAGE on the broker: read the store, answer, or hold the request.

:meth:`PullMessageProcessor.process_request` returns a :class:`PullResponse`
or ``None`` when the request was suspended in the hold service. When the hold
service wakes it, :meth:`PullMessageProcessor.execute_request_when_wakeup`
re-runs it with ``broker_allow_suspend=False`` and puts the answer in
:attr:`PullMessageProcessor.outbox` (Java writes it to the channel).

Store status → response code (composeResponseHeader):
FOUND → SUCCESS; NO_MATCHED_MESSAGE → PULL_RETRY_IMMEDIATELY;
NO_MESSAGE_IN_QUEUE → PULL_NOT_FOUND if the request offset is 0, else
PULL_OFFSET_MOVED; OFFSET_FOUND_NULL, OFFSET_OVERFLOW_ONE → PULL_NOT_FOUND;
OFFSET_OVERFLOW_BADLY, OFFSET_TOO_SMALL → PULL_OFFSET_MOVED.
The client reads SUCCESS as FOUND, PULL_NOT_FOUND as NO_NEW_MSG,
PULL_RETRY_IMMEDIATELY as NO_MATCHED_MSG, PULL_OFFSET_MOVED as OFFSET_ILLEGAL.

A slave refuses every pull while ``slave_read_enable`` is off, the default
(:meth:`PullMessageProcessor.reject_request`). With it on, a slave reads its
own store like a master but never holds a pull: it answers every pull that
finds nothing PULL_RETRY_IMMEDIATELY, pointing the client at the master
(composeResponseHeader). That is Java's answer while the slave believes its
master online, which it always does without ``enableSlaveActingMaster``
(``minBrokerIdInGroup`` stays 0), and while the store does not suggest
reading from a slave, which it never does here: that takes a backlog larger
than 40% of the machine's memory (``accessMessageInMemoryMaxRatio``). So
every answer suggests the master (``suggestWhichBrokerId`` 0), and a client
keeps pulling from the master whenever its address table has one.

Left out: permissions, subscription-group configs (every group is allowed),
static topics, broadcast offsets, server-side reset offsets, cold-data flow
control, the store's suggestion to read from a slave, SQL92 filters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rmqlib.broker.config import BrokerConfig, BrokerRole
from rmqlib.broker.hold_service import PullRequest, PullRequestHoldService
from rmqlib.broker.message_store import (
    DEFAULT_MAX_TOTAL_MSG_SIZE,
    GetMessageResult,
    GetMessageStatus,
    MessageStore,
)
from rmqlib.broker.protocol import SUB_ALL, ResponseCode, SubscriptionData
from rmqlib.broker.stats import BrokerStatsManager
from rmqlib.checks import (
    check_bool,
    check_instance,
    check_int,
    check_mapping,
    check_methods,
    check_str,
    check_str_or_none,
    check_time,
)
from rmqlib.model import INT_MAX, INT_MIN

#: DefaultMQPushConsumerImpl.BROKER_SUSPEND_MAX_TIME_MILLIS (sent as suspendTimeoutMillis)
BROKER_SUSPEND_MAX_TIME_MILLIS = 15_000
PULL_BATCH_SIZE = 32  # DefaultMQPushConsumer.pullBatchSize (sent as maxMsgNums)

FLAG_COMMIT_OFFSET = 0x1  # PullSysFlag.FLAG_COMMIT_OFFSET
FLAG_SUSPEND = 0x1 << 1  # PullSysFlag.FLAG_SUSPEND
FLAG_SUBSCRIPTION = 0x1 << 2  # PullSysFlag.FLAG_SUBSCRIPTION

_STATUS_TO_CLIENT = {
    ResponseCode.SUCCESS: "FOUND",
    ResponseCode.PULL_NOT_FOUND: "NO_NEW_MSG",
    ResponseCode.PULL_RETRY_IMMEDIATELY: "NO_MATCHED_MSG",
    ResponseCode.PULL_OFFSET_MOVED: "OFFSET_ILLEGAL",
}

# composeResponseHeader as a table: store status → response code; None = it depends on the
# request's offset (PULL_OFFSET_MOVED if it is not 0, else PULL_NOT_FOUND).
_CODE_OF_STATUS = {
    GetMessageStatus.FOUND: ResponseCode.SUCCESS,
    GetMessageStatus.MESSAGE_WAS_REMOVING: ResponseCode.PULL_RETRY_IMMEDIATELY,
    GetMessageStatus.NO_MATCHED_MESSAGE: ResponseCode.PULL_RETRY_IMMEDIATELY,
    GetMessageStatus.NO_MATCHED_LOGIC_QUEUE: None,
    GetMessageStatus.NO_MESSAGE_IN_QUEUE: None,
    GetMessageStatus.OFFSET_FOUND_NULL: ResponseCode.PULL_NOT_FOUND,
    GetMessageStatus.OFFSET_OVERFLOW_ONE: ResponseCode.PULL_NOT_FOUND,
    GetMessageStatus.OFFSET_OVERFLOW_BADLY: ResponseCode.PULL_OFFSET_MOVED,
    GetMessageStatus.OFFSET_RESET: ResponseCode.PULL_OFFSET_MOVED,
    GetMessageStatus.OFFSET_TOO_SMALL: ResponseCode.PULL_OFFSET_MOVED,
}
_REMARK_OF_STATUS = {status: status.value for status in GetMessageStatus}  # status.value, looked up cheaply
# The codes the pull path answers with most, read once (every Enum.MEMBER read costs ~40 ns on Python 3.11).
_SUCCESS = ResponseCode.SUCCESS
_PULL_NOT_FOUND = ResponseCode.PULL_NOT_FOUND
_PULL_OFFSET_MOVED = ResponseCode.PULL_OFFSET_MOVED
_PULL_RETRY_IMMEDIATELY = ResponseCode.PULL_RETRY_IMMEDIATELY
_FOUND = GetMessageStatus.FOUND
_SLAVE = BrokerRole.SLAVE


@dataclass(eq=False, slots=True)
class PullMessageRequest:
    """The header of a PULL_MESSAGE request (only what the model uses).

    ``has_*_flag`` are the PullSysFlag bits; ``sub_expression`` is sent only
    with the subscription flag (otherwise the broker uses the group's
    heartbeat subscription from the ConsumerManager).

    Mirrors: remoting/.../protocol/header/PullMessageRequestHeader.java
    """

    consumer_group: str
    topic: str
    queue_id: int
    queue_offset: int
    max_msg_nums: int = PULL_BATCH_SIZE
    has_commit_offset_flag: bool = False
    commit_offset: int = 0
    has_suspend_flag: bool = True
    suspend_timeout_millis: int = BROKER_SUSPEND_MAX_TIME_MILLIS
    has_subscription_flag: bool = False
    sub_expression: str = SUB_ALL
    sub_version: int = 0
    client_id: str = ""
    channel: str = ""
    opaque: int = 0

    def __post_init__(self):
        """The checks: offsets and times are ints >= 0, ids strings, flags bools, ``queue_id`` a Java int."""
        check_int(self.queue_offset, "queue_offset", 0)
        check_int(self.commit_offset, "commit_offset", 0)
        check_int(self.suspend_timeout_millis, "suspend_timeout_millis", 0)
        check_int(self.max_msg_nums, "max_msg_nums", 1)
        check_int(self.queue_id, "queue_id", INT_MIN, INT_MAX)  # a Java int; the processor answers a bad one
        check_str(self.consumer_group, "consumer_group", empty=True)
        check_str(self.topic, "topic", empty=True)
        check_str_or_none(self.sub_expression, "sub_expression")
        check_str(self.client_id, "client_id", empty=True)
        check_str(self.channel, "channel", empty=True)
        check_int(self.sub_version, "sub_version")
        check_int(self.opaque, "opaque")
        check_bool(self.has_commit_offset_flag, "has_commit_offset_flag")
        check_bool(self.has_suspend_flag, "has_suspend_flag")
        check_bool(self.has_subscription_flag, "has_subscription_flag")

    @classmethod
    def _trusted(
        cls,
        consumer_group: str,
        topic: str,
        queue_id: int,
        queue_offset: int,
        max_msg_nums: int,
        has_commit_offset_flag: bool,
        commit_offset: int,
        has_suspend_flag: bool,
        suspend_timeout_millis: int,
        has_subscription_flag: bool,
        sub_expression: str,
        sub_version: int,
        client_id: str,
        channel: str,
        opaque: int,
    ) -> PullMessageRequest:
        """The header as the client's pull path fills it, for code that computed every field itself (the
        simulator's wire): every field, in order, no checks."""
        r = object.__new__(cls)
        r.consumer_group = consumer_group
        r.topic = topic
        r.queue_id = queue_id
        r.queue_offset = queue_offset
        r.max_msg_nums = max_msg_nums
        r.has_commit_offset_flag = has_commit_offset_flag
        r.commit_offset = commit_offset
        r.has_suspend_flag = has_suspend_flag
        r.suspend_timeout_millis = suspend_timeout_millis
        r.has_subscription_flag = has_subscription_flag
        r.sub_expression = sub_expression
        r.sub_version = sub_version
        r.client_id = client_id
        r.channel = channel
        r.opaque = opaque
        return r

    @property
    def sys_flag(self) -> int:
        return (
            (FLAG_COMMIT_OFFSET if self.has_commit_offset_flag else 0)
            | (FLAG_SUSPEND if self.has_suspend_flag else 0)
            | (FLAG_SUBSCRIPTION if self.has_subscription_flag else 0)
        )


@dataclass(slots=True)
class PullResponse:
    """A PULL_MESSAGE answer: code, offsets and (on SUCCESS) the messages.

    Mirrors: remoting/.../header/PullMessageResponseHeader.java
    """

    request: PullMessageRequest
    code: ResponseCode
    time_ms: int
    next_begin_offset: int = 0
    min_offset: int = 0
    max_offset: int = 0
    messages: list = field(default_factory=list)
    status: GetMessageStatus | None = None
    remark: str = ""

    @property
    def client_pull_status(self) -> str | None:
        """What the client's PullResult says (FOUND, NO_NEW_MSG, NO_MATCHED_MSG, OFFSET_ILLEGAL)."""
        return _STATUS_TO_CLIENT.get(self.code)


class PullMessageProcessor:
    """Ties store, consumer registry and hold service into the PULL_MESSAGE path.

    Mirrors: broker/.../processor/PullMessageProcessor.java#processRequest,
    #composeResponseHeader, #tryCommitOffset, #executeRequestWhenWakeup and
    broker/.../processor/DefaultPullMessageResultHandler.java#handle
    """

    def __init__(
        self,
        store: MessageStore,
        hold_service: PullRequestHoldService | None = None,
        consumer_manager=None,
        broker_config: BrokerConfig | None = None,
        topic_config: Mapping[str, tuple[int, int]] | None = None,
        broker_stats_manager: BrokerStatsManager | None = None,
    ):
        """``topic_config``: what the broker's TopicConfigManager holds, topic -> (read queues, write queues), read
        live at every pull (a broker whose read count shrinks refuses the queues past it); None: the store's
        queue counts serve as the config. ``broker_stats_manager``: where a SUCCESS answer counts the messages it
        hands out (DefaultPullMessageResultHandler); None: nothing counts them."""
        check_instance(store, "store", MessageStore)
        if topic_config is not None:
            check_mapping(topic_config, "topic_config")
        if hold_service is not None:
            check_instance(hold_service, "hold_service", PullRequestHoldService)
        if consumer_manager is not None:
            check_methods(consumer_manager, "consumer_manager", "get_consumer_group_info", "compensate_subscribe_data")
        if broker_config is not None:
            check_instance(broker_config, "broker_config", BrokerConfig)
        if broker_stats_manager is not None:
            check_instance(broker_stats_manager, "broker_stats_manager", BrokerStatsManager)
        self.store = store
        self.broker_config = broker_config or store.broker_config
        if hold_service is None:
            hold_service = PullRequestHoldService(store, self.broker_config)
        self.hold_service = hold_service
        self.hold_service.wakeup_handler = self._execute_request_when_wakeup_trusted
        if store.message_arriving_listener is None:
            # Wire reput → hold service, as BrokerController does at start-up.
            from rmqlib.broker.hold_service import NotifyMessageArrivingListener

            store.message_arriving_listener = NotifyMessageArrivingListener(self.hold_service)
        self.consumer_manager = consumer_manager
        self.topic_config = topic_config
        self.broker_stats_manager = broker_stats_manager
        self.outbox: list[PullResponse] = []

    def process_request(
        self, request: PullMessageRequest, now_ms, broker_allow_suspend: bool = True
    ) -> PullResponse | None:
        """Answer a pull, or suspend it (returns None) on PULL_NOT_FOUND with the suspend flag. A broker that
        :meth:`reject_request` s answers SYSTEM_BUSY first, as the remoting layer does before any processor runs
        (NettyRemotingAbstract#processRequestCommand)."""
        now_ms = check_time(now_ms)
        check_instance(request, "request", PullMessageRequest)
        check_bool(broker_allow_suspend, "broker_allow_suspend")
        if self.reject_request():
            return PullResponse(
                request, ResponseCode.SYSTEM_BUSY, now_ms, remark="a slave serves no pulls while slaveReadEnable is off"
            )
        return self._process_request_trusted(request, now_ms, broker_allow_suspend)

    def reject_request(self) -> bool:
        """True on a slave whose ``slave_read_enable`` is off (the default): it refuses every pull, so a broker
        name whose master is gone serves none until the master is back. Mirrors: #rejectRequest"""
        config = self.broker_config
        return config.broker_role is BrokerRole.SLAVE and not config.slave_read_enable

    def _process_request_trusted(
        self, request: PullMessageRequest, now_ms: int, broker_allow_suspend: bool
    ) -> PullResponse | None:
        """:meth:`process_request` for a caller that has checked its arguments (a woken request is re-run
        with its own checked header)."""
        store = self.store
        topic, queue_id, queue_offset = request.topic, request.queue_id, request.queue_offset
        if self.topic_config is None:  # Java: selectTopicConfig(topic), then its readQueueNums
            read_queue_nums = store.topic_queue_nums.get(topic)
        else:
            queue_nums = self.topic_config.get(topic)
            read_queue_nums = None if queue_nums is None else queue_nums[0]
        if read_queue_nums is None:
            return PullResponse(request, ResponseCode.TOPIC_NOT_EXIST, now_ms, remark=f"topic[{topic}] not exist")
        if queue_id < 0 or queue_id >= read_queue_nums:
            return PullResponse(
                request, ResponseCode.INVALID_PARAMETER, now_ms, remark=f"queueId[{queue_id}] is illegal"
            )
        subscription, error = self._subscription_for(request, now_ms)
        if error is not None:
            return error

        # the header was checked when it was built, and the topic and queue id looked up just above
        result: GetMessageResult = store._get_message_trusted(
            request.consumer_group,
            topic,
            queue_id,
            queue_offset,
            request.max_msg_nums,
            subscription,
            DEFAULT_MAX_TOTAL_MSG_SIZE,
        )
        status = result.status
        code = self._compose_code(request, result)
        if status is not _FOUND and self.broker_config.broker_role is _SLAVE:
            code = _PULL_RETRY_IMMEDIATELY  # a slave sends the client back to its master: see the module docstring
        # tryCommitOffset: note the pull offset on every run, and store the piggy-backed commit offset, but only on a
        # first (suspendable) run
        store.offsets._commit_pull_offset_trusted(request.consumer_group, topic, queue_id, result.next_begin_offset)
        if broker_allow_suspend and request.has_commit_offset_flag:
            # (the request was checked when it was built; the queue was looked up above)
            store._commit_offset_trusted(request.consumer_group, topic, queue_id, request.commit_offset)

        if broker_allow_suspend and request.has_suspend_flag and code is _PULL_NOT_FOUND:
            polling_time = request.suspend_timeout_millis
            if not self.broker_config.long_polling_enable:
                polling_time = self.broker_config.short_polling_time_mills
            held = PullRequest._trusted(
                request,
                request.channel,
                request.client_id,
                polling_time,
                now_ms,
                queue_offset,
                subscription,
                subscription,
            )
            self.hold_service._suspend_pull_request_trusted(topic, queue_id, held)  # the store has just read this queue
            return None
        if code is _SUCCESS and self.broker_stats_manager is not None:
            self.broker_stats_manager.inc_group_get_nums(request.consumer_group, topic, len(result.messages))
        # The result is ours alone and dropped here, so the response may take its message list.
        return PullResponse(
            request,
            code,
            now_ms,
            result.next_begin_offset,
            result.min_offset,
            result.max_offset,
            result.messages if code is _SUCCESS else [],
            status,
            _REMARK_OF_STATUS[status],
        )

    def execute_request_when_wakeup(self, held: PullRequest, now_ms) -> PullResponse:
        """Re-run a woken request without suspending; the answer goes to :attr:`outbox`."""
        check_instance(held, "held", PullRequest)
        check_instance(held.request_command, "held.request_command", PullMessageRequest)
        return self._execute_request_when_wakeup_trusted(held, check_time(now_ms))

    def _execute_request_when_wakeup_trusted(self, held: PullRequest, now_ms: int) -> PullResponse:
        """:meth:`execute_request_when_wakeup` as the hold service calls it (the processor registers it as the
        wake-up handler): a held pull this processor suspended, at the hold service's checked time."""
        response = self._process_request_trusted(held.request_command, now_ms, False)
        self.outbox.append(response)
        return response

    def drain(self) -> list[PullResponse]:
        """Return and clear the answers produced by woken requests."""
        out, self.outbox = self.outbox, []
        return out

    # ---- helpers ------------------------------------------------------------
    def _subscription_for(self, request: PullMessageRequest, now_ms):
        if request.has_subscription_flag or self.consumer_manager is None:
            try:
                sub = SubscriptionData(request.topic, request.sub_expression, request.sub_version)
            except ValueError as exc:
                # Java answers SUBSCRIPTION_PARSE_FAILED (23); treated as not-exist here.
                return None, PullResponse(request, ResponseCode.SUBSCRIPTION_NOT_EXIST, now_ms, remark=str(exc))
            if self.consumer_manager is not None:
                self.consumer_manager.compensate_subscribe_data(request.consumer_group, request.topic, sub)
            return sub, None
        info = self.consumer_manager.get_consumer_group_info(request.consumer_group)
        if info is None:
            return None, PullResponse(
                request, ResponseCode.SUBSCRIPTION_NOT_EXIST, now_ms, remark="the consumer's group info not exist"
            )
        sub = info.find_subscription_data(request.topic)
        if sub is None:
            return None, PullResponse(
                request, ResponseCode.SUBSCRIPTION_NOT_EXIST, now_ms, remark="the consumer's subscription not exist"
            )
        if sub.sub_version < request.sub_version:
            return None, PullResponse(
                request, ResponseCode.SUBSCRIPTION_NOT_LATEST, now_ms, remark="the consumer's subscription not latest"
            )
        return sub, None

    @staticmethod
    def _compose_code(request: PullMessageRequest, result: GetMessageResult) -> ResponseCode:
        """The response code for a store status. Mirrors: #composeResponseHeader"""
        code = _CODE_OF_STATUS.get(result.status, _PULL_OFFSET_MOVED)
        if code is None:  # NO_MATCHED_LOGIC_QUEUE, NO_MESSAGE_IN_QUEUE
            return _PULL_OFFSET_MOVED if request.queue_offset != 0 else _PULL_NOT_FOUND
        return code

    def _check(self) -> None:
        self.hold_service._check()
