"""Exercise notebooks: student versions hide every solution and fail only where a solution is missing.

The tests run on student versions generated afresh from ``exercises/source`` and, for the Chinese
edition, ``exercises/source/zh`` (not on the files in
``exercises/student``, which a student fills in and saves). That the committed student files match
their committed sources is checked on the commit by ``tools/check_committed_notebooks.py`` in CI.
"""

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from rmqlib import exercises  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "exercises" / "source").glob("*.ipynb"))
# The Chinese edition (python -m rmqlib.translations build); a set not translated yet is simply absent
ZH_SOURCES = sorted((ROOT / "exercises" / "source" / "zh").glob("*.ipynb"))
RUBRIC = {"en": "Rubric", "zh": "评分标准"}  # how an answer in words announces its rubric, per edition


def _lang(path):
    return "zh" if path.parent.name == "zh" else "en"


CHAPTER_NUMBERS = ("02", "03", "04", "05")


def test_every_chapter_from_02_to_05_has_an_exercise_notebook_with_two_graded_parts():
    names = [p.name for p in SOURCES]
    for number in CHAPTER_NUMBERS:
        matching = [n for n in names if n.startswith(number + "_")]
        assert matching, f"no exercise notebook for chapter {number}"
        nb = nbformat.read(SOURCES[names.index(matching[0])], as_version=4)
        assert sum(exercises.is_solution(c) for c in nb.cells) >= 2
        assert sum(exercises.is_test(c) for c in nb.cells) >= 2


def test_every_set_asks_at_least_one_question_answered_in_words_and_graded_by_hand():
    assert ZH_SOURCES, "the Chinese exercise sets are generated into exercises/source/zh"
    for path in SOURCES + ZH_SOURCES:
        nb = nbformat.read(path, as_version=4)
        manual = [
            c
            for c in nb.cells
            if c.cell_type == "markdown" and exercises.is_solution(c) and c.metadata["nbgrader"].get("grade")
        ]
        assert manual, f"{path.name}: add an 'explain why' question with a rubric"


def test_solution_cells_are_marked_like_nbgrader():
    for path in SOURCES + ZH_SOURCES:
        nb = nbformat.read(path, as_version=4)
        ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
        assert len(ids) == len(set(ids)), f"{path.name}: duplicate grade_id"
        for cell in nb.cells:
            nbg = cell.metadata.get("nbgrader")
            if not nbg:
                continue
            assert nbg["schema_version"] == 3
            if nbg["solution"] and nbg["grade"]:  # an answer in words, graded by hand, with a rubric
                assert cell.cell_type == "markdown" and nbg["points"] > 0 and not nbg["locked"], path.name
                assert RUBRIC[_lang(path)] in cell.source and exercises.BEGIN in cell.source, path.name
            elif nbg["solution"]:
                assert nbg == {
                    "solution": True,
                    "grade": False,
                    "grade_id": nbg["grade_id"],
                    "locked": False,
                    "schema_version": 3,
                }
                assert exercises.BEGIN in cell.source and exercises.END in cell.source, path.name
            else:
                assert nbg["grade"] and nbg["locked"] and nbg["points"] > 0
                assert "check(" in cell.source, f"{path.name}: a test cell should call rmqlib.exercises.check"


@pytest.fixture(scope="module")
def students(tmp_path_factory) -> dict[str, Path]:
    """Student versions generated now from the instructor sources, by name."""
    written = exercises.generate(ROOT / "exercises" / "source", tmp_path_factory.mktemp("student"))
    assert [p.name for p in written] == [p.name for p in SOURCES]
    return {p.name: p for p in written}


@pytest.fixture(scope="module")
def students_zh(tmp_path_factory) -> dict[str, Path]:
    """Student versions of the Chinese sets generated now, by name."""
    written = exercises.generate(ROOT / "exercises" / "source" / "zh", tmp_path_factory.mktemp("student_zh"))
    assert [p.name for p in written] == [p.name for p in ZH_SOURCES]
    return {p.name: p for p in written}


