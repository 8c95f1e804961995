"""The repository stands alone: a reader's clone has nothing beside it.

No file may read or name a folder outside the checkout (the team's working notes live in
one beside it), nor cite its sheets instead of saying what they said.
"""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Written as patterns so that this file does not name what it forbids.
FORBIDDEN = {
    "a path to the folder beside the checkout": re.compile(r"\.\.[/\\]shared\b|parent\s*/\s*[\"']shared[\"']"),
    "a citation of a sheet that is not in the repository": re.compile(
        r"fact[ -]sheet|reference[ -]sheet|rebalance[-]facts|§\s*\d", re.IGNORECASE),
}
SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".hypothesis", ".ipynb_checkpoints", "_build", "site",
             "test-artifacts", ".venv", "build"}


def repository_files() -> list[Path]:
    """The files a clone holds: git's list (tracked and new, not ignored), or a walk outside git."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True, timeout=60).stdout
        return [ROOT / name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]
    except (OSError, subprocess.SubprocessError):
        return [p for p in ROOT.rglob("*")
                if p.is_file() and not SKIP_DIRS.intersection(p.relative_to(ROOT).parts) and ".egg-info" not in str(p)]


def offences(text: str) -> list[str]:
    return [f"{what}: {m.group(0)!r}" for what, pattern in FORBIDDEN.items() for m in pattern.finditer(text)]


def test_the_patterns_catch_what_they_are_for():
    assert offences("see " + ".." + "/shared/conformance")
    assert offences("ROOT.parent / " + '"shared"' + ' / "x"')
    assert offences("(fact " + "sheet, Part 2)") and offences("(reference " + "sheet, part 3)")
    assert offences("\u00a7" + "2.1") and offences("rebalance" + "-facts.md")
    assert not offences("shared by the group; a shared_queue; ../sharedness")


def test_no_file_refers_outside_the_repository():
    files = repository_files()
    assert len(files) > 50, "the file list is suspiciously short"
    found = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{path.relative_to(ROOT)}: {o}" for o in offences(text)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("name", ["rocketmq_golden_public.json", "README.md"])
def test_the_conformance_vectors_live_in_the_repository(name):
    assert (ROOT / "tests" / "data" / "conformance" / name).is_file()
