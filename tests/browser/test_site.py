"""The static site (``python -m rmqlib.site build``) in a real Chromium, offline.

The site is built once per session into a temporary directory and served from 127.0.0.1;
every request elsewhere is aborted. Each chapter page must render every plotly figure
(an SVG ``.main-svg`` in every ``.js-plotly-plot``), and the plotly sliders that replace the
ipywidgets panels must redraw their figure to what ``allocate_group`` computes.
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


def chapter_pages(site):
    return sorted(p.relative_to(site).as_posix() for p in (site / "chapters").glob("*.html"))


def test_site_has_every_chapter_with_a_table_of_contents_in_order(built_site):
    from rmqlib.site import ROOT
    chapters = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))
    assert [p.split("/")[-1][:-5] for p in chapter_pages(built_site)] == chapters
    index = (built_site / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'href="chapters/([^"#]+)\.html"', index)
    assert list(dict.fromkeys(links)) == chapters, "the index lists the chapters in order"
    for before, after in zip(chapters, chapters[1:]):
        page = (built_site / "chapters" / f"{before}.html").read_text(encoding="utf-8")
        assert 'rel="next" title=' in page and f'href="{after}.html"' in page
    assert (built_site / "_static" / "plotly.min.js").is_file()


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
        # plotly.js is loaded once from _static, never inlined into a page, and needs no require.js
        assert "plotly.js v" not in text and "require.js" not in text and "requirejs" not in text.lower(), page
    assert not offenders, "non-local scripts/styles:\n" + "\n".join(offenders)
    assert (built_site / "_static" / "plotly.min.js").stat().st_size > 1_000_000


def test_every_chapter_renders_its_plotly_figures_offline(built_site, site_url, local_page, artifacts):
    page = local_page.page
    total = 0
    for rel in ["index.html"] + chapter_pages(built_site):
        page.goto(f"{site_url}/{rel}")
        page.wait_for_load_state("load")
        page.wait_for_function(ALL_FIGURES_RENDERED, timeout=30_000)
        counts = page.evaluate("""() => [document.querySelectorAll('div.plotly-graph-div').length,
                                         document.querySelectorAll('.js-plotly-plot .main-svg').length > 0]""")
        total += counts[0]
        # every live panel has a kernel-free stand-in: no "needs a running kernel" note on the site
        assert page.locator(".rmqlib-widget-note").count() == 0, f"{rel} shows a widget that needs a kernel"
        page.screenshot(path=str(artifacts / f"site-{rel.replace('/', '-')[:-5]}.png"), full_page=True)
    assert total >= 5, f"only {total} plotly figures on the whole site"
    assert not local_page.blocked, f"pages tried to reach other hosts: {local_page.blocked}"
    assert not local_page.errors, local_page.errors


def click_slider_step(page, plot, label: str):
    """Click the plotly slider rail above the tick labelled ``label`` (plotly picks the nearest step)."""
    plot.scroll_into_view_if_needed()
    ticks = [t for t in plot.locator("g.slider-label-group text.slider-label").all() if t.text_content().strip() == label]
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


def test_chapter_02_consumers_slider_redraws_the_figure_without_a_kernel(site_url, local_page, artifacts):
    page = local_page.page
    page.goto(f"{site_url}/chapters/02_sharing_evenly.html")
    plot = slider_plot(page)
    queues = spread_queues(10, ("broker-a",))
    before = plot.evaluate(STATE_JS)
    assert before["meta"]["consumer_count"] == 4
    assert before["meta"]["allocation"] == allocation_of(AllocateMessageQueueAveragely(), queues, make_cids(4))
    for count in (7, 12, 1):
        click_slider_step(page, plot, str(count))
        page.wait_for_function(f"gd => gd.layout.meta.consumer_count === {count}", arg=plot.element_handle(),
                               timeout=10_000)
        after = plot.evaluate(STATE_JS)
        assert after["meta"]["allocation"] == allocation_of(AllocateMessageQueueAveragely(), queues, make_cids(count))
        assert f"over {count} consumer" in after["title"]
        assert after["names"] == list(after["meta"]["allocation"])
        if count == 12:
            plot.screenshot(path=str(artifacts / "site-02-consumers-slider-12.png"))
    assert after["title"] != before["title"]
    assert not local_page.blocked and not local_page.errors


def test_chapter_03_virtual_nodes_slider_redraws_the_ring_without_a_kernel(site_url, local_page, artifacts):
    page = local_page.page
    page.goto(f"{site_url}/chapters/03_consistent_hashing.html")
    plot = slider_plot(page)
    queues, cids = spread_queues(16, ("broker-a", "broker-b")), make_cids(4)
    before = plot.evaluate(STATE_JS)
    assert before["meta"]["virtual_nodes"] == 1
    for vnodes in (10, 0, 50):
        click_slider_step(page, plot, str(vnodes))
        page.wait_for_function(f"gd => gd.layout.meta.virtual_nodes === {vnodes}", arg=plot.element_handle(),
                               timeout=10_000)
        after = plot.evaluate(STATE_JS)
        assert after["meta"]["allocation"] == allocation_of(AllocateMessageQueueConsistentHash(vnodes), queues, cids)
        assert after["title"].startswith(f"{vnodes} virtual nodes" if vnodes == 0 else f"4 consumers x {vnodes} ")
        if vnodes == 50:
            plot.screenshot(path=str(artifacts / "site-03-vnodes-slider-50.png"))
    assert after["title"] != before["title"]
    assert not local_page.blocked and not local_page.errors


def test_site_build_fails_naming_the_notebook_and_cell_when_a_chapter_errors(tmp_path):
    import nbformat

    from rmqlib.site import SiteBuildError, build
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Broken"),
                                         nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_code_cell("assert x == 2, 'the book is wrong'")])
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
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "gallery.py"), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    pictures = sorted(tmp_path.glob("*.png"))
    assert [p.stem for p in pictures] == sorted(p.stem for p in (ROOT / "docs" / "gallery").glob("*.png"))
    assert all(1_000 < p.stat().st_size < 200_000 for p in pictures)
