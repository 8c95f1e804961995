"""Pop long polling: an empty POP_MESSAGE waits on the broker until a message arrives or its poll time ends.

Mirrors: broker/.../longpolling/PopLongPollingService.java (``polling`` holds a request,
``notifyMessageArriving`` wakes it). The driver owns time: it holds whatever stands for the waiting
request (a simulated event, a callback), asks :meth:`PopLongPollingService.polling` to hold it, and
resumes each request :meth:`PopLongPollingService.notify_message_arriving` hands back; the request's
own poll time (``pollTime``, 15 s for a push consumer) is the driver's to time out.

Simplified, and said so: any arrival on the broker (a new message on any queue, or a revived one)
wakes every held pop. Java keys held pops by ``topic@group@queueId`` and wakes, per arriving
message, the first held pop of that queue and of ``queueId -1``; the count of held pops per key
(``popPollingSize``) and in all (``maxPopPollingSize``) is not limited here.
"""

from __future__ import annotations

from rmqlib.checks import check_int, check_str

#: What a push consumer sends as ``pollTime`` (DefaultMQPushConsumerImpl: BROKER_SUSPEND_MAX_TIME_MILLIS).
POP_POLL_TIME_MILLIS = 15_000


class PopLongPollingService:
    """The pops a broker holds until a message arrives. Mirrors: PopLongPollingService.java"""

    def __init__(self) -> None:
        self.held: list[object] = []  # the held requests, whatever the driver holds
        self.total_polling_num = 0  # every pop held so far (Java's totalPollingNum counts the ones held now)

    def polling(self, request: object, poll_time_ms: int = POP_POLL_TIME_MILLIS) -> bool:
        """Hold ``request`` (an empty pop); False, held nothing, when ``poll_time_ms`` <= 0 (NOT_POLLING).

        Mirrors: PopLongPollingService.java#polling
        """
        check_int(poll_time_ms, "poll_time_ms")
        if poll_time_ms <= 0:
            return False
        self.held.append(request)
        self.total_polling_num += 1
        return True

    def notify_message_arriving(self, topic: str = "", queue_id: int = -1) -> list[object]:
        """A message arrived: every held request, in the order held, for the driver to run again.

        Mirrors: PopLongPollingService.java#notifyMessageArriving (simplified: see the module)
        """
        check_str(topic, "topic", empty=True)
        check_int(queue_id, "queue_id")
        woken, self.held = self.held, []
        return woken
