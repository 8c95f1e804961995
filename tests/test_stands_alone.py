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
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
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


NOTEBOOK_DIRS = (
    "chapters",
    "chapters/zh",
    "exercises/source",
    "exercises/source/zh",
    "exercises/student",
    "exercises/student/zh",
)
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def broken_links(markdown: str, where: Path) -> list[str]:
    """Relative links in ``markdown`` (of the notebook ``where``) to a file that is not there.

    A Chinese notebook sits one folder deeper than its English twin, so a link copied from the
    English unchanged would point at the wrong place.
    """
    found = []
    for target in MARKDOWN_LINK.findall(markdown):
        if re.match(r"[a-zA-Z][\w+.-]*:|#|/", target):  # a URL, an anchor on the page, an absolute path
            continue
        if not (where.parent / target.split("#")[0]).exists():
            found.append(target)
    return found


def test_the_link_check_knows_where_a_chinese_notebook_is():
    english, chinese = ROOT / "chapters" / "02_x.ipynb", ROOT / "chapters" / "zh" / "02_x.ipynb"
    assert broken_links("[set](../exercises/source/02_sharing_evenly.ipynb)", english) == []
    assert broken_links("[set](../exercises/source/02_sharing_evenly.ipynb)", chinese) == [
        "../exercises/source/02_sharing_evenly.ipynb"
    ]
    up_two = "../" * 2  # written in pieces: this file is checked too
    assert (
        broken_links(f"[set]({up_two}exercises/source/zh/02_sharing_evenly.ipynb#q1) [Java](https://x/y.java)", chinese)
        == []
    )


def test_every_relative_link_in_a_notebook_of_either_edition_resolves():
    import json

    found = []
    for folder in NOTEBOOK_DIRS:
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
            found += [f"{path.relative_to(ROOT)}: {link}" for link in broken_links(text, path)]
    assert not found, "\n".join(found)
