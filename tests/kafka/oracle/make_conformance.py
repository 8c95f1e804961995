"""Writes tests/kafka/data/kafka_conformance.json: seeded random groups, each assigned by Kafka's own Java classes.

How: the Kafka sources the models mirror (the assignors, AbstractPartitionAssignor, ConsumerPartitionAssignor,
TopicPartition, Uuid, the group-coordinator assignors and their API) are compiled, unmodified, from a checkout of
apache/kafka at rmqlib.kafka.KAFKA_COMMIT, beside a few empty stand-ins for classes they import but these calls
never use (slf4j, Cluster, the protocol schema types) and Oracle.java, which reads the cases and prints Kafka's
answers. Nothing of Kafka's is stored in this repository; only the inputs and the answers are.

    python tests/kafka/oracle/make_conformance.py /path/to/kafka-checkout   # needs javac and java (JDK 17)

The 'sticky' cases run AbstractStickyAssignor through a subclass whose memberData reads the owned partitions
and generation from the subscription's fields (StickyAssignor reads the same two from its user data).
"""

import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "data" / "kafka_conformance.json"
sys.path.insert(0, str(HERE.parents[2]))

from rmqlib.kafka import ASSIGNORS, KAFKA_COMMIT, TopicPartition  # noqa: E402

CLIENT_FILES = [
    "clients/src/main/java/org/apache/kafka/clients/consumer/ConsumerPartitionAssignor.java",
    "clients/src/main/java/org/apache/kafka/clients/consumer/RangeAssignor.java",
    "clients/src/main/java/org/apache/kafka/clients/consumer/RoundRobinAssignor.java",
    "clients/src/main/java/org/apache/kafka/clients/consumer/CooperativeStickyAssignor.java",
    "clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractStickyAssignor.java",
    "clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractPartitionAssignor.java",
    "clients/src/main/java/org/apache/kafka/clients/consumer/internals/Utils.java",
    "clients/src/main/java/org/apache/kafka/common/TopicPartition.java",
    "clients/src/main/java/org/apache/kafka/common/TopicIdPartition.java",
    "clients/src/main/java/org/apache/kafka/common/Uuid.java",
    "clients/src/main/java/org/apache/kafka/common/Node.java",
    "clients/src/main/java/org/apache/kafka/common/PartitionInfo.java",
    "clients/src/main/java/org/apache/kafka/common/Configurable.java",
    "clients/src/main/java/org/apache/kafka/common/KafkaException.java",
    "clients/src/main/java/org/apache/kafka/common/annotation/InterfaceStability.java",
    "clients/src/main/java/org/apache/kafka/common/errors/ApiException.java",
    "clients/src/main/java/org/apache/kafka/common/utils/CircularIterator.java",
    "server-common/src/main/java/org/apache/kafka/server/common/TopicIdPartition.java",
    "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/modern/MemberAssignmentImpl.java",
]
CLIENT_DIRS = [
    "group-coordinator/group-coordinator-api/src/main/java/org/apache/kafka/coordinator/group/api/assignor",
    "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor",
]
SKIP = ("ShareGroupPartitionAssignor.java", "SimpleAssignor.java")
STANDINS = {
    "org/slf4j/Logger.java": "package org.slf4j;\npublic interface Logger {\n"
    "  default boolean isDebugEnabled() { return false; }\n"
    "  default void debug(String s, Object... a) {}\n  default void info(String s, Object... a) {}\n"
    "  default void warn(String s, Object... a) {}\n  default void error(String s, Object... a) {}\n"
    "  default void trace(String s, Object... a) {}\n}\n",
    "org/slf4j/LoggerFactory.java": "package org.slf4j;\npublic class LoggerFactory {\n"
    "  public static Logger getLogger(Class<?> c) { return new Logger() {}; }\n}\n",
    "org/apache/kafka/common/Cluster.java": "package org.apache.kafka.common;\nimport java.util.List;\n"
    "public class Cluster { public List<PartitionInfo> partitionsForTopic(String t) { return null; } }\n",
    "org/apache/kafka/common/utils/Utils.java": "package org.apache.kafka.common.utils;\nimport java.util.*;\n"
    "public class Utils {\n  public static <T extends Comparable<? super T>> List<T> sorted(Collection<T> c) {\n"
    "    List<T> l = new ArrayList<>(c); Collections.sort(l); return Collections.unmodifiableList(l); }\n"
    "  public static <T> Class<? extends T> loadClass(String k, Class<T> b) throws ClassNotFoundException {\n"
    "    throw new UnsupportedOperationException(); }\n"
    "  public static <T> T newInstance(Class<T> c) { throw new UnsupportedOperationException(); }\n}\n",
    "org/apache/kafka/common/protocol/types/Type.java": "package org.apache.kafka.common.protocol.types;\n"
    "public class Type { public static final Type INT32 = new Type(); }\n",
    "org/apache/kafka/common/protocol/types/Field.java": "package org.apache.kafka.common.protocol.types;\n"
    "public class Field { public Field(String n, Type t) {} }\n",
    "org/apache/kafka/common/protocol/types/Schema.java": "package org.apache.kafka.common.protocol.types;\n"
    "import java.nio.ByteBuffer;\npublic class Schema { public Schema(Field... f) {}\n"
    "  public int sizeOf(Object o) { throw new UnsupportedOperationException(); }\n"
    "  public void write(ByteBuffer b, Object o) { throw new UnsupportedOperationException(); }\n"
    "  public Struct read(ByteBuffer b) { throw new UnsupportedOperationException(); } }\n",
    "org/apache/kafka/common/protocol/types/Struct.java": "package org.apache.kafka.common.protocol.types;\n"
    "public class Struct { public Struct(Schema s) {}\n  public Struct set(String k, Object v) { return this; }\n"
    "  public Integer getInt(String k) { throw new UnsupportedOperationException(); } }\n",
    "org/apache/kafka/clients/consumer/ConsumerGroupMetadata.java": "package org.apache.kafka.clients.consumer;\n"
    "public class ConsumerGroupMetadata { public int generationId() { return -1; } }\n",
}


