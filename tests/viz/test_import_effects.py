"""Importing rmqlib.viz changes no plotly setting; the static renderer is switched on only when asked, once."""

import os
import subprocess
import sys

import plotly.io as pio

from rmqlib.viz.static import STATIC_RENDERER, StaticHtmlRenderer, use_static_renderer


def test_importing_viz_with_rmqlib_static_set_leaves_plotlys_renderer_alone():
    code = ("import plotly.io as pio\n"
            "before = pio.renderers.default\n"
            "import rmqlib.viz\n"
            "print(pio.renderers.default == before, 'rmqlib_static' in pio.renderers)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "RMQLIB_STATIC": "1"})
    assert done.stdout.split() == ["True", "False"]


def test_use_static_renderer_is_idempotent():
    before = pio.renderers.default
    try:
        use_static_renderer()
        first = pio.renderers[STATIC_RENDERER]
        use_static_renderer()
        assert pio.renderers[STATIC_RENDERER] is first and isinstance(first, StaticHtmlRenderer)
        assert pio.renderers.default == STATIC_RENDERER
    finally:
        pio.renderers.default = before