def test_a_chinese_student_version_runs_the_english_ones_code_so_it_fails_where_the_english_fails(
    students, students_zh
):
    """The English student versions are executed below; a Chinese one has the same code cells and nbgrader
    marks (but for the language line), so an unanswered Chinese set fails exactly where the English does."""
    from rmqlib import translations

    line = translations.LANGUAGE_LINE.format(lang="zh")
    for name, path in students_zh.items():
        assert name in students, f"{name}: a Chinese set with no English set"
        zh, en = nbformat.read(path, as_version=4), nbformat.read(students[name], as_version=4)
        assert [c.cell_type for c in zh.cells] == [c.cell_type for c in en.cells], name
        assert sum(line in c.source for c in zh.cells if c.cell_type == "code") == 1, name
        for mine, theirs in zip(zh.cells, en.cells):
            assert mine.metadata.get("nbgrader") == theirs.metadata.get("nbgrader"), name
            if mine.cell_type == "code":
                assert "\n".join(x for x in mine.source.split("\n") if x != line) == theirs.source, (name, mine.id)
            elif exercises.is_solution(theirs):  # an answer in words: blank in both
                assert mine.source == theirs.source == exercises.TEXT_STUB, name


def test_student_versions_hide_every_solution_in_both_editions(students_zh):
    for path in students_zh.values():
        text = path.read_text(encoding="utf-8")
        assert exercises.BEGIN not in text and exercises.END not in text and "参考答案" not in text, path.name


def test_generating_student_versions_is_deterministic(students, tmp_path):
    again = exercises.generate(ROOT / "exercises" / "source", tmp_path)
    assert {p.name: p.read_text(encoding="utf-8") for p in again} == {
        name: p.read_text(encoding="utf-8") for name, p in students.items()
    }


def test_student_versions_hide_every_solution(students):
    for path in students.values():
        text = path.read_text(encoding="utf-8")
        assert exercises.BEGIN not in text and exercises.END not in text
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None
            if exercises.is_solution(cell):  # code: the stub raises; words: the answer cell is blank
                assert (
                    "raise NotImplementedError()" in cell.source
                    if cell.cell_type == "code"
                    else cell.source == exercises.TEXT_STUB
                )


def test_clear_solution_keeps_indentation_and_surroundings():
    src = "def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n    ### END SOLUTION\nprint(f)"
    assert exercises.clear_solution_source(src) == (
        "def f(x):\n    y = 1\n    # YOUR CODE HERE\n    raise NotImplementedError()\nprint(f)"
    )
    assert exercises.clear_solution_source("x = 1") == exercises.CODE_STUB
    with pytest.raises(ValueError):
        exercises.clear_solution_source("### BEGIN SOLUTION\nx = 1")


def test_check_reports_wrong_and_missing_answers(capsys):
    exercises.check(3, 3, "three")
    with pytest.raises(AssertionError):
        exercises.check(2, 3, "three", "count again")
    assert "count again" in capsys.readouterr().out
    with pytest.raises(NotImplementedError):
        exercises.check(None, 3, "three")
    exercises.check(None, None, "nothing", none_is_answer=True)


def test_main_exits_2_with_one_line_for_a_missing_source_dir(tmp_path, capsys):
    assert exercises.main(["--source", str(tmp_path / "nope"), "--dest", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("name", [p.name for p in SOURCES])
def test_student_version_fails_only_with_not_implemented_error(students, name):
    from nbclient import NotebookClient

    nb = nbformat.read(students[name], as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    failing = [
        (i, cell, out)
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]
    assert failing, "an unanswered student notebook should not pass its checks"
    for i, cell, out in failing:
        # A solution cell raises its stub; a check cell may only fail because the answer it checks is still a stub.
        assert out.ename == "NotImplementedError", f"cell {i} failed with {out.ename}: {out.evalue}\n{cell.source}"
        assert exercises.is_solution(cell) or exercises.is_test(cell), f"cell {i} is neither solution nor check"
    solution_cells = [i for i, c in enumerate(nb.cells) if exercises.is_solution(c) and c.cell_type == "code"]
    failed = {i for i, _, _ in failing}
    for i in solution_cells:
        # every exercise is unanswered: its solution cell or the check right after it fails
        following_test = next((j for j in range(i + 1, len(nb.cells)) if exercises.is_test(nb.cells[j])), None)
        assert i in failed or following_test in failed, f"cell {i}: an unanswered exercise passed its check"
