"""The book's notebooks keep the chapter shape, and the CI step that checks how they are stored works.

How notebooks are stored (no widget state or plotly.js, checked outputs kept, size, kernel metadata)
is checked on the committed files by ``tools/check_committed_notebooks.py``, which ``.ci/run`` calls:
a reader who runs the chapters and saves them must still pass the README's test command.
Here we only test that the checker catches each problem.
"""

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def test_there_are_notebooks_to_check():
    assert len(CHAPTERS) >= 6
    assert [p.name[:2] for p in CHAPTERS[:6]] == ["00", "01", "02", "03", "04", "05"]


def _checker():
    """``tools/check_committed_notebooks.py`` (the CI step on the committed files), loaded as a module."""
    spec = importlib.util.spec_from_file_location("check_committed_notebooks",
                                                  ROOT / "tools" / "check_committed_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _notebook(cells, kernelspec=None, **metadata):
    spec = kernelspec or {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    return json.dumps({"cells": cells, "metadata": {"kernelspec": spec, "language_info": {"name": "python"},
                                                    **metadata}, "nbformat": 4, "nbformat_minor": 5})


def _code(source, outputs=()):
    return {"cell_type": "code", "execution_count": None, "id": "c0", "metadata": {}, "outputs": list(outputs),
            "source": source}


CHECKED = _code("# NBVAL_CHECK_OUTPUT\nprint(1)", [{"output_type": "stream", "name": "stdout", "text": "1\n"}])


def test_the_storage_check_passes_a_clean_notebook():
    assert _checker().problems(_notebook([CHECKED, _code("x = 1")])) == []


@pytest.mark.parametrize("text, complaint", [
    (_notebook([_code("fig", [{"output_type": "display_data", "metadata": {},
                                "data": {"application/vnd.plotly.v1+json": {}}}])]), "plotly figure"),
    (_notebook([CHECKED], widgets={"application/vnd.jupyter.widget-state+json": {}}), "widget state"),
    (_notebook([_code("x", [{"output_type": "stream", "name": "stdout", "text": "x"}])]), "not marked"),
    (_notebook([_code("# NBVAL_CHECK_OUTPUT\nprint(1)")]), "no stored output"),
    (_notebook([CHECKED], kernelspec={"display_name": "Python 3", "language": "python", "name": "python3"}),
     "kernelspec"),
    (_notebook([_code("s = '" + "x" * 1_000_000 + "'")]), "bytes"),
    (_notebook([_code("<script>window.PlotlyConfig = {}</script>")]), "plotly.js"),
])
def test_the_storage_check_flags_what_a_run_and_save_leaves(text, complaint):
    found = _checker().problems(text)
    assert any(complaint in problem for problem in found), found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_has_a_book_checks_itself_assert_cell_collapsed_on_the_site(path):
    nb = _load(path)
    cells = nb["cells"]
    heading = [i for i, c in enumerate(cells)
               if c["cell_type"] == "markdown" and _source(c).startswith("## The book checks itself")]
    assert heading, "no '## The book checks itself' section"
    after = []
    for cell in cells[heading[0] + 1:]:
        if cell["cell_type"] != "code":
            break
        after.append(cell)
    assert any("assert " in _source(c) for c in after), "no assert right after 'The book checks itself'"
    assert all("hide-input" in c["metadata"].get("tags", []) for c in after), "tag the checks hide-input"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_has_the_chapter_shape(path):
    text = "\n".join(_source(c) for c in _load(path)["cells"] if c["cell_type"] == "markdown")
    for part in ("What you will learn", "## Summary", "## Exercises"):
        assert part in text, f"missing {part!r}"
    assert ".java" in text or path.name.startswith("00_"), "name the Java files the chapter explains"


LOOK_UP_ONLY = {"14_glossary_and_further_reading.ipynb"}  # a glossary teaches nothing to predict


@pytest.mark.parametrize("path", [p for p in CHAPTERS if p.name[:2] >= "02" and p.name not in LOOK_UP_ONLY],
                         ids=lambda p: p.name)
def test_every_chapter_from_02_asks_the_reader_to_predict_before_it_shows(path):
    cells = _load(path)["cells"]
    asks = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "Prediction(" in _source(c)]
    assert asks, "no Prediction: ask the reader to commit to an answer before the book shows it"
    checks = [i for i, c in enumerate(cells) if _source(c).startswith("## The book checks itself")]
    assert asks[0] < checks[0], "the prediction comes before the answers"
    for i in asks:  # its code holds the explanation: collapsed in JupyterLab and on the site, or it gives it away
        meta = cells[i]["metadata"]
        assert meta.get("jupyter", {}).get("source_hidden") is True and "hide-input" in meta.get("tags", []), \
            f"cell {i}: hide the Prediction's source (jupyter.source_hidden and the hide-input tag)"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapters_that_simulate_point_to_the_simulator_appendix(path):
    cells = _load(path)["cells"]
    simulates = any(re.search(r"\b(simulate|run_variants|sweep)\(", _source(c))
                    for c in cells if c["cell_type"] == "code")
    prose = "\n".join(_source(c) for c in cells if c["cell_type"] == "markdown")
    if simulates and not path.name.startswith("13_"):
        assert "chapter 13" in prose, "say where the simulator's assumptions and counts are explained (chapter 13)"


JAVA_COMMIT = "8fc57f1468d182eea11c01e089c0250d647dc5f3"  # the RocketMQ source the book was checked against
JAVA_MENTION = re.compile(r"`[\w./-]*\.java`")
JAVA_LINK = re.compile(r"\[`[\w./-]*?([\w]+\.java)`\]\(https://github\.com/apache/rocketmq/blob/(\w+)/[\w/.-]+/\1(#L\d+)?\)")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_java_file_the_book_names_is_a_permalink_at_the_pinned_commit(path):
    for cell in _load(path)["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = _source(cell)
        linked = JAVA_LINK.findall(text)
        assert all(commit == JAVA_COMMIT for _, commit, _ in linked), "link to the pinned commit"
        bare = JAVA_MENTION.findall(JAVA_LINK.sub("", text))
        assert not bare, f"link these to the Java source at {JAVA_COMMIT[:8]}: {bare}"


def test_the_storage_check_flags_a_stale_student_notebook():
    checker = _checker()
    source = (ROOT / "exercises" / "source" / "02_sharing_evenly.ipynb").read_text(encoding="utf-8")
    nbs = {"exercises/source/02_sharing_evenly.ipynb": source}
    assert checker.stale_students(nbs) == ["exercises/student/02_sharing_evenly.ipynb: stale or missing: "
                                           "run python -m rmqlib.exercises"]
    nbs["exercises/student/02_sharing_evenly.ipynb"] = source  # solutions left in: not what the generator makes
    assert len(checker.stale_students(nbs)) == 1


CAPTION = re.compile(r"^\*Figure (\d+[a-z]?)\.(\d+) — [^\n]+\.\*$")  # chapter 07b's figures are 7b.k


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_figure_captions_are_numbered_in_order_right_after_their_figure(path):
    cells = _load(path)["cells"]
    numbers = []
    for i, cell in enumerate(cells):
        text = _source(cell)
        if cell["cell_type"] == "markdown" and text.startswith("*Figure "):
            match = CAPTION.match(text)
            assert match, f"cell {i}: a caption is one line, '*Figure N.k — what it shows.*', got {text!r}"
            assert cells[i - 1]["cell_type"] == "code", f"cell {i}: a caption follows the cell that draws the figure"
            numbers.append((match[1], int(match[2])))
    chapter = path.name.split("_", 1)[0].lstrip("0") or "0"
    assert numbers == [(chapter, k) for k in range(1, len(numbers) + 1)], numbers
