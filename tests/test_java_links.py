"""The real code one click away: a section that names a Java class links to its file, at a line.

For every chapter, the markdown is cut into sections (a section starts at a line beginning with
``# `` or ``## ``, outside fenced code, and runs across cells to the next such line). Every backticked
mention of a RocketMQ class the book models (`` `ProcessQueue` ``, `` `RebalanceImpl.doRebalance` ``,
`` `MQClientInstance#rebalanceLater` ``, `` `client/.../PullRequest.java` ``) needs, in the same section,
a permalink to that class's ``.java`` file at the pinned commit with a ``#L<line>`` anchor.

Exempt: the chapter table of the preface's "Reading the book" (its rows only), the glossary (a
table whose every row links its file), and the "Summary" and "Exercises" sections, which restate.

The Chinese edition (``chapters/zh``) is held to the same rule in its own section headings, and more
strictly: each of its markdown cells carries exactly the RocketMQ links of the English cell it translates
(the same URLs with the same anchors, and the same text where the text is code: `` `ProcessQueue` `` is
never translated, "logs the failure" is), so a reader of either edition lands on the same line.

Every anchor was also checked against the source by ``tools/java_link_lines.py`` (it needs a RocketMQ checkout;
its findings are in ``tests/data/java_link_lines.json``): the line exists, and a link whose text is a class names
the line declaring it, one whose text is ``Class.member`` the line declaring the member. A link added or changed
since then fails here until the tool is run again.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGLISH = sorted((ROOT / "chapters").glob("*.ipynb"))
CHINESE = sorted((ROOT / "chapters" / "zh").glob("*.ipynb"))
CHAPTERS = ENGLISH + CHINESE
JAVA_COMMIT = "8fc57f1468d182eea11c01e089c0250d647dc5f3"  # as in test_notebooks_hygiene.py
GLOSSARY = "14_glossary_and_further_reading.ipynb"
RESTATING = ("## Summary", "## Exercises", "## 小结", "## 练习")
READING_TABLE = {"en": "## Reading the book", "zh": "## 如何阅读本书"}  # the preface's chapter table


def _id(path):
    return f"zh/{path.name}" if path.parent.name == "zh" else path.name


_C = "client/src/main/java/org/apache/rocketmq/client/"
_B = "broker/src/main/java/org/apache/rocketmq/broker/"
_S = "store/src/main/java/org/apache/rocketmq/store/"
_COMMON = "common/src/main/java/org/apache/rocketmq/common/"
_REMOTING = "remoting/src/main/java/org/apache/rocketmq/remoting/"
_PROXY = "proxy/src/main/java/org/apache/rocketmq/proxy/"

# The RocketMQ classes the book models or names: the Java twins of docs/java-twins-client.md and
# docs/java-twins-broker.md, and the other classes the chapters name in backticks, each with the
# file that declares it at JAVA_COMMIT (found with `git grep` on the source; test sources left out).
# A name declared in two modules the book uses (the client's and the broker's PullRequest) accepts both.
CLASS_FILES = {
    name: tuple(paths)
    for name, paths in {
        # client
        "AbstractAllocateMessageQueueStrategy": [_C + "consumer/rebalance/AbstractAllocateMessageQueueStrategy.java"],
        "AllocateMachineRoomNearby": [_C + "consumer/rebalance/AllocateMachineRoomNearby.java"],
        "SelectMessageQueueByHash": [_C + "producer/selector/SelectMessageQueueByHash.java"],
        "MachineRoomResolver": [_C + "consumer/rebalance/AllocateMachineRoomNearby.java"],  # nested interface
        "AllocateMessageQueueAveragely": [_C + "consumer/rebalance/AllocateMessageQueueAveragely.java"],
        "AllocateMessageQueueAveragelyByCircle": [_C + "consumer/rebalance/AllocateMessageQueueAveragelyByCircle.java"],
        "AllocateMessageQueueByConfig": [_C + "consumer/rebalance/AllocateMessageQueueByConfig.java"],
        "AllocateMessageQueueByMachineRoom": [_C + "consumer/rebalance/AllocateMessageQueueByMachineRoom.java"],
        "AllocateMessageQueueConsistentHash": [_C + "consumer/rebalance/AllocateMessageQueueConsistentHash.java"],
        "AllocateMessageQueueStrategy": [_C + "consumer/AllocateMessageQueueStrategy.java"],
        "ClientConfig": [_C + "ClientConfig.java"],
        "ClientRemotingProcessor": [_C + "impl/ClientRemotingProcessor.java"],
        "ConsumeMessageConcurrentlyService": [_C + "impl/consumer/ConsumeMessageConcurrentlyService.java"],
        "ConsumeMessageOrderlyService": [_C + "impl/consumer/ConsumeMessageOrderlyService.java"],
        "ControllableOffset": [_C + "consumer/store/ControllableOffset.java"],
        "DefaultLitePullConsumer": [_C + "consumer/DefaultLitePullConsumer.java"],
        "DefaultLitePullConsumerImpl": [_C + "impl/consumer/DefaultLitePullConsumerImpl.java"],
        "DefaultMQAdminExtImpl": ["tools/src/main/java/org/apache/rocketmq/tools/admin/DefaultMQAdminExtImpl.java"],
        "DefaultMQProducer": [_C + "producer/DefaultMQProducer.java"],
        "DefaultMQProducerImpl": [_C + "impl/producer/DefaultMQProducerImpl.java"],
        "DefaultMQPushConsumer": [_C + "consumer/DefaultMQPushConsumer.java"],
        "DefaultMQPushConsumerImpl": [_C + "impl/consumer/DefaultMQPushConsumerImpl.java"],
        "LocalFileOffsetStore": [_C + "consumer/store/LocalFileOffsetStore.java"],
        "MQBrokerException": [_C + "exception/MQBrokerException.java"],
        "MQClientAPIImpl": [_C + "impl/MQClientAPIImpl.java"],
        "MQClientException": [_C + "exception/MQClientException.java"],
        "MQClientInstance": [_C + "impl/factory/MQClientInstance.java"],
        "OffsetNotFoundException": [_C + "exception/OffsetNotFoundException.java"],
        "PopProcessQueue": [_C + "impl/consumer/PopProcessQueue.java"],
        "PopRequest": [_C + "impl/consumer/PopRequest.java"],
        "ProcessQueue": [_C + "impl/consumer/ProcessQueue.java"],
        "PullCallback": [_C + "consumer/PullCallback.java"],
        "PullMessageService": [_C + "impl/consumer/PullMessageService.java"],
        "PullRequest": [_C + "impl/consumer/PullRequest.java", _B + "longpolling/PullRequest.java"],
        "PullResult": [_C + "consumer/PullResult.java"],
        "PullStatus": [_C + "consumer/PullStatus.java"],
        "ReadOffsetType": [_C + "consumer/store/ReadOffsetType.java"],
        "RebalanceImpl": [_C + "impl/consumer/RebalanceImpl.java"],
        "RebalanceLitePullImpl": [_C + "impl/consumer/RebalanceLitePullImpl.java"],
        "RebalancePushImpl": [_C + "impl/consumer/RebalancePushImpl.java"],
        "RebalanceService": [_C + "impl/consumer/RebalanceService.java"],
        "RemoteBrokerOffsetStore": [_C + "consumer/store/RemoteBrokerOffsetStore.java"],
        # broker
        "AbstractSendMessageProcessor": [_B + "processor/AbstractSendMessageProcessor.java"],
        "AckMessageProcessor": [_B + "processor/AckMessageProcessor.java"],
        "AdminBrokerProcessor": [_B + "processor/AdminBrokerProcessor.java"],
        "BroadcastOffsetManager": [_B + "offset/BroadcastOffsetManager.java"],
        "BrokerController": [_B + "BrokerController.java"],
        "BrokerPreOnlineService": [_B + "BrokerPreOnlineService.java"],
        "ChangeInvisibleTimeProcessor": [_B + "processor/ChangeInvisibleTimeProcessor.java"],
        "ClientChannelInfo": [_B + "client/ClientChannelInfo.java"],
        "ClientHousekeepingService": [_B + "client/ClientHousekeepingService.java"],
        "ClientManageProcessor": [_B + "processor/ClientManageProcessor.java"],
        "ConsumerGroupEvent": [_B + "client/ConsumerGroupEvent.java"],
        "ConsumerGroupInfo": [_B + "client/ConsumerGroupInfo.java"],
        "ConsumerManageProcessor": [_B + "processor/ConsumerManageProcessor.java"],
        "ConsumerManager": [_B + "client/ConsumerManager.java"],
        "ConsumerOffsetManager": [_B + "offset/ConsumerOffsetManager.java"],
        "ConsumerOrderInfoManager": [_B + "offset/ConsumerOrderInfoManager.java"],
        "ConsumerOrderInfoLockManager": [_B + "offset/ConsumerOrderInfoLockManager.java"],
        "DefaultConsumerIdsChangeListener": [_B + "client/DefaultConsumerIdsChangeListener.java"],
        "DefaultPullMessageResultHandler": [_B + "processor/DefaultPullMessageResultHandler.java"],
        "ManyPullRequest": [_B + "longpolling/ManyPullRequest.java"],
        "NotifyMessageArrivingListener": [_B + "longpolling/NotifyMessageArrivingListener.java"],
        "PopBufferMergeService": [_B + "processor/PopBufferMergeService.java"],
        "PopLongPollingService": [_B + "longpolling/PopLongPollingService.java"],
        "PopMessageProcessor": [_B + "processor/PopMessageProcessor.java"],
        "PopReviveService": [_B + "processor/PopReviveService.java"],
        "PullMessageProcessor": [_B + "processor/PullMessageProcessor.java"],
        "SlaveSynchronize": [_B + "slave/SlaveSynchronize.java"],
        "PullRequestHoldService": [_B + "longpolling/PullRequestHoldService.java"],
        "QueryAssignmentProcessor": [_B + "processor/QueryAssignmentProcessor.java"],
        "RebalanceLockManager": [_B + "client/rebalance/RebalanceLockManager.java"],
        "TopicRouteInfoManager": [_B + "topic/TopicRouteInfoManager.java"],
        # proxy
        "RouteActivity": [_PROXY + "grpc/v2/route/RouteActivity.java"],
        "MessageQueueSelector": [  # the proxy's, and the producer's interface of the same name
            _PROXY + "service/route/MessageQueueSelector.java",
            _C + "producer/MessageQueueSelector.java",
        ],
        "ReceiveMessageActivity": [_PROXY + "grpc/v2/consumer/ReceiveMessageActivity.java"],
        "DefaultReceiptHandleManager": [_PROXY + "service/receipt/DefaultReceiptHandleManager.java"],
        "ReceiptHandleProcessor": [_PROXY + "processor/ReceiptHandleProcessor.java"],
        "RenewStrategyPolicy": [_PROXY + "common/RenewStrategyPolicy.java"],
        "TopicRouteService": [_PROXY + "service/route/TopicRouteService.java"],
        "ClusterTopicRouteService": [_PROXY + "service/route/ClusterTopicRouteService.java"],
        "MessageQueueView": [_PROXY + "service/route/MessageQueueView.java"],
        "TopicRouteWrapper": [_PROXY + "service/route/TopicRouteWrapper.java"],
        "ClusterMessageService": [_PROXY + "service/message/ClusterMessageService.java"],
        "AbstractProcessor": [_PROXY + "processor/AbstractProcessor.java"],
        "ChangeInvisibleDurationActivity": [_PROXY + "grpc/v2/consumer/ChangeInvisibleDurationActivity.java"],
        "ReceiptHandle": [_COMMON + "consumer/ReceiptHandle.java"],
        # store
        "CommitLog": [_S + "CommitLog.java"],
        "DefaultMessageStore": [_S + "DefaultMessageStore.java"],
        "ReputMessageService": [_S + "DefaultMessageStore.java"],  # nested in DefaultMessageStore
        "GetMessageResult": [_S + "GetMessageResult.java"],
        "GetMessageStatus": [_S + "GetMessageStatus.java"],
        "MessageStore": [_S + "MessageStore.java"],
        "MessageStoreConfig": [_S + "config/MessageStoreConfig.java"],
        "PopCheckPoint": [_S + "pop/PopCheckPoint.java"],
        "BrokerStatsManager": [_S + "stats/BrokerStatsManager.java"],
        # common
        "BrokerConfig": [_COMMON + "BrokerConfig.java"],
        "ConsistentHashRouter": [_COMMON + "consistenthash/ConsistentHashRouter.java"],
        "ConsumeFromWhere": [_COMMON + "consumer/ConsumeFromWhere.java"],
        "MessageExt": [_COMMON + "message/MessageExt.java"],
        "MessageQueue": [_COMMON + "message/MessageQueue.java"],
        "MessageRequestMode": [_COMMON + "message/MessageRequestMode.java"],
        "MixAll": [_COMMON + "MixAll.java"],
        "StatsItem": [_COMMON + "stats/StatsItem.java"],
        "StatsItemSet": [_COMMON + "stats/StatsItemSet.java"],
        "StatsSnapshot": [_COMMON + "stats/StatsSnapshot.java"],
        "VirtualNode": [_COMMON + "consistenthash/VirtualNode.java"],
        # remoting
        "BrokerData": [_REMOTING + "protocol/route/BrokerData.java"],
        "BrokerMemberGroup": [_REMOTING + "protocol/body/BrokerMemberGroup.java"],
        "ConsumeType": [_REMOTING + "protocol/heartbeat/ConsumeType.java"],
        "ConsumerData": [_REMOTING + "protocol/heartbeat/ConsumerData.java"],
        "ConsumeStats": [_REMOTING + "protocol/admin/ConsumeStats.java"],
        "OffsetWrapper": [_REMOTING + "protocol/admin/OffsetWrapper.java"],
        "FilterAPI": [_REMOTING + "protocol/filter/FilterAPI.java"],
        "HeartbeatData": [_REMOTING + "protocol/heartbeat/HeartbeatData.java"],
        "MessageModel": [_REMOTING + "protocol/heartbeat/MessageModel.java"],
        "NettyServerConfig": [_REMOTING + "netty/NettyServerConfig.java"],
        "PullMessageRequestHeader": [_REMOTING + "protocol/header/PullMessageRequestHeader.java"],
        "QueueData": [_REMOTING + "protocol/route/QueueData.java"],
        "ResponseCode": [_REMOTING + "protocol/ResponseCode.java"],
        "SubscriptionData": [_REMOTING + "protocol/heartbeat/SubscriptionData.java"],
        "SubscriptionGroupConfig": [_REMOTING + "protocol/subscription/SubscriptionGroupConfig.java"],
        "TopicRouteData": [_REMOTING + "protocol/route/TopicRouteData.java"],
        # name server
        "RouteInfoManager": ["namesrv/src/main/java/org/apache/rocketmq/namesrv/routeinfo/RouteInfoManager.java"],
    }.items()
}

# `Name`, `Name.member`, `Name#member`, `Name.method(args)`, `Name.java`, `path/.../Name.java#L12`;
# a dotted Python name (`rmqlib.client.RebalanceImpl`) is our port, not a mention of the Java.
MENTION = re.compile(r"`(?:[\w.…/-]*/)?([A-Z]\w*)((?:[.#]\w+)*)(?:\([^`\n]*\))?`")
PERMALINK = re.compile(r"https://github\.com/apache/rocketmq/blob/(\w+)/([\w/.-]+\.java)(?:#L(\d+))?")
LINK = re.compile(r"\[([^\]\n]*)\]\((https://github\.com/apache/rocketmq/blob/[^)\s]+)\)")


def _markdown(path):
    """The chapter's markdown cells, one string, in order."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join(
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in cells
        if c["cell_type"] == "markdown"
    )