def build(kafka: Path, work: Path) -> Path:
    src, out = work / "src", work / "out"
    for rel in CLIENT_FILES:
        dest = src / rel.split("/java/", 1)[1]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(git_show(kafka, rel))
    for directory in CLIENT_DIRS:
        names = subprocess.run(
            ["git", "-C", str(kafka), "ls-tree", "--name-only", KAFKA_COMMIT, directory + "/"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for rel in names:
            if rel.endswith(SKIP):
                continue
            dest = src / rel.split("/java/", 1)[1]
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(git_show(kafka, rel))
    for rel, text in STANDINS.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    shutil.copy(HERE / "Oracle.java", src / "Oracle.java")
    out.mkdir()
    subprocess.run(["javac", "-nowarn", "-d", str(out)] + [str(p) for p in src.rglob("*.java")], check=True)
    return out


def git_show(kafka: Path, rel: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(kafka), "show", f"{KAFKA_COMMIT}:{rel}"], capture_output=True, check=True
    ).stdout


def member_name(rng: random.Random, i: int) -> str:
    kind = rng.random()
    if kind < 0.4:
        return f"C{i}"
    if kind < 0.8:
        return f"consumer-{rng.randrange(100)}-{rng.getrandbits(48):012x}"
    return rng.choice(["m\u00e9", "\U0001f600", "\uff5e", "Z", "a-b", "Aa", "BB"]) + str(i)


def random_case(rng: random.Random, name: str, large: bool = False) -> dict:
    topics = rng.sample(["a", "b", "c", "orders", "t0", "t1"], rng.randint(1, 2 if large else 4))
    ppt = {t: rng.randint(0 if rng.random() < 0.1 else 1, 128 if large else 30) for t in topics}
    n = rng.randint(2, 64) if large else rng.randint(1, 12)
    ids = list(dict.fromkeys(member_name(rng, i) for i in range(n)))
    identical = rng.random() < 0.6
    common = rng.sample(topics, rng.randint(1, len(topics)))
    members = {}
    for m in ids:
        mine = common if identical else rng.sample(topics, rng.randint(1, len(topics)))
        members[m] = {"topics": sorted(mine), "generation": None, "instance": None, "owned": []}
        if rng.random() < 0.1:
            members[m]["instance"] = f"I{rng.randrange(20)}"
    # a previous assignment: from a model run on a slightly different group, then perturbed
    if rng.random() < 0.75:
        all_tps = [TopicPartition(t, p) for t, c in ppt.items() for p in range(c)]
        owners = {}
        for tp in all_tps:
            if rng.random() < 0.85:
                owners[tp] = rng.choice(ids + ["gone-1", "gone-2"])
        style = rng.random()
        for tp, owner in owners.items():
            if owner in members:
                members[owner]["owned"].append(f"{tp.topic}:{tp.partition}")
        if style < 0.2 and len(all_tps) > 1:  # conflicting claims
            for _ in range(rng.randint(1, 3)):
                tp = rng.choice(all_tps)
                m = rng.choice(ids)
                word = f"{tp.topic}:{tp.partition}"
                if word not in members[m]["owned"]:
                    members[m]["owned"].append(word)
        gens = [None, 1, 2, 3] if style < 0.5 else [5]
        for m in ids:
            members[m]["generation"] = rng.choice(gens)
            rng.shuffle(members[m]["owned"])
    return {"assignor": name, "partitions_per_topic": ppt, "members": members}


def to_lines(case: dict) -> str:
    lines = [f"CASE {case['assignor']}"]
    # Kafka is given what AbstractPartitionAssignor.assign(Cluster, ...) passes on: subscribed topics that have
    # partitions. The models take any partitions_per_topic and keep the same topics themselves.
    subscribed = {t for spec in case["members"].values() for t in spec["topics"]}
    lines += [f"TOPIC {t} {c}" for t, c in case["partitions_per_topic"].items() if c > 0 and t in subscribed]
    for m, spec in case["members"].items():
        gen = "-" if spec["generation"] is None else str(spec["generation"])
        lines.append(
            f"MEMBER {m} {gen} {spec['instance'] or '-'} {','.join(spec['topics']) or '-'} "
            f"{','.join(spec['owned']) or '-'}"
        )
        if case["assignor"] in ("uniform", "server-range") and spec["owned"]:
            lines.append(f"PREV {m} {','.join(spec['owned'])}")
    lines.append("END")
    return "\n".join(lines) + "\n"


def main() -> None:
    kafka = Path(sys.argv[1])
    rng = random.Random(20241025)
    cases = []
    for name in sorted(ASSIGNORS):
        for k in range(135):
            case = random_case(rng, name, large=k >= 120)  # 120 small groups, 15 of up to 64 members
            if name in ("uniform", "server-range"):  # the coordinator never holds a partition twice
                seen = set()
                for spec in case["members"].values():
                    spec["owned"] = [w for w in spec["owned"] if not (w in seen or seen.add(w))]
            cases.append(case)
    with tempfile.TemporaryDirectory() as work:
        out = build(kafka, Path(work))
        answers = subprocess.run(
            ["java", "-cp", str(out), "Oracle"],
            input="".join(map(to_lines, cases)),
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=True,
        ).stdout
    blocks = answers.split("DONE\n")
    for case, block in zip(cases, blocks):
        block = block.strip()
        if block.startswith("ERROR"):
            case["kafka_error"] = block
            continue
        case["kafka"] = {}
        for line in block.splitlines():
            member, _, tps = line.partition("|")
            case["kafka"][member] = [w for w in tps.split(",") if w]
    OUT.write_text(
        json.dumps({"kafka_commit": KAFKA_COMMIT, "cases": cases}, ensure_ascii=True, separators=(",", ":")) + "\n"
    )
    print(f"{len(cases)} cases -> {OUT}")


if __name__ == "__main__":
    main()
