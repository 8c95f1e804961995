"""The static site (``python -m rmqlib.site build``) in a real Chromium, offline.

The site is built once per session into a temporary directory and served from 127.0.0.1;
every request elsewhere is aborted. Each chapter page must render every plotly figure
(an SVG ``.main-svg`` in every ``.js-plotly-plot``), and the plotly sliders that replace the
ipywidgets panels must redraw their figure to what ``allocate_group`` computes.

Both editions: the English at the root, the Chinese under ``zh/``; every page links to the same page in
the other edition (or, where it has none, to the other edition's front page), and the link resolves.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from rmqlib.allocation import allocate_group, make_cids, spread_queues
from rmqlib.strategies import AllocateMessageQueueAveragely, AllocateMessageQueueConsistentHash

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.browser

ALL_FIGURES_RENDERED = """() => {
    const divs = [...document.querySelectorAll('div.plotly-graph-div')];
    return divs.every(d => d.classList.contains('js-plotly-plot') && d.querySelector('.main-svg'));
}"""


EDITIONS = {"": "chapters", "zh/": "chapters/zh"}  # where each edition is on the site, and in the repository


def chapter_pages(site, edition=""):
    return sorted(p.relative_to(site).as_posix() for p in (site / edition / "chapters").glob("*.html"))


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_site_has_every_chapter_with_a_table_of_contents_in_order(built_site, edition):
    from rmqlib.site import ROOT

    chapters = sorted(p.stem for p in (ROOT / EDITIONS[edition]).glob("*.ipynb"))
    assert len(chapters) >= 6
    assert [p.split("/")[-1][:-5] for p in chapter_pages(built_site, edition)] == chapters
    index = (built_site / edition / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'href="chapters/([^"#]+)\.html"', index)
    assert list(dict.fromkeys(links)) == chapters, "the index lists the chapters in order"
    for before, after in zip(chapters, chapters[1:]):
        page = (built_site / edition / "chapters" / f"{before}.html").read_text(encoding="utf-8")
        assert 'rel="next" title=' in page and f'href="{after}.html"' in page
    assert (built_site / edition / "_static" / "plotly.min.js").is_file()


def twin_href(page: Path) -> str:
    links = re.findall(r'<a class="rmqlib-twin-link" href="([^"]+)"', page.read_text(encoding="utf-8"))
    assert len(links) == 1, f"{page}: {len(links)} links to the other edition"
    return links[0]


def test_every_page_links_to_its_twin_in_the_other_edition_and_the_link_resolves(built_site):
    pages = [p for p in sorted(built_site.rglob("*.html")) if "_static" not in p.parts and "_sources" not in p.parts]
    zh_root = built_site / "zh"
    english = [p for p in pages if not p.is_relative_to(zh_root)]
    chinese = [p for p in pages if p.is_relative_to(zh_root)]
    assert len(english) > 20 and len(chinese) > 20
    for page in pages:
        other_root, this_root = (built_site, zh_root) if page in chinese else (zh_root, built_site)
        target = (page.parent / twin_href(page)).resolve()
        assert target.is_file(), f"{page.relative_to(built_site)} links to a missing {twin_href(page)}"
        twin = other_root / page.relative_to(this_root)
        if twin.is_file():  # the same page in the other edition, and it links back
            assert target == twin.resolve(), f"{page.relative_to(built_site)} -> {target}"
            assert (twin.parent / twin_href(twin)).resolve() == page.resolve()
        else:  # no twin (the API reference is English only; a chapter not translated yet): the front page
            assert target == (other_root / "index.html").resolve(), f"{page.relative_to(built_site)} -> {target}"
    assert not (zh_root / "api.html").exists() and (built_site / "api.html").is_file()
    # every Chinese chapter has its English twin (the Chinese is generated from it)
    assert all((built_site / p.relative_to(zh_root)).is_file() for p in chinese if "chapters" in p.parts)


def test_the_chinese_edition_speaks_chinese_and_reaches_the_english_api_reference(built_site):
    index = (built_site / "zh" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in index or "<html lang='zh-CN'" in index
    assert "章节" in index and "练习" in index and "RocketMQ 消费者负载均衡" in index
    assert "搜索" in index, "Sphinx's own labels in Chinese (language = zh_CN)"
    api = re.findall(r'<a class="rmqlib-api-link" href="([^"]+)"', index)
    assert api == ["../api.html"] and (built_site / "api.html").is_file()
    chapter = (built_site / "zh" / "chapters" / "02_sharing_evenly.html").read_text(encoding="utf-8")
    assert "<title>02 · 平均分配" in chapter, "the chapter's own Chinese title"
    predictions = (built_site / "zh" / "chapters" / "11_pop_and_other_designs.html").read_text(encoding="utf-8")
    assert "显示代码" in predictions and "Show code cell" not in predictions, "a hidden cell's toggle in Chinese"
    english = (built_site / "index.html").read_text(encoding="utf-8")
    assert '<html lang="en"' in english and "Chapters" in english and "章节" not in english


def test_no_page_loads_a_script_or_style_from_another_host(built_site):
    tag = re.compile(r"<(script|link|img|iframe)\b[^>]*>", re.I)
    attr = re.compile(r'\b(?:src|href)\s*=\s*["\']([^"\']*)["\']', re.I)
    offenders = []
    for page in sorted(built_site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        for match in tag.finditer(text):
            if match.group(1).lower() == "link" and re.search(r'rel="(next|prev|index|search)"', match.group(0)):
                continue  # navigation links between pages, not loaded resources
            for url in attr.findall(match.group(0)):
                if re.match(r"(https?:)?//", url.strip(), re.I):
                    offenders.append(f"{page.relative_to(built_site)}: {match.group(0)[:160]}")
        # plotly.js is loaded once from _static, never inlined into a page, and needs no require.js (in the
        # scripts: the API reference's prose may name require.js, as rmqlib.viz.static's docstring does)
        scripts = "\n".join(re.findall(r"<script\b[^>]*>.*?</script>", text, re.S | re.I))
        assert "plotly.js v" not in scripts and "require" not in scripts.lower(), page
    assert not offenders, "non-local scripts/styles:\n" + "\n".join(offenders)
    assert (built_site / "_static" / "plotly.min.js").stat().st_size > 1_000_000


SCROLLING_BLOCKS_JS = """() => [...document.querySelectorAll("div.body pre")]
    .filter(pre => pre.scrollWidth > pre.clientWidth + 1)
    .map(pre => pre.innerText.split("\\n").reduce((a, b) => (b.length > a.length ? b : a), ""))"""


def test_every_chapter_renders_its_plotly_figures_offline(built_site, site_url, local_page, artifacts):
    page = local_page.page
    total = 0
    for rel in ["index.html"] + chapter_pages(built_site) + ["zh/index.html"] + chapter_pages(built_site, "zh/"):
        page.goto(f"{site_url}/{rel}")
        page.wait_for_load_state("load")
        page.wait_for_function(ALL_FIGURES_RENDERED, timeout=30_000)
        counts = page.evaluate("""() => [document.querySelectorAll('div.plotly-graph-div').length,
                                         document.querySelectorAll('.js-plotly-plot .main-svg').length > 0]""")
        total += counts[0]
        # every live panel has a kernel-free stand-in: no "needs a running kernel" note on the site
        assert page.locator(".rmqlib-widget-note").count() == 0, f"{rel} shows a widget that needs a kernel"
        # code and printed output fit the text column: no block to scroll sideways to read
        wide = page.evaluate(SCROLLING_BLOCKS_JS)
        assert not wide, f"{rel}: these blocks scroll sideways (their longest lines): {wide}"
        page.screenshot(path=str(artifacts / f"site-{rel.replace('/', '-')[:-5]}.png"), full_page=True)
    assert total >= 5, f"only {total} plotly figures on the whole site"
    assert not local_page.blocked, f"pages tried to reach other hosts: {local_page.blocked}"
    assert not local_page.errors, local_page.errors


def click_slider_step(page, plot, label: str):
    """Click the plotly slider rail above the tick labelled ``label`` (plotly picks the nearest step)."""
    plot.scroll_into_view_if_needed()
    ticks = [
        t for t in plot.locator("g.slider-label-group text.slider-label").all() if t.text_content().strip() == label
    ]
    assert ticks, f"no slider step labelled {label!r}"
    tick = ticks[0].bounding_box()
    rail = plot.locator("rect.slider-rail-touch-rect").first.bounding_box()
    page.mouse.click(tick["x"] + tick["width"] / 2, rail["y"] + rail["height"] / 2)


STATE_JS = """gd => ({title: gd.layout.title.text, meta: gd.layout.meta,
                     names: gd.data.filter(t => t.visible !== false).map(t => t.name)})"""


def slider_plot(page):
    plot = page.locator(".js-plotly-plot", has=page.locator("g.slider-container")).first
    plot.wait_for(timeout=30_000)
    plot.locator(".main-svg").first.wait_for(timeout=30_000)
    return plot


def allocation_of(strategy, queues, cids):
    return {cid: [str(mq) for mq in mqs] for cid, mqs in allocate_group(strategy, queues, cids).items()}


def _chinese(text):
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_chapter_02_consumers_slider_redraws_the_figure_without_a_kernel(site_url, local_page, artifacts, edition):
    page = local_page.page
    page.goto(f"{site_url}/{edition}chapters/02_sharing_evenly.html")
    plot = slider_plot(page)
    queues = spread_queues(10, ("broker-a",))
    before = plot.evaluate(STATE_JS)
    assert before["meta"]["consumer_count"] == 4
    assert before["meta"]["allocation"] == allocation_of(AllocateMessageQueueAveragely(), queues, make_cids(4))
    for count in (7, 12, 1):
        click_slider_step(page, plot, str(count))
        page.wait_for_function(
            f"gd => gd.layout.meta.consumer_count === {count}", arg=plot.element_handle(), timeout=10_000
        )
        after = plot.evaluate(STATE_JS)
        assert after["meta"]["allocation"] == allocation_of(AllocateMessageQueueAveragely(), queues, make_cids(count))
        # the same numbers in both editions; the words in the edition's language
        assert f"over {count} consumer" in after["title"] if not edition else _chinese(after["title"])
        assert after["names"] == list(after["meta"]["allocation"])
        if count == 12:
            plot.screenshot(path=str(artifacts / f"site-{edition.rstrip('/') or 'en'}-02-consumers-slider-12.png"))
    assert after["title"] != before["title"]
    assert not local_page.blocked and not local_page.errors


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_chapter_03_virtual_nodes_slider_redraws_the_ring_without_a_kernel(site_url, local_page, artifacts, edition):
    page = local_page.page
    page.goto(f"{site_url}/{edition}chapters/03_consistent_hashing.html")
    plot = slider_plot(page)
    queues, cids = spread_queues(16, ("broker-a", "broker-b")), make_cids(4)
    before = plot.evaluate(STATE_JS)
    assert before["meta"]["virtual_nodes"] == 1
    for vnodes in (10, 0, 50):
        click_slider_step(page, plot, str(vnodes))
        page.wait_for_function(
            f"gd => gd.layout.meta.virtual_nodes === {vnodes}", arg=plot.element_handle(), timeout=10_000
        )
        after = plot.evaluate(STATE_JS)
        assert after["meta"]["allocation"] == allocation_of(AllocateMessageQueueConsistentHash(vnodes), queues, cids)
        if not edition:
            assert after["title"].startswith(f"{vnodes} virtual nodes" if vnodes == 0 else f"4 consumers x {vnodes} ")
        else:
            assert _chinese(after["title"]) and str(vnodes) in after["title"]
        if vnodes == 50:
            plot.screenshot(path=str(artifacts / f"site-{edition.rstrip('/') or 'en'}-03-vnodes-slider-50.png"))
    assert after["title"] != before["title"]
    assert not local_page.blocked and not local_page.errors


def test_site_build_fails_naming_the_notebook_and_cell_when_a_chapter_errors(tmp_path):
    import nbformat

    from rmqlib.site import SiteBuildError, build

    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Broken"),
            nbformat.v4.new_code_cell("x = 1"),
            nbformat.v4.new_code_cell("assert x == 2, 'the book is wrong'"),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "99_broken.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(SiteBuildError) as info:
        build(out=tmp_path / "html", stage_dir=tmp_path / "src", chapters=[path], exercises=[], log=lambda m: None)
    message = str(info.value)
    assert "99_broken.ipynb" in message and "cell 3 of 3 " in message and "AssertionError" in message, message
    assert not (tmp_path / "html" / "index.html").exists()


def test_the_gallery_command_draws_every_picture(tmp_path):
    """``python tools/gallery.py --out DIR`` (the README's gallery) still runs and writes small PNGs."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gallery.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    pictures = sorted(tmp_path.glob("*.png"))
    assert [p.stem for p in pictures] == sorted(p.stem for p in (ROOT / "docs" / "gallery").glob("*.png"))
    assert all(1_000 < p.stat().st_size < 200_000 for p in pictures)