def sections(markdown):
    """(heading, text) for each section: from a line starting '# ' or '## ' (outside ``` fences) to the next."""
    found, heading, lines, fenced = [], "", [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and (line.startswith("# ") or line.startswith("## ")):
            found.append((heading, "\n".join(lines)))
            heading, lines = line.rstrip(), []
        lines.append(line)
    found.append((heading, "\n".join(lines)))
    return [(h, text) for h, text in found if text.strip()]


def unlinked_mentions(markdown, exempt_table_in=None):
    """(section heading, mention) for each Java class named in a section with no anchored permalink to its file.

    ``exempt_table_in``: the heading of a section whose table rows (lines starting with '|') are not checked.
    """
    missing = []
    for heading, text in sections(markdown):
        if heading.startswith(RESTATING):
            continue
        if exempt_table_in is not None and heading == exempt_table_in:
            text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("|"))
        anchored = {path for commit, path, line in PERMALINK.findall(text) if commit == JAVA_COMMIT and line}
        seen = set()
        for match in MENTION.finditer(text):
            name = match[1]
            if name not in CLASS_FILES or match[0] in seen:
                continue
            seen.add(match[0])
            if not anchored.intersection(CLASS_FILES[name]):
                missing.append((heading, match[0]))
    return missing


@pytest.mark.parametrize("path", [p for p in CHAPTERS if p.name != GLOSSARY], ids=_id)
def test_every_section_that_names_a_java_class_links_to_its_line(path):
    exempt = READING_TABLE["zh" if path.parent.name == "zh" else "en"] if path.name.startswith("00_") else None
    missing = unlinked_mentions(_markdown(path), exempt_table_in=exempt)
    assert not missing, (
        f"link each class (first mention in the section) to its file at {JAVA_COMMIT[:8]} with a #L anchor: {missing}"
    )


