"""Record java.util.HashMap's key order for tests/data/java_hash_map_order.json (run by hand, needs a JDK).

``python tools/java/record_hash_map_order.py`` compiles HashMapOrder.java beside it in a temporary folder, feeds
it the cases (a few picked by hand, the rest drawn from a fixed seed: topic-like names, 1 to 40 of them) and
writes what Java printed. tests/test_protocol.py replays every case against rmqlib.protocol.java_hash_map_keys.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parents[1] / "tests" / "data" / "java_hash_map_order.json"
SEED = 20261205
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%_-"
PICKED = [
    ["d", "e", "p", "a", "k"],
    ["Aa", "BB"],
    ["BB", "Aa"],
    ["TopicTest", "TopicB", "TopicC"],
    ["TopicTest", "%RETRY%GID_simple", "TopicA"],
]


def cases() -> list[list[str]]:
    rng = random.Random(SEED)
    drawn = []
    for _ in range(60):
        names: dict[str, None] = {}
        for _ in range(rng.randint(1, 40)):
            names["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12)))] = None
        drawn.append(list(names))
    return PICKED + drawn


def main() -> None:
    keys = cases()
    with tempfile.TemporaryDirectory() as work:
        shutil.copy(HERE / "HashMapOrder.java", work)
        subprocess.run(["javac", "HashMapOrder.java"], cwd=work, check=True)
        runtime = subprocess.run(["java", "-version"], capture_output=True, text=True, check=True).stderr
        lines = "".join("\t".join(case) + "\n" for case in keys)
        printed = subprocess.run(
            ["java", "HashMapOrder"], cwd=work, input=lines, capture_output=True, text=True, check=True
        ).stdout.splitlines()
    assert len(printed) == len(keys)
    records = []
    for case, line in zip(keys, printed, strict=True):
        copied, put = line.split("\t")
        records.append({"keys": case, "copied": copied.split(" "), "put": put.split(" ")})
    head = {"java_runtime": runtime.splitlines()[0], "seed": SEED}
    body = ",\n".join("  " + json.dumps(record) for record in records)  # one case a line
    OUT.write_text(json.dumps(head)[:-1] + ', "cases": [\n' + body + "\n]}\n", encoding="utf-8")
    print(f"wrote {len(records)} cases to {OUT}")


if __name__ == "__main__":
    main()
