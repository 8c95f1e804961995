"""The Chinese edition in JupyterLab in a real Chromium, started as ``rmqlib book --lang zh`` starts it.

One chapter with panels, legends and a multi-select (chapter 04), run cell by cell in a Chinese interface:

* the interface is Chinese (JupyterLab's language pack, the ``.[zh]`` extra, switched on by the book's
  own settings for this server, not by the reader's);
* every figure's title is Chinese, fits its plot and stays on it; no legend hides entries;
* every control's description is Chinese and shows whole (a description cut to "消费者所在..." fails);
* the Chinese text is drawn with a CJK font (Chromium says which font drew a node's glyphs): without one,
  the widths measured above are those of empty boxes, and the test says to install a CJK font.

Screenshots of every figure and of the window go to ``test-artifacts/`` (``jupyterlab-zh-04-*``).
"""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import serve_lab
from tests.browser.test_reading import ERROR_OUTPUTS_JS, LAYOUT_PROBLEMS_JS, RUN_CELL_JS, _settled_figures

pytestmark = pytest.mark.browser

NOTEBOOK = "chapters/zh/04_machine_rooms.ipynb"
CJK = re.compile(r"[\u4e00-\u9fff]")
# families that draw Chinese: Noto/Source Han (…CJK…), WenQuanYi (…Hei), PingFang, YaHei, Droid Sans Fallback
CJK_FONT = re.compile(r"CJK|Han Sans|Han Serif|Hei|PingFang|YaHei|Fallback|SimSun|Ming|Song|Kai", re.I)

VISIBLE = ".jp-NotebookPanel:not(.lm-mod-hidden)"
TITLES_JS = f"""() => [...document.querySelectorAll('{VISIBLE} .js-plotly-plot')]
    .map(gd => {{ const t = gd.querySelector('.gtitle'); return t ? t.textContent : ''; }})"""
# every control's description: its text and whether the box shows all of it
LABELS_JS = f"""() => [...document.querySelectorAll('{VISIBLE} .widget-label')]
    .filter(l => l.offsetParent !== null && l.textContent.trim())
    .map(l => ({{text: l.textContent.trim(), clipped: l.scrollWidth > l.clientWidth + 1}}))"""


@pytest.fixture(scope="module")
def jupyter_lab_zh(tmp_path_factory):
    """JupyterLab as ``rmqlib book --lang zh`` starts it (the book's settings with JupyterLab's locale), over a
    temporary copy of chapters/ and exercises/ (:func:`serve_lab`); yields ``(base_url, token)``."""
    from rmqlib.book import lab_command, language_pack_installed, language_settings_dir

    if not language_pack_installed("zh"):
        pytest.fail('JupyterLab\'s Chinese language pack is not installed: pip install -e ".[zh]"', pytrace=False)
    base = tmp_path_factory.mktemp("jupyterlab-zh")
    settings = language_settings_dir("zh", base / "runtime")
    assert lab_command(base, lang="zh", settings_dir=settings)[-1].endswith(
        NOTEBOOK.replace("04_machine_rooms", "00_preface")
    )
    with serve_lab(base, lang="zh", settings_dir=settings) as (url, token, _root):
        yield url, token


def platform_fonts(page, selector: str) -> list[str]:
    """The font families Chromium used to draw the text under the first node matching ``selector``."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        document = cdp.send("DOM.getDocument", {"depth": -1})
        node = cdp.send("DOM.querySelector", {"nodeId": document["root"]["nodeId"], "selector": selector})
        assert node["nodeId"], f"nothing matches {selector}"
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
        return [font["familyName"] for font in fonts if font["glyphCount"] > 0]
    finally:
        cdp.detach()


def test_chapter_04_in_chinese_reads_whole_in_a_chinese_interface(local_page, jupyter_lab_zh, artifacts):
    url, token = jupyter_lab_zh
    page = local_page.page
    page.add_locator_handler(
        page.locator(".jp-Dialog", has_text="内核"), lambda dialog: dialog.locator("button.jp-mod-accept").click()
    )
    page.goto(f"{url}/lab/workspaces/zh04/tree/{NOTEBOOK}?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session",
        timeout=60_000,
    )
    menus = page.locator("li.lm-MenuBar-item").all_inner_texts()
    assert "文件" in menus and "运行" in menus, f"the interface is not Chinese: menus {menus}"

    count = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
    for index in range(count):
        page.evaluate(RUN_CELL_JS, index)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
    _settled_figures(page)
    plots = page.locator(f"{VISIBLE} .js-plotly-plot").all()
    for plot in plots:  # lay out every figure before measuring it
        plot.scroll_into_view_if_needed()
    for plot in plots:  # every figure drew its data (an empty panel is a failure, not a layout)
        plot.wait_for(timeout=30_000)
    problems = page.evaluate(LAYOUT_PROBLEMS_JS)
    errors = page.evaluate(ERROR_OUTPUTS_JS)
    titles, labels = page.evaluate(TITLES_JS), page.evaluate(LABELS_JS)
    drawn = page.evaluate(f"""() => [...document.querySelectorAll('{VISIBLE} .js-plotly-plot')]
        .map(gd => (gd.data || []).filter(t => (t.x && t.x.length) || (t.y && t.y.length)).length)""")
    title_fonts = platform_fonts(page, f"{VISIBLE} .js-plotly-plot .gtitle")
    page.locator(f"{VISIBLE} .jp-MarkdownOutput h1").first.scroll_into_view_if_needed()
    prose_fonts = platform_fonts(page, f"{VISIBLE} .jp-MarkdownOutput h1")
    print(f"fonts: figure title {title_fonts}, chapter heading {prose_fonts}")
    for k, plot in enumerate(plots):
        plot.scroll_into_view_if_needed()
        plot.screenshot(path=str(artifacts / f"jupyterlab-zh-04-figure-{k + 1}.png"))
    page.screenshot(path=str(artifacts / "jupyterlab-zh-04.png"))

    assert not errors, "error output after running the chapter:\n" + "\n---\n".join(errors)
    assert len(plots) >= 3 and all(drawn), f"{len(plots)} figures, traces with data: {drawn}"
    assert all(CJK.search(title) for title in titles), f"a figure title is not Chinese: {titles}"
    assert not problems, "\n".join(problems)
    assert len(labels) >= 5 and all(CJK.search(label["text"]) for label in labels), labels
    assert not [label["text"] for label in labels if label["clipped"]], f"descriptions cut off: {labels}"
    for where, fonts in (("a figure title", title_fonts), ("the chapter heading", prose_fonts)):
        assert any(CJK_FONT.search(font) for font in fonts), (
            f"{where} is drawn with {fonts}: no CJK font, so Chinese shows as boxes "
            "(install one: apt-get install fonts-wqy-microhei, as .ci/browser-setup.sh does)"
        )
    assert not local_page.errors, local_page.errors