def _link(mention, line=10):
    name = re.split(r"[.#]", mention)[0]
    return f"[`{mention}`](https://github.com/apache/rocketmq/blob/{JAVA_COMMIT}/{CLASS_FILES[name][0]}#L{line})"


def test_the_check_fails_a_section_without_the_link():
    bare = "# T\n\nIntro.\n\n## The queue\n\nThe `ProcessQueue` holds messages; see `RebalanceImpl.doRebalance()`.\n"
    assert unlinked_mentions(bare) == [
        ("## The queue", "`ProcessQueue`"),
        ("## The queue", "`RebalanceImpl.doRebalance()`"),
    ]
    unanchored = bare.replace("The `ProcessQueue`", _link("ProcessQueue").split("#L")[0] + ")")
    assert ("## The queue", "`ProcessQueue`") in unlinked_mentions(unanchored)
    elsewhere = bare.replace("The `ProcessQueue`", _link("ProcessQueue").replace(JAVA_COMMIT, "0" * 40))
    assert ("## The queue", "`ProcessQueue`") in unlinked_mentions(elsewhere)
    linked = bare.replace("The `ProcessQueue`", "The " + _link("ProcessQueue")).replace(
        "`RebalanceImpl.doRebalance()`", _link("RebalanceImpl.doRebalance", 233)
    )
    assert unlinked_mentions(linked) == []


