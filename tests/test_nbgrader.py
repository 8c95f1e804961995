"""Every exercise set round-trips through the real nbgrader (0.9): generate_assignment, then autograde.

One course in a temporary directory, one assignment holding every set. Two students submit: "solver"
hands in the instructor version (every solution filled in) and must get every automatically graded
point; "untouched" hands in nbgrader's own release unchanged and must get none. Answers in words
are graded by hand: autograde leaves the written one for the instructor and scores the blank one 0.

The Chinese edition round-trips too, as a second assignment ("book_zh"): nbgrader releases every
translated set (``exercises/source/zh``) with its solutions hidden, and autogrades a few of them
(ZH_GRADED: their code is the English sets' code, which the first assignment grades in full) to full
marks and to zero.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from nbgrader.api import Gradebook  # noqa: E402

from rmqlib import exercises  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "exercises" / "source").glob("*.ipynb"))
ASSIGNMENT = "book"
STUDENTS = ("solver", "untouched")
ZH_SOURCES = sorted((ROOT / "exercises" / "source" / "zh").glob("*.ipynb"))
ZH_ASSIGNMENT = "book_zh"
# autograded in Chinese: sets with code answers and an answer in words (every translated set is released)
ZH_GRADED = [p for p in ZH_SOURCES if p.stem in ("02_sharing_evenly", "07b_the_hand_over")]
ASSIGNMENTS = {ASSIGNMENT: (SOURCES, SOURCES), ZH_ASSIGNMENT: (ZH_SOURCES, ZH_GRADED)}  # released, submitted


def _nbgrader(course: Path, *args: str) -> None:
    """Run nbgrader in the course. A kernel can fail to start because another test's kernel took the TCP port
    jupyter_client had just picked for it (ZMQError: Address already in use, a race between processes); such a
    run is repeated once (``--force`` makes it idempotent), any other failure fails the test."""
    for _attempt in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "nbgrader", *args, "--force", "--log-level=WARN"],
            cwd=course,
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode == 0 or "Address already in use" not in done.stdout + done.stderr:
            break
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    assert ZH_GRADED, "the Chinese sets autograded here are generated into exercises/source/zh"
    course = tmp_path_factory.mktemp("course")
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_assignments = [dict(name=a) for a in {tuple(ASSIGNMENTS)!r}]\n"
        f"c.CourseDirectory.db_students = [dict(id=s) for s in {STUDENTS!r}]\n"
        "c.ExecutePreprocessor.timeout = 300\n",
        encoding="utf-8",
    )
    for assignment, (released, submitted) in ASSIGNMENTS.items():
        source = course / "source" / assignment
        source.mkdir(parents=True)
        for path in released:
            shutil.copy(path, source / path.name)
        _nbgrader(course, "generate_assignment", assignment)
        release = course / "release" / assignment
        for student, origin in (("solver", source), ("untouched", release)):
            handed_in = course / "submitted" / student / assignment
            handed_in.mkdir(parents=True)
            for path in submitted:
                shutil.copy(origin / path.name, handed_in / path.name)
        _nbgrader(course, "autograde", assignment)
    return course


def _scores(course: Path, student: str, assignment: str = ASSIGNMENT) -> dict[str, tuple[float, float]]:
    """Per notebook: (automatically graded score, its maximum)."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        result = {}
        for path in ASSIGNMENTS[assignment][1]:
            nb = gb.find_submission_notebook(path.stem, assignment, student)
            result[path.stem] = (nb.code_score, sum(g.max_score for g in nb.grades if g.cell_type == "code"))
        return result


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_release_hides_every_solution_like_our_own_student_versions(course, assignment):
    for path in ASSIGNMENTS[assignment][0]:
        released = nbformat.read(course / "release" / assignment / path.name, as_version=4)
        ours = exercises.student_version(nbformat.read(path, as_version=4))
        assert len(released.cells) == len(ours.cells), path.name
        for theirs, mine in zip(released.cells, ours.cells):
            if exercises.is_solution(mine):
                assert exercises.BEGIN not in theirs.source and "SOLUTION" not in theirs.source, path.name
                assert (
                    "raise NotImplementedError()" in theirs.source
                    if mine.cell_type == "code"
                    else theirs.source == mine.source
                ), path.name


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_solution_autogrades_to_full_marks(course, assignment):
    scores = _scores(course, "solver", assignment)
    assert sorted(scores) == sorted(p.stem for p in ASSIGNMENTS[assignment][1])
    assert scores and all(maximum > 0 for _, maximum in scores.values())
    assert {name: score for name, (score, _) in scores.items()} == {
        name: maximum for name, (_, maximum) in scores.items()
    }


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_untouched_release_autogrades_to_zero(course, assignment):
    scores = _scores(course, "untouched", assignment)
    assert {name: score for name, (score, _) in scores.items()} == dict.fromkeys(scores, 0)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_answers_in_words_wait_for_the_instructor_unless_left_blank(course, assignment):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        manual = {
            s: [
                g
                for path in ASSIGNMENTS[assignment][1]
                for g in gb.find_submission_notebook(path.stem, assignment, s).grades
                if g.cell_type == "markdown"
            ]
            for s in STUDENTS
        }
    assert manual["solver"], "at least one set asks for an answer in words"
    # a written answer waits for the instructor; the blank one from the release scores 0 by itself
    assert all(g.needs_manual_grade and g.manual_score is None for g in manual["solver"])
    assert all(not g.needs_manual_grade and g.score == 0 for g in manual["untouched"])
