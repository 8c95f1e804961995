"""Importing rmqlib.viz changes no plotly setting (renderer, templates); the static renderer comes only when asked."""

import os
import subprocess
import sys

import plotly.io as pio

from rmqlib.viz.static import STATIC_RENDERER, StaticHtmlRenderer, use_static_renderer


def test_importing_viz_with_rmqlib_static_set_leaves_plotlys_renderer_alone():
    code = (
        "import plotly.io as pio\n"
        "before = pio.renderers.default\n"
        "import rmqlib.viz\n"
        "print(pio.renderers.default == before, 'rmqlib_static' in pio.renderers)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "RMQLIB_STATIC": "1"},
    )
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


def test_importing_viz_leaves_plotlys_templates_alone_until_a_figure_is_styled():
    """The house template is registered the first time a figure is styled (or it is asked for), not on import."""
    code = (
        "import plotly.io as pio\n"
        "before = (list(pio.templates), pio.templates.default)\n"
        "import rmqlib.viz\n"
        "from rmqlib.viz import style\n"
        "print((list(pio.templates), pio.templates.default) == before, 'rmqlib' in pio.templates)\n"
        "fig = rmqlib.viz.allocation_view('AVG', 4, 2)\n"
        "print('rmqlib' in pio.templates, style.TEMPLATE is style.house_template(),\n"
        "      fig.layout.template.layout.colorway[0] == style.TEMPLATE.layout.colorway[0] == '#2E91E5',\n"
        "      pio.templates.default == before[1])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False", "True", "True", "True", "True"]


def test_asking_for_the_template_registers_it_once():
    code = (
        "import plotly.io as pio\n"
        "from rmqlib.viz import style\n"
        "print('rmqlib' in pio.templates)\n"
        "first = style.TEMPLATE\n"
        "print('rmqlib' in pio.templates, style.house_template() is first,\n"
        "      pio.templates['rmqlib'].to_plotly_json() == first.to_plotly_json())\n"
        "print(style.resolved_template('rmqlib') == first.to_plotly_json())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "True", "True", "True"]