def test_a_link_counts_only_in_its_own_section_and_restating_sections_are_exempt():
    text = (
        "## One\n\n" + _link("ProcessQueue") + "\n\n## Two\n\nAgain `ProcessQueue` and `client/.../PullRequest.java`."
        "\n\n### A subsection\n\n`MQClientInstance#rebalanceLater`\n\n## Summary\n\n`RebalanceService`\n"
    )
    assert unlinked_mentions(text) == [
        ("## Two", "`ProcessQueue`"),
        ("## Two", "`client/.../PullRequest.java`"),
        ("## Two", "`MQClientInstance#rebalanceLater`"),
    ]
    fenced = "## One\n\n```python\n# not a heading\n```\n\n" + _link("ProcessQueue") + " and `ProcessQueue`\n"
    assert unlinked_mentions(fenced) == []
    python = "## One\n\n`rmqlib.client.RebalanceImpl` and `TreeMap<Long, MessageExt>` are not Java class mentions\n"
    assert unlinked_mentions(python) == []
    table = "## Reading the book\n\n| 07 | `ProcessQueue` |\n\nProse naming `ProcessQueue`.\n"
    assert unlinked_mentions(table, exempt_table_in="## Reading the book") == [
        ("## Reading the book", "`ProcessQueue`")
    ]


