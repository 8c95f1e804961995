"""The site's API reference lists, under each rmqlib function and class, the chapters that use it.

``site-src/rmqlib_api.py`` (a Sphinx extension) finds the names in the chapters' code cells; these tests
check what it finds on made-up notebooks and on the book's own chapters, then build a small site with it
and read the "Used in:" links and the index data (``api-usage.json``) it writes.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("rmqlib_api", ROOT / "site-src" / "rmqlib_api.py")
api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api)


def _notebook(path: Path, *cells: str, title: str = "A chapter") -> Path:
    nb = {
        "cells": [{"cell_type": "markdown", "id": "title", "metadata": {}, "source": f"# {title}"}]
        + [
            {
                "cell_type": "code",
                "id": f"cell-{i}",
                "metadata": {},
                "source": source,
                "outputs": [],
                "execution_count": None,
            }
            for i, source in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def test_a_name_is_found_where_it_is_defined_whichever_module_it_was_imported_from():
    assert api.cell_names("from rmqlib.viz import allocation_figure\nfrom rmqlib.sim import simulate") == {
        "rmqlib.viz.figures.allocation_figure",
        "rmqlib.sim.engine.simulate",
    }
    assert api.cell_names("from rmqlib.allocation import make_cids as cids") == {"rmqlib.allocation.make_cids"}


def test_module_attributes_count_also_in_later_cells_and_constants_do_not():
    modules: dict = {}
    assert api.cell_names("from rmqlib.sim import scenarios\nimport rmqlib.allocation as alloc", modules) == set()
    assert api.cell_names("%time run = scenarios.crash()\nalloc.make_queues('T')\nalloc.MAX_QUEUES", modules) == {
        "rmqlib.sim.scenarios.crash",
        "rmqlib.allocation.make_queues",
    }
    assert api.cell_names("import rmqlib.strategies\nrmqlib.strategies.strategy_from_name('AVG')") == {
        "rmqlib.strategies.strategy_from_name"
    }
    assert api.cell_names("%%time\nfrom rmqlib.hashring import md5_hash\n!ls") == {"rmqlib.hashring.md5_hash"}
    assert api.cell_names("from os import path\nx = (") == set()  # not rmqlib; a cell that does not parse


def test_chapter_usage_lists_chapters_in_reading_order(tmp_path):
    _notebook(tmp_path / "02_b.ipynb", "from rmqlib.allocation import make_cids\nmake_cids(3)")
    _notebook(tmp_path / "01_a.ipynb", "import rmqlib.allocation as a", "a.make_cids(2); a.make_queues()")
    assert api.chapter_usage(tmp_path) == {
        "rmqlib.allocation.make_cids": ["chapters/01_a", "chapters/02_b"],
        "rmqlib.allocation.make_queues": ["chapters/01_a"],
    }


def test_the_books_chapters_are_indexed():
    usage = api.chapter_usage(ROOT / "chapters")
    assert "chapters/02_sharing_evenly" in usage["rmqlib.allocation.allocate_group"]
    assert "chapters/06_when_a_rebalance_runs" in usage["rmqlib.sim.engine.simulate"]
    assert "chapters/06_when_a_rebalance_runs" in usage["rmqlib.sim.scenarios.crash"]  # scenarios.crash(...)
    assert all(key.startswith("rmqlib.") and docs == sorted(docs) for key, docs in usage.items())


def test_every_public_module_is_on_the_page():
    modules = api.public_modules()
    assert {
        "rmqlib",
        "rmqlib.model",
        "rmqlib.strategies",
        "rmqlib.client.rebalance",
        "rmqlib.sim.scenario",
        "rmqlib.viz.figures",
    } <= set(modules)
    assert not [m for m in modules if any(part.startswith("_") for part in m.split("."))]
    page = api.api_page(["rmqlib.model"])
    assert "```{eval-rst}\n.. automodule:: rmqlib.model\n   :members:" in page


def test_the_built_page_links_each_entry_to_the_chapters_that_use_it(tmp_path):
    pytest.importorskip("myst_nb")
    sphinx_build = pytest.importorskip("sphinx.cmd.build")
    src, out = tmp_path / "src", tmp_path / "html"
    (src / "chapters").mkdir(parents=True)
    _notebook(
        src / "chapters" / "01_first.ipynb",
        "from rmqlib.allocation import make_cids\nmake_cids(2)",
        title="First chapter",
    )
    _notebook(
        src / "chapters" / "02_second.ipynb", "import rmqlib.allocation as a\na.make_cids(3)", title="Second chapter"
    )
    (src / "index.md").write_text("# Book\n\n```{toctree}\n:glob:\n\nchapters/*\napi\n```\n", encoding="utf-8")
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'site-src')!r})\n"
        "extensions = ['myst_nb', 'rmqlib_api']\n"
        "nb_execution_mode = 'off'\n"
        "source_suffix = {'.md': 'myst-nb', '.ipynb': 'myst-nb'}\n"
        "rmqlib_api_modules = ['rmqlib.allocation']\n",
        encoding="utf-8",
    )
    status = sphinx_build.build_main(["-b", "html", "-q", "-E", "-d", str(tmp_path / "doctrees"), str(src), str(out)])
    assert status == 0
    assert json.loads((out / "api-usage.json").read_text(encoding="utf-8")) == {
        "rmqlib.allocation.make_cids": ["chapters/01_first", "chapters/02_second"]
    }
    html = (out / "api.html").read_text(encoding="utf-8")
    entry = html[html.index('id="rmqlib.allocation.make_cids"') : html.index('id="rmqlib.allocation.spread_queues"')]
    assert "Used in:" in entry
    assert 'href="chapters/01_first.html"' in entry and 'href="chapters/02_second.html"' in entry
    assert "First chapter" in entry and "Second chapter" in entry
    unused = html[html.index('id="rmqlib.allocation.random_cids"') :]
    assert "Used in:" not in unused[: unused.index('id="rmqlib.allocation.', 10)]
