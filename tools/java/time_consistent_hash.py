"""Time RocketMQ's own AllocateMessageQueueConsistentHash (chapter 03's Java timings), from a RocketMQ checkout.

    python tools/java/time_consistent_hash.py --repo PATH [--commit REV] [--calls N]

``PATH`` is a clone of apache/rocketmq (a working tree, or a bare repository: the files are then read with
``git show REV:path``). The eight Java files the strategy needs are compiled in a temporary folder, never copied into
this repository, with our own four-class stand-ins for the libraries they import (commons-collections,
commons-lang3, RocketMQ's shaded slf4j) and TimeConsistentHash.java beside this script. Needs a JDK (javac, java).
Prints a table: one consumer's ``allocate`` call over 1,024 queues and 256 consumers, at 100 and 1,000 virtual
nodes, each call timed on its own.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMIT = "8fc57f1468d182eea11c01e089c0250d647dc5f3"  # the commit the book links to
ROCKETMQ_FILES = [
    "common/src/main/java/org/apache/rocketmq/common/message/MessageQueue.java",
    "common/src/main/java/org/apache/rocketmq/common/consistenthash/ConsistentHashRouter.java",
    "common/src/main/java/org/apache/rocketmq/common/consistenthash/HashFunction.java",
    "common/src/main/java/org/apache/rocketmq/common/consistenthash/Node.java",
    "common/src/main/java/org/apache/rocketmq/common/consistenthash/VirtualNode.java",
    "client/src/main/java/org/apache/rocketmq/client/consumer/AllocateMessageQueueStrategy.java",
    "client/src/main/java/org/apache/rocketmq/client/consumer/rebalance/AbstractAllocateMessageQueueStrategy.java",
    "client/src/main/java/org/apache/rocketmq/client/consumer/rebalance/AllocateMessageQueueConsistentHash.java",
]
# The library calls AbstractAllocateMessageQueueStrategy#check makes, and no more.
STAND_INS = {
    "org/apache/commons/collections/CollectionUtils.java": """package org.apache.commons.collections;
public final class CollectionUtils {
    public static boolean isEmpty(java.util.Collection<?> c) { return c == null || c.isEmpty(); }
}
""",
    "org/apache/commons/lang3/StringUtils.java": """package org.apache.commons.lang3;
public final class StringUtils {
    public static boolean isEmpty(CharSequence s) { return s == null || s.length() == 0; }
}
""",
    "org/apache/rocketmq/logging/org/slf4j/Logger.java": """package org.apache.rocketmq.logging.org.slf4j;
public interface Logger { void info(String format, Object... arguments); }
""",
    "org/apache/rocketmq/logging/org/slf4j/LoggerFactory.java": """package org.apache.rocketmq.logging.org.slf4j;
public final class LoggerFactory {
    public static Logger getLogger(Class<?> owner) { return (format, arguments) -> { }; }
}
""",
}
CASES = [(1024, 256, 100), (1024, 256, 1000)]


def read_source(repo: Path, commit: str, path: str) -> str:
    if (repo / path).is_file():
        return (repo / path).read_text(encoding="utf-8")
    shown = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, text=True)
    if shown.returncode != 0:
        raise SystemExit(f"time_consistent_hash: --repo: cannot read {path} at {commit}: {shown.stderr.strip()}")
    return shown.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="a clone of apache/rocketmq")
    parser.add_argument("--commit", default=COMMIT, help="the revision to read from a bare clone")
    parser.add_argument("--calls", type=int, default=5, help="calls timed per case (default 5)")
    args = parser.parse_args(argv)
    if args.calls < 1:
        parser.error("--calls: at least 1")
    for tool in ("javac", "java"):
        if shutil.which(tool) is None:
            print(f"time_consistent_hash: {tool} not found: install a JDK", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as work:
        src = Path(work) / "src"
        for path in ROCKETMQ_FILES:
            target = src / path.split("/src/main/java/")[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(read_source(args.repo, args.commit, path), encoding="utf-8")
        for path, text in STAND_INS.items():
            (src / path).parent.mkdir(parents=True, exist_ok=True)
            (src / path).write_text(text, encoding="utf-8")
        shutil.copy(HERE / "TimeConsistentHash.java", src)
        classes = Path(work) / "classes"
        sources = [str(p) for p in src.rglob("*.java")]
        subprocess.run(["javac", "-nowarn", "-d", str(classes), *sources], check=True)
        runtime = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
        print(f"AllocateMessageQueueConsistentHash at {args.commit[:8]}, {runtime}; {args.calls} calls per row\n")
        print("| queues | consumers | virtual nodes | ms per call, each | median ms |")
        print("|---:|---:|---:|---|---:|")
        for queues, consumers, vnodes in CASES:
            run = [str(v) for v in (queues, consumers, vnodes, args.calls)]
            out = subprocess.run(
                ["java", "-cp", str(classes), "TimeConsistentHash", *run], capture_output=True, text=True, check=True
            )
            times = [float(t) for t in out.stdout.split()]
            each = ", ".join(f"{t:,.0f}" for t in times)
            print(f"| {queues:,} | {consumers} | {vnodes:,} | {each} | {statistics.median(times):,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