NESTED = {"MachineRoomResolver", "ReputMessageService"}  # declared inside another class's file


# The twins in the 5.x gRPC client, apache/rocketmq-clients (another repository, pinned at GRPC_CLIENT_COMMIT).
GRPC_CLIENT_COMMIT = "da8271b572b41b627bcbbdfb5b3310c0c5e4736b"
GRPC_CLIENT_FILES = {
    "PushConsumerImpl": "java/client/src/main/java/org/apache/rocketmq/client/java/impl/consumer/PushConsumerImpl.java",
    "ClientManagerImpl": "java/client/src/main/java/org/apache/rocketmq/client/java/impl/ClientManagerImpl.java",
    "ProcessQueueImpl": "java/client/src/main/java/org/apache/rocketmq/client/java/impl/consumer/ProcessQueueImpl.java",
    "StandardConsumeService": (
        "java/client/src/main/java/org/apache/rocketmq/client/java/impl/consumer/StandardConsumeService.java"
    ),
    "FifoConsumeService": (
        "java/client/src/main/java/org/apache/rocketmq/client/java/impl/consumer/FifoConsumeService.java"
    ),
    "ConsumerImpl": "java/client/src/main/java/org/apache/rocketmq/client/java/impl/consumer/ConsumerImpl.java",
    "SimpleConsumerImpl": (
        "java/client/src/main/java/org/apache/rocketmq/client/java/impl/consumer/SimpleConsumerImpl.java"
    ),
    "SubscriptionLoadBalancer": (
        "java/client/src/main/java/org/apache/rocketmq/client/java/impl/consumer/SubscriptionLoadBalancer.java"
    ),
    "ClientImpl": "java/client/src/main/java/org/apache/rocketmq/client/java/impl/ClientImpl.java",
    "SimpleConsumerExample": (
        "java/client/src/main/java/org/apache/rocketmq/client/java/example/SimpleConsumerExample.java"
    ),
}


