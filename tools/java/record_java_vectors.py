"""Record what OpenJDK answers for the Java semantics rmqlib leans on (run by hand, needs a JDK).

``python tools/java/record_java_vectors.py`` compiles HashMapOrder.java and StringBytes.java beside it in a temporary
folder, feeds them cases (a few picked by hand, the rest drawn from a fixed seed) and writes what Java printed:

* tests/data/java_hash_map_order.json: the key order of a copied HashMap and of one filled by puts, for 1 to 40
  topic-like names (replayed against ``rmqlib.protocol.java_hash_map_keys``);
* tests/data/java_string_bytes.json: ``String#hashCode`` and ``getBytes(UTF_8)`` of strings mixing ASCII, Latin-1,
  CJK, surrogate pairs and lone surrogates (replayed against ``java_string_hash`` and ``rmqlib.hashring.md5_hash``).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "tests" / "data"
SEED = 20261205
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%_-"
PICKED_KEYS = [
    ["d", "e", "p", "a", "k"],
    ["Aa", "BB"],
    ["BB", "Aa"],
    ["TopicTest", "TopicB", "TopicC"],
    ["TopicTest", "%RETRY%GID_simple", "TopicA"],
]
PICKED_STRINGS = [
    "",
    "abc",
    "polygenelubricants",
    "TagA",
    "10.0.0.1@1001-0",
    "\u00e9\u4e2d",
    "\ud83d\ude00x",
    "a\ud83db",
]
UNITS = [(0x20, 0x7E), (0xA0, 0xFF), (0x4E00, 0x4E2F), (0xD800, 0xDBFF), (0xDC00, 0xDFFF)]


def key_cases(rng: random.Random) -> list[list[str]]:
    drawn = []
    for _ in range(60):
        names: dict[str, None] = {}
        for _ in range(rng.randint(1, 40)):
            names["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12)))] = None
        drawn.append(list(names))
    return PICKED_KEYS + drawn


def string_cases(rng: random.Random) -> list[str]:
    drawn = []
    for _ in range(80):
        units = []
        for _ in range(rng.randint(1, 10)):
            if rng.random() < 0.2:  # a well-formed pair
                units += [rng.randint(0xD800, 0xDBFF), rng.randint(0xDC00, 0xDFFF)]
            else:
                low, high = rng.choice(UNITS)
                units.append(rng.randint(low, high))
        drawn.append("".join(map(chr, units)))
    return PICKED_STRINGS + drawn


def run_java(work: str, program: str, lines: str) -> list[str]:
    done = subprocess.run(["java", program], cwd=work, input=lines, capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def main() -> None:
    rng = random.Random(SEED)
    keys, strings = key_cases(rng), string_cases(rng)
    with tempfile.TemporaryDirectory() as work:
        for program in ("HashMapOrder", "StringBytes"):
            shutil.copy(HERE / f"{program}.java", work)
            subprocess.run(["javac", f"{program}.java"], cwd=work, check=True)
        runtime = subprocess.run(["java", "-version"], capture_output=True, text=True, check=True).stderr
        orders = run_java(work, "HashMapOrder", "".join("\t".join(case) + "\n" for case in keys))
        units = ["".join(f"{ord(c):04x} " for c in s).strip() for s in strings]
        hashes = run_java(work, "StringBytes", "".join(u + "\n" for u in units))
    head = {"java_runtime": runtime.splitlines()[0], "seed": SEED}
    records = []
    for case, line in zip(keys, orders, strict=True):
        copied, put = line.split("\t")
        records.append({"keys": case, "copied": copied.split(" "), "put": put.split(" ")})
    _write(DATA / "java_hash_map_order.json", head, records)
    records = []
    for u, line in zip(units, hashes, strict=True):
        code, utf8 = line.split("\t")
        records.append({"utf16": u, "hash_code": int(code), "utf8": utf8})
    _write(DATA / "java_string_bytes.json", head, records)
    print(f"wrote {len(keys)} key sets and {len(strings)} strings to {DATA}")


def _write(path: Path, head: dict, records: list[dict]) -> None:
    body = ",\n".join("  " + json.dumps(record) for record in records)  # one case a line
    path.write_text(json.dumps(head)[:-1] + ', "cases": [\n' + body + "\n]}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
