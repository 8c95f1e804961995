"""Draw the README's gallery: PNG pictures of the book's real figures, from the figure builders.

    python tools/gallery.py                 # writes docs/gallery/*.png
    python tools/gallery.py --out DIR       # elsewhere

Each figure is built by ``rmqlib.viz`` exactly as its chapter builds it, rendered offline with the
plotly.js that ships inside the plotly wheel, and photographed by headless Chromium (Debian's
``/usr/bin/chromium`` driven by Playwright; ``bash .ci/browser-setup.sh`` installs both). Every picture
must stay under 200 KB. Exit status 0 when every picture was written, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import plotly
import plotly.graph_objects as go
import plotly.io as pio

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "gallery"
CHROMIUM = os.environ.get("RMQLIB_CHROMIUM", "/usr/bin/chromium")
WIDTH_PX = 760
MAX_BYTES = 200_000


def _crash_timeline() -> go.Figure:
    from rmqlib.sim import scenarios, simulate
    from rmqlib.viz import ownership_timeline_figure

    return ownership_timeline_figure(simulate(scenarios.crash(), seed=1))


def _idle_load() -> go.Figure:
    from rmqlib.sim import scenarios, simulate
    from rmqlib.viz import load_figure

    run = simulate(
        scenarios.more_consumers_than_queues(produce_rate_per_queue=5.0, duration_ms=60_000, drain_ms=10_000), seed=0
    )
    return load_figure(run)


def figures() -> dict[str, Callable[[], go.Figure]]:
    """Picture name -> the call that builds it (the chapter it comes from is in the name)."""
    from rmqlib.viz import allocation_view, imbalance_vs_vnodes_figure, process_queue_view, ring_view

    return {
        "02-avg-allocation": lambda: allocation_view("AVG", queues=10, consumers=4, brokers=("broker-a",)),
        "03-hash-ring": lambda: ring_view(consumers=4, queues=16, virtual_nodes=10),
        "03-imbalance-vs-virtual-nodes": lambda: imbalance_vs_vnodes_figure(
            consumers=8, queues=64, vnode_counts=(1, 2, 5, 10, 20, 50, 100, 200)
        ),
        "06-crash-timeline": _crash_timeline,
        "07-process-queue": lambda: process_queue_view(messages=12, seed=3, step=6, slow=0),
        "10-idle-consumers": _idle_load,
    }


def draw(out: Path = OUT, names: list[str] | None = None) -> list[Path]:
    """Write the pictures (all, or ``names``) to ``out``; return their paths. Raises if one is too big."""
    from playwright.sync_api import sync_playwright

    builders = figures()
    unknown = sorted(set(names or ()) - set(builders))
    if unknown:
        raise ValueError(f"unknown picture(s) {unknown}; known: {sorted(builders)}")
    out.mkdir(parents=True, exist_ok=True)
    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    written = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": WIDTH_PX + 40, "height": 900})
            for name in names or list(builders):
                fig = builders[name]()
                html = pio.to_html(
                    fig,
                    include_plotlyjs=False,
                    full_html=False,
                    default_width=f"{WIDTH_PX}px",
                    config={"displayModeBar": False, "staticPlot": True},
                )
                page_file = Path(tmp) / f"{name}.html"
                page_file.write_text(
                    f"<html><head><script src='{plotly_js.as_uri()}'></script></head>"
                    f"<body style='margin:8px;background:white'>{html}</body></html>",
                    encoding="utf-8",
                )
                page.goto(page_file.as_uri())
                plot = page.locator(".js-plotly-plot").first
                plot.locator(".main-svg").first.wait_for(timeout=30_000)
                path = out / f"{name}.png"
                plot.screenshot(path=str(path))
                size = path.stat().st_size
                if size >= MAX_BYTES:
                    raise ValueError(f"{path.name} is {size} bytes, over the {MAX_BYTES} byte limit")
                written.append(path)
        finally:
            browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Draw the README's gallery from the book's figure builders.")
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT.relative_to(ROOT)})")
    parser.add_argument("names", nargs="*", help="pictures to draw (default: all)")
    args = parser.parse_args(argv)
    try:
        written = draw(args.out, args.names or None)
    except (ValueError, OSError) as error:
        print(f"gallery: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"{path.stat().st_size // 1000:4d} KB  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