def test_every_java_twin_in_the_docs_is_in_the_class_list():
    docs = "".join(
        (ROOT / "docs" / name).read_text(encoding="utf-8") for name in ("java-twins-client.md", "java-twins-broker.md")
    )
    twins = set(re.findall(r"(\w+)\.java", docs))
    assert twins - set(CLASS_FILES) - set(GRPC_CLIENT_FILES) == set()
    for name, paths in CLASS_FILES.items():
        assert all(p.endswith(".java") and (p.endswith(f"/{name}.java") or name in NESTED) for p in paths), name


GRPC_LINK = re.compile(r"\]\((https://github\.com/apache/rocketmq-clients/blob/([^/\s)]+)/([^#)\s]+)(#L\d+)?)\)")


@pytest.mark.parametrize("path", CHAPTERS, ids=_id)
def test_links_into_the_grpc_client_name_a_twin_at_the_pinned_commit_and_a_line(path):
    """The book's links into apache/rocketmq-clients land on a file of GRPC_CLIENT_FILES at GRPC_CLIENT_COMMIT, at
    a line (their anchors were read against that commit by hand: the tool above reads apache/rocketmq only)."""
    links = GRPC_LINK.findall(path.read_text(encoding="utf-8"))
    for url, commit, file, anchor in links:
        assert commit == GRPC_CLIENT_COMMIT and file in GRPC_CLIENT_FILES.values() and anchor, url


