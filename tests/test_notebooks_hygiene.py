"""Committed notebooks stay small and honest: checked outputs stored, no widget state, no plotly.js, asserts present."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
NOTEBOOKS = CHAPTERS + sorted((ROOT / "exercises").glob("*/*.ipynb"))
MAX_BYTES = 1_000_000


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def test_there_are_notebooks_to_check():
    assert len(CHAPTERS) >= 6
    assert [p.name[:2] for p in CHAPTERS[:6]] == ["00", "01", "02", "03", "04", "05"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_is_under_one_megabyte(path):
    assert path.stat().st_size < MAX_BYTES


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_widget_state_and_no_inline_plotlyjs(path):
    nb = _load(path)
    assert "widgets" not in nb.get("metadata", {}), "widget state stored in notebook metadata"
    text = path.read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" not in text
    assert "application/vnd.jupyter.widget-view+json" not in text
    assert "application/vnd.plotly.v1+json" not in text, "a plotly figure output is stored"
    assert "Plotly.newPlot" not in text and "plotly.js v" not in text and "window.PlotlyConfig" not in text
    for cell in nb["cells"]:
        assert "widgets" not in cell.get("metadata", {})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_checked_cell_has_stored_output_and_others_none(path):
    nb = _load(path)
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        if _source(cell).startswith("# NBVAL_CHECK_OUTPUT"):
            assert cell["outputs"], f"cell {i} is marked NBVAL_CHECK_OUTPUT but has no stored output"
            assert all(o["output_type"] in ("stream", "execute_result") for o in cell["outputs"])
        else:
            assert not cell["outputs"], f"cell {i} keeps outputs but is not marked NBVAL_CHECK_OUTPUT"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_has_a_check_yourself_assert_cell(path):
    nb = _load(path)
    cells = nb["cells"]
    heading = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and "Check yourself" in _source(c)]
    assert heading, "no 'Check yourself' section"
    after = [c for c in cells[heading[0] + 1:] if c["cell_type"] == "code"]
    assert any("assert " in _source(c) for c in after), "no assert after 'Check yourself'"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_has_the_chapter_shape(path):
    text = "\n".join(_source(c) for c in _load(path)["cells"] if c["cell_type"] == "markdown")
    for part in ("What you will learn", "## Summary", "## Exercises"):
        assert part in text, f"missing {part!r}"
    assert ".java" in text or path.name.startswith("00_"), "name the Java files the chapter explains"
