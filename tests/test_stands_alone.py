"""The repository stands alone: a reader's clone has nothing beside it.

No file may point at a path outside the checkout (a relative ``../`` path that climbs out of the
repository, or code that goes above the repository root), nor cite a numbered section (``§``) of a
document the repository does not hold instead of saying what it said.
"""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# a relative path that starts a token (not "common/.../X.java", not "<out>/../src")
RELATIVE_PATH = re.compile(r"(?:(?<=^)|(?<=[\s\"'`(=]))((?:\.\./)+[\w.-]+)", re.MULTILINE)
ABOVE_ROOT = re.compile(r"\bROOT\.parent\b|parents\[\s*[3-9]\s*\]")
SECTION_CITATION = re.compile("\u00a7" + r"\s*\d")


def repository_files() -> list[Path]:
    """The files a clone holds: git's list (tracked and new, not ignored)."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True, timeout=60).stdout
    return [ROOT / name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def offences(text: str, where: Path) -> list[str]:
    """What in ``text`` (the content of the file ``where``) reaches outside the repository."""
    found = []
    for match in RELATIVE_PATH.finditer(text):
        target = (where.parent / match.group(1)).resolve()
        if not target.is_relative_to(ROOT):
            found.append(f"a path outside the repository: {match.group(1)!r}")
    found += [f"code above the repository root: {m.group(0)!r}" for m in ABOVE_ROOT.finditer(text)]
    found += [f"a section citation: {m.group(0)!r}" for m in SECTION_CITATION.finditer(text)]
    return found


def test_the_checks_catch_what_they_are_for():
    readme, chapter = ROOT / "README.md", ROOT / "chapters" / "03_x.ipynb"
    assert offences("see ../notes/vectors.json", readme)
    assert offences('"' + "../" * 2 + 'elsewhere/x.md"', chapter)  # written in pieces: this file is checked too
    assert offences("ROOT" + ".parent / 'x'", readme)
    assert offences("(" + "\u00a7" + "2.1)", readme)
    assert not offences("see ../exercises/source/02.ipynb", chapter)  # chapters/../exercises: inside
    assert not offences("Mirrors: common/.../MixAll.java; default <out>/../src", readme)


def test_no_file_refers_outside_the_repository():
    files = repository_files()
    assert len(files) > 50, "the file list is suspiciously short"
    found = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{path.relative_to(ROOT)}: {o}" for o in offences(text, path)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("name", ["rocketmq_golden_public.json", "README.md"])
def test_the_conformance_vectors_live_in_the_repository(name):
    assert (ROOT / "tests" / "data" / "conformance" / name).is_file()