def links_by_cell(path):
    """``{cell id: sorted [(text, url), ...]}`` of every link into RocketMQ's source, per markdown cell.

    ``text`` is the link text where it is code (a Java name in backticks), else "" (prose, translated).
    """
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {
        c["id"]: sorted(
            (text if text.startswith("`") else "", url)
            for text, url in LINK.findall("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
        )
        for c in cells
        if c["cell_type"] == "markdown"
    }


def link_differences(chinese, english):
    """``(cell id, only in the Chinese, only in the English)`` for each cell whose RocketMQ links differ."""
    out = []
    for cid, theirs in english.items():
        mine = chinese.get(cid, [])
        extra = [x for x in mine if mine.count(x) > theirs.count(x)]
        missing = [x for x in theirs if theirs.count(x) > mine.count(x)]
        if extra or missing:
            out.append((cid, sorted(set(extra)), sorted(set(missing))))
    return out + [(cid, chinese[cid], []) for cid in chinese.keys() - english.keys() if chinese[cid]]


@pytest.mark.parametrize("path", CHINESE, ids=_id)
def test_a_chinese_cell_has_the_same_anchored_links_as_the_english_it_translates(path):
    english = ROOT / "chapters" / path.name
    assert english.is_file(), f"no English chapter for {path.relative_to(ROOT)}"
    differ = link_differences(links_by_cell(path), links_by_cell(english))
    assert not differ, (
        "each cell keeps the English cell's RocketMQ links (text and URL with #L anchor), "
        f"(cell, only in Chinese, only in English): {differ}"
    )


def test_the_link_comparison_names_the_cell_and_the_link():
    a = (
        "`ProcessQueue`",
        f"https://github.com/apache/rocketmq/blob/{JAVA_COMMIT}/{CLASS_FILES['ProcessQueue'][0]}#L10",
    )
    b = (a[0], a[1].replace("#L10", "#L11"))
    assert link_differences({"c1": [a]}, {"c1": [a]}) == []
    assert link_differences({"c1": [b]}, {"c1": [a]}) == [("c1", [b], [a])]
    assert link_differences({"c1": []}, {"c1": [a, a]}) == [("c1", [], [a])]
    assert link_differences({"c1": [a, a]}, {"c1": [a]}) == [("c1", [a], [])]


def test_the_glossary_links_each_file_at_a_line():
    links = LINK.findall(_markdown(ROOT / "chapters" / GLOSSARY))
    java = [(text, url) for text, url in links if ".java" in url]
    assert java and all(re.search(r"\.java#L\d+$", url) for _, url in java), [
        text for text, url in java if not re.search(r"\.java#L\d+$", url)
    ]


# --- against the source ----------------------------------------------------------------------------------------

#: What ``tools/java_link_lines.py --repo <rocketmq checkout>`` found for every anchored link: that its line exists
#: at the pinned commit and, for a link named after a class or member, that the line declares it.
CHECKED = ROOT / "tests" / "data" / "java_link_lines.json"


def anchored_links(path):
    """``(text, url, file, line)`` for every link of ``path`` into RocketMQ's source with a line anchor."""
    for text, url in LINK.findall(_markdown(path)):
        found = PERMALINK.fullmatch(url)
        if found and found[3]:
            yield text, url, found[2], int(found[3])


def verdict(text, file, lines, line):
    """What a link says and whether the source bears it out: ``{"exists": ..., "declares": ...}``."""
    entry = {"exists": 1 <= line <= len(lines)}
    said = re.fullmatch(r"`([A-Z]\w*)((?:[.#]\w+)*)(?:\(\))?`", text)
    if entry["exists"] and said and said[1] in CLASS_FILES and ".java" not in said[2]:
        name, members = said[1], re.split(r"[.#]", said[2])[1:]
        entry["declares"] = file in CLASS_FILES[name] and declares(
            lines[line - 1], name, members[-1] if members else None
        )
    return entry


def declares(line, name, member):
    """Whether a Java source line declares class ``name`` or, given ``member``, that field, method or constant."""
    code = re.sub(r"/\*.*?\*/", "", line).split("//")[0]  # `Map<String/* topic */, ...>` declares too
    if re.match(r"\s*(\*|/\*)", code):  # javadoc or block comment
        return False
    if member is None:
        return re.search(rf"\b(class|interface|enum)\s+{name}\b", code) is not None
    if re.search(rf"\b(class|interface|enum)\s+{member}\b", code):  # a nested type
        return True
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", member) and re.match(rf"\s*{member}\s*[(,;]", code):  # enum constant
        return True
    found = re.match(rf"\s*([\w@][\w<>\[\],.? @]*?)\s+{member}\s*(\(|=|;)", code)  # type (and modifiers), name
    if not found or re.match(r"(return|throw|if|else|new|case|assert)\b", found[1]):
        return False
    return not (found[1].endswith(">") and "<" not in found[1])  # `a > NAME` compares, `Map<K, V> name` declares


def test_the_declaration_check_tells_a_declaration_from_a_use():
    assert declares("public class ProcessQueue {", "ProcessQueue", None)
    assert not declares("    private final ProcessQueue pq = new ProcessQueue();", "ProcessQueue", None)
    assert declares("    public boolean isLockExpired() {", "ProcessQueue", "isLockExpired")
    assert declares(
        "    public final static long REBALANCE_LOCK_INTERVAL = Long.parseLong(", "X", "REBALANCE_LOCK_INTERVAL"
    )
    assert declares('    BROADCASTING("BROADCASTING"),', "MessageModel", "BROADCASTING")
    assert declares("    CHANGE,", "ConsumerGroupEvent", "CHANGE")
    assert not declares("        return this.isLockExpired();", "ProcessQueue", "isLockExpired")
    assert not declares("        if (pq.isLockExpired()) {", "ProcessQueue", "isLockExpired")
    assert not declares("            isLockExpired();", "ProcessQueue", "isLockExpired")
    assert not declares(
        "        (now - this.lastUpdateTimestamp) > REBALANCE_LOCK_MAX_LIVE_TIME;", "X", "REBALANCE_LOCK_MAX_LIVE_TIME"
    )
    assert not declares("     * public boolean isLockExpired() {", "ProcessQueue", "isLockExpired")
    assert declares(
        "    final ConcurrentMap<String/* topic */, Set<MessageQueue>> topicSubscribeInfoTable =",
        "X",
        "topicSubscribeInfoTable",
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=_id)
def test_each_anchor_was_checked_against_the_source_and_declares_what_the_link_says(path):
    checked = json.loads(CHECKED.read_text(encoding="utf-8"))
    links = list(anchored_links(path))
    if path.parent.name == "zh":  # prose link texts are translated; the twin test holds their URLs to the English
        links = [link for link in links if link[0].startswith("`")]
    unchecked = [f"{text} {url}" for text, url, _, _ in links if f"{text} {url}" not in checked]
    assert not unchecked, f"run tools/java_link_lines.py --repo <a RocketMQ checkout>: {unchecked[:5]}"
    wrong = [
        (text, url)
        for text, url, _, _ in links
        if not checked[f"{text} {url}"]["exists"] or checked[f"{text} {url}"].get("declares") is False
    ]
    assert not wrong, wrong
