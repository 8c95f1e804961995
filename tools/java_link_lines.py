"""Check every line-anchored link of the chapters against RocketMQ's source and store what it found.

    python tools/java_link_lines.py --repo PATH-TO-A-ROCKETMQ-GIT-REPOSITORY

For each anchored link it records whether the line exists at the pinned commit and, for a link named after a class
or member, whether that line declares it (``tests/test_java_links.py`` holds the chapters to these findings, so a
new or changed link fails until this runs again). Exits 1 if a link is wrong.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import test_java_links as links  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="a git repository of apache/rocketmq (bare or not)")
    repo = Path(parser.parse_args().repo)

    @cache
    def lines(path: str) -> list[str]:
        return subprocess.run(
            ["git", "-C", str(repo), "show", f"{links.JAVA_COMMIT}:{path}"], check=True, capture_output=True, text=True
        ).stdout.splitlines()

    found = {}
    for chapter in links.CHAPTERS:
        for text, url, file, line in links.anchored_links(chapter):
            found[f"{text} {url}"] = links.verdict(text, file, lines(file), line)
    links.CHECKED.write_text(json.dumps(found, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    wrong = [key for key, entry in found.items() if not entry["exists"] or entry.get("declares") is False]
    print(f"{len(found)} anchored links checked, {len(wrong)} wrong")
    for key in wrong:
        print("  ", key)
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
