"""A reader's first hour, in JupyterLab in a real Chromium, started as ``rmqlib book`` starts it.

* Opening any notebook (chapters and exercises, four at a time in one page, as a reader opens a few) does not
  mark it dirty or change it on disk, and no news pop-up covers it.
* Each chapter, run cell by cell: no error or stderr output; every plotly figure is recorded right after
  the cell that drew it, and after the last cell every figure must still be what it was (a check cell
  must use its own panel, never the displayed one); no figure's title is wider than its plot or runs off its
  top; no marker covers an axis label; no legend hides entries or shows an entry without a visible key; every
  figure has a caption cell right after it. A screenshot of every figure, and of the window, goes to
  ``test-artifacts/``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.browser.conftest import LocalPage, serve_lab

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "chapters").glob("*.ipynb"))
NOTEBOOKS = CHAPTERS + sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "exercises").glob("*/*.ipynb"))
CELL_TIMEOUT_S = 120
SETTLE_S = 0.6

# every plotly figure in the current notebook: {"<cell>.<n>": what it shows}, read from the graph divs
FIGURES_JS = """() => {
    const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')];
    const out = {};
    cells.forEach((cell, i) => {
        cell.querySelectorAll('.js-plotly-plot').forEach((gd, n) => {
            if (!gd.data || !gd.layout) return;
            const title = gd.layout.title
                && (gd.layout.title.text !== undefined ? gd.layout.title.text : gd.layout.title);
            out[`${i}.${n}`] = JSON.stringify({
                title: title || '', meta: gd.layout.meta || null,
                data: gd.data.map(t => [t.type || '', t.name || '', t.x || null, t.y || null, t.customdata || null,
                                        t.text || null, t.visible === undefined ? true : t.visible]),
            });
        });
    });
    return out;
}"""

# layout problems a reader sees: a title wider than its plot, a marker over an axis label, a legend that scrolls or
# clips entries, a legend key that paints nothing (only white or transparent: plotly draws a patterned bar's key
# so unless its fill is "overlay")
LAYOUT_PROBLEMS_JS = """() => {
    const problems = [];
    const seen = c => c && c !== 'none' && c !== 'transparent' && !/^rgba\\(.*,\\s*0\\)$/.test(c)
                      && !/^rgb\\(255,\\s*255,\\s*255\\)$/.test(c);
    const paints = el => {  // the colours a key element paints, through a pattern fill's own shapes
        const st = getComputedStyle(el), out = [];
        for (const [color, opacity, width] of [[st.fill, st.fillOpacity, '1'],
                                               [st.stroke, st.strokeOpacity, st.strokeWidth]]) {
            if (parseFloat(opacity) === 0 || parseFloat(width) === 0) continue;
            const url = /url\\("?#([^")]+)"?\\)/.exec(color);
            if (!url) { out.push(color); continue; }
            const pattern = document.getElementById(url[1]);
            if (pattern) pattern.querySelectorAll('rect, path').forEach(
                shape => out.push(shape.getAttribute('fill'), shape.getAttribute('stroke')));
        }
        return out;
    };
    const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')];
    cells.forEach((cell, i) => {
        cell.querySelectorAll('.js-plotly-plot').forEach((gd, n) => {
            const svg = gd.querySelector('.main-svg');
            if (!svg) return;
            const box = svg.getBoundingClientRect();
            gd.querySelectorAll('.gtitle, .annotation').forEach(t => {
                const r = t.getBoundingClientRect();
                if (r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1))
                    problems.push(`figure ${i}.${n}: title "${t.textContent.slice(0, 60)}..."`
                                  + ` is ${Math.round(r.width)} px`
                                  + ` wide in a ${Math.round(box.width)} px plot`);
                if (r.height > 0 && r.top < box.top - 1)
                    problems.push(`figure ${i}.${n}: title "${t.textContent.slice(0, 60)}..." runs off the top edge`);
            });
            const points = [...gd.querySelectorAll('.scatterlayer .point')].map(p => p.getBoundingClientRect())
                .filter(r => r.width > 0);
            gd.querySelectorAll('.ytick text').forEach(label => {
                const r = label.getBoundingClientRect();
                if (r.width > 0 && points.some(p => p.left < r.right - 1 && p.right > r.left + 1
                                                    && p.top < r.bottom - 1 && p.bottom > r.top + 1))
                    problems.push(`figure ${i}.${n}: a marker covers the axis label "${label.textContent}"`);
            });
            gd.querySelectorAll('.legend').forEach(legend => {
                const bar = legend.querySelector('.scrollbar');
                if (bar && parseFloat(bar.getAttribute('height') || '0') > 0)
                    problems.push(`figure ${i}.${n}: the legend scrolls (entries hidden)`);
                const bg = legend.querySelector('.bg');
                if (!bg) return;
                const lb = bg.getBoundingClientRect();
                legend.querySelectorAll('.traces').forEach(tr => {
                    const r = tr.getBoundingClientRect();
                    if (r.height > 0 && (r.top < lb.top - 1 || r.bottom > lb.bottom + 1 || r.right > box.right + 1))
                        problems.push(`figure ${i}.${n}: legend entry "${tr.textContent}" is cut off`);
                    const keys = tr.querySelectorAll('.legendpoints path, .legendlines path, .legendfill path');
                    if (![...keys].some(k => paints(k).some(seen)))
                        problems.push(`figure ${i}.${n}: legend entry "${tr.textContent}" has no visible key`);
                });
            });
        });
    });
    return problems;
}"""

ERROR_OUTPUTS_JS = """() => [...document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"],'
        + '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output '
        + '.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]')]
    .map(e => e.textContent.slice(0, 400))"""

RUN_CELL_JS = """async (index) => {
    const panel = window.jupyterapp.shell.currentWidget;
    const notebook = panel.content;
    notebook.activeCellIndex = index;
    notebook.deselectAll();
    await window.jupyterapp.commands.execute('notebook:run-cell');
    const cell = notebook.widgets[index];
    return cell.model.type === 'code' ? cell.model.executionCount : -1;
}"""

# whether the cell at ``index`` displayed anything richer than text (a widget, a figure, HTML): only such a cell
# can draw a figure, so only after it does the test wait for the figures to settle
DISPLAYS_RICH_OUTPUT_JS = """(index) => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
    const outputs = cell.model.outputs ? cell.model.outputs.toJSON() : [];
    return outputs.some(o => o.output_type !== 'stream' && o.output_type !== 'error'
        && Object.keys(o.data || {}).some(mime => mime !== 'text/plain'));
}"""


def shut_down_kernels(url: str, token: str) -> None:
    """Stop every kernel an earlier test left running, so no stale widget message reaches the next page."""
    import urllib.request

    headers = {"Authorization": f"token {token}"}
    with urllib.request.urlopen(urllib.request.Request(f"{url}/api/kernels", headers=headers), timeout=30) as r:
        kernels = json.loads(r.read())
    for kernel in kernels:
        request = urllib.request.Request(f"{url}/api/kernels/{kernel['id']}", headers=headers, method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


def open_notebook(page, jupyter_lab, notebook: str):
    """Open ``notebook`` alone in a fresh workspace, with no other kernel running; wait for its cells and an idle
    kernel."""
    url, token, _ = jupyter_lab
    shut_down_kernels(url, token)
    page.add_locator_handler(
        page.locator(".jp-Dialog", has_text="Select Kernel"),
        lambda dialog: dialog.locator("button.jp-mod-accept").click(),
    )
    workspace = notebook.replace("/", "-").removesuffix(".ipynb")
    page.goto(f"{url}/lab/workspaces/{workspace}/tree/{notebook}?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session",
        timeout=60_000,
    )


# close every document, then open ``paths`` through the app's own command, and wait until each notebook's
# kernel has answered its info request (the notebook takes its language and kernel spec from that reply); fails
# after ``timeout`` ms, naming what it still waits for
OPEN_BATCH_JS = """async ([paths, timeout]) => {
    const app = window.jupyterapp;
    const waiting = new Set(paths);
    const expired = new Promise((_, reject) => setTimeout(
        () => reject(new Error(`after ${timeout} ms still waiting for a kernel to answer: ${[...waiting]}`)), timeout));
    const open = async () => {
        await app.commands.execute('application:close-all');
        const panels = await Promise.all(paths.map(path => app.commands.execute('docmanager:open', {path})));
        await Promise.all(panels.map(async panel => {
            await panel.context.ready;
            await panel.sessionContext.ready;
            await panel.sessionContext.session.kernel.info;
            waiting.delete(panel.context.path);
        }));
        return panels.map(panel => panel.context.path);
    };
    return await Promise.race([open(), expired]);
}"""
OPEN_BATCH_TIMEOUT_MS = 120_000

DIRTY_TABS_JS = "() => [...document.querySelectorAll('.lm-TabBar-tab.jp-mod-dirty')].map(tab => tab.textContent)"

# a batch of notebooks opened at once, as a reader opens a few; 4 kernels start side by side
OPENING_BATCHES = [NOTEBOOKS[i : i + 4] for i in range(0, len(NOTEBOOKS), 4)]


def _load_lab(page, url: str, token: str) -> None:
    """Load JupyterLab with no document open and wait until the app has restored (its commands exist)."""
    page.goto(f"{url}/lab/workspaces/opening?reset&token={token}")
    page.wait_for_function("() => window.jupyterapp", timeout=90_000)
    page.evaluate("async () => { await window.jupyterapp.restored; }")


@pytest.fixture(scope="module")
def untouched_lab(tmp_path_factory):
    """A JupyterLab of its own over a fresh copy of the book, for the opening tests only: the session's
    ``jupyter_lab`` is shared with tests that run chapters, and JupyterLab autosaves a notebook left dirty
    (after 120 s), so by the time these tests open it a chapter there may already differ from the commit."""
    with serve_lab(tmp_path_factory.mktemp("opening")) as lab:
        yield lab


@pytest.fixture(scope="module")
def lab_page(browser_context, untouched_lab):
    """One JupyterLab page for the module, loaded once; each opening test opens its notebooks in it."""
    url, token, _ = untouched_lab
    lp = LocalPage(browser_context)
    try:
        _load_lab(lp.page, url, token)
        yield lp
    finally:
        lp.close()


@pytest.mark.parametrize("notebooks", OPENING_BATCHES, ids=lambda b: f"{b[0].replace('/', '-')}..{Path(b[-1]).stem}")
def test_opening_notebooks_leaves_them_clean(lab_page, untouched_lab, artifacts, request, notebooks):
    url, token, root = untouched_lab
    page = lab_page.page
    errors_before = len(lab_page.errors)
    shut_down_kernels(url, token)
    try:
        opened = page.evaluate(OPEN_BATCH_JS, [notebooks, OPEN_BATCH_TIMEOUT_MS])
        assert sorted(opened) == sorted(notebooks)
        deadline = time.monotonic() + 1.5  # after the info reply, give a change of metadata time to (not) show
        while time.monotonic() < deadline:
            dirty = page.evaluate(DIRTY_TABS_JS)
            assert not dirty, f"{dirty} marked dirty on opening, before anything ran"
            time.sleep(0.25)
        toasts = page.locator(".Toastify__toast").all_inner_texts()
        assert not any("news" in text.lower() for text in toasts), toasts
        for notebook in notebooks:
            assert (root / notebook).read_bytes() == (ROOT / notebook).read_bytes(), f"{notebook} changed on disk"
        assert not lab_page.errors[errors_before:], lab_page.errors[errors_before:]
    except BaseException:
        page.screenshot(path=str(artifacts / f"FAILED-{request.node.name}.png"), timeout=10_000)
        # a dirty notebook would ask before closing: the next test starts from a fresh page
        _load_lab(page, url, token)
        raise


def _settled_figures(page, timeout_s: float = 20.0) -> dict[str, str]:
    """The figures once two readings ``SETTLE_S`` apart agree (widgets and plotly render after the cell)."""
    deadline = time.monotonic() + timeout_s
    last = page.evaluate(FIGURES_JS)
    while time.monotonic() < deadline:
        time.sleep(SETTLE_S)
        now = page.evaluate(FIGURES_JS)
        if now == last:
            return now
        last = now
    return last


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda n: n.replace("/", "-"))
def test_chapter_runs_cell_by_cell_and_its_figures_stay_put(local_page, jupyter_lab, artifacts, notebook):
    page = local_page.page
    open_notebook(page, jupyter_lab, notebook)
    count = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
    assert count > 5
    # each figure as first seen, settled; a figure may be drawn after later cells ran (plotly's bundle loads once
    # per page, slowly under load), so every cell looks for new figures, and the last look catches any still late
    drawn: dict[str, str] = {}
    for index in range(count):
        if page.evaluate(RUN_CELL_JS, index) == -1:  # a markdown cell renders text and draws no figure
            continue
        figures = page.evaluate(FIGURES_JS)
        if page.evaluate(DISPLAYS_RICH_OUTPUT_JS, index) or figures.keys() - drawn.keys():
            figures = _settled_figures(page)
        drawn.update({key: shown for key, shown in figures.items() if key not in drawn})
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=CELL_TIMEOUT_S * 1000)
    final = _settled_figures(page)
    drawn.update({key: shown for key, shown in final.items() if key not in drawn})
    errors = page.evaluate(ERROR_OUTPUTS_JS)
    widget_errors = page.locator(".jp-OutputArea-output", has_text="Error displaying widget").count()
    # lay out every figure before measuring it (cells off screen may not be rendered)
    for plot in page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .js-plotly-plot").all():
        plot.scroll_into_view_if_needed()
    layout_problems = page.evaluate(LAYOUT_PROBLEMS_JS)
    name = Path(notebook).stem
    for k, plot in enumerate(page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .js-plotly-plot").all()):
        plot.scroll_into_view_if_needed()
        plot.screenshot(path=str(artifacts / f"jupyterlab-{name}-figure-{k + 1}.png"))
    page.screenshot(path=str(artifacts / f"jupyterlab-{name}.png"))
    assert not errors, f"{notebook}: error output after running it:\n" + "\n---\n".join(errors)
    assert widget_errors == 0, f"{notebook}: a widget failed to display"
    cells = json.loads((ROOT / notebook).read_text(encoding="utf-8"))["cells"]
    captions = sum(1 for c in cells if "".join(c["source"]).startswith("*Figure "))
    # every captioned figure is drawn (the appendices of questions, the simulator and terms have none)
    assert len(drawn) >= captions, f"{notebook}: {captions} captions but {len(drawn)} figure(s) drawn"
    uncaptioned = sorted(
        {int(key.split(".")[0]) for key in drawn}
        - {i for i in range(len(cells) - 1) if "".join(cells[i + 1]["source"]).startswith("*Figure ")}
    )
    assert not uncaptioned, f"{notebook}: cells {uncaptioned} draw a figure with no caption cell after them"
    changed = sorted(key for key, shown in drawn.items() if final.get(key) != shown)
    assert not changed, f"{notebook}: figures {changed} changed after later cells ran (a check cell moved a panel?)"
    assert not layout_problems, f"{notebook}:\n" + "\n".join(layout_problems)
    assert not local_page.errors, local_page.errors
