"""Sphinx configuration of the rmqlib book site. Build with ``python -m rmqlib.site build`` (see docs/site.md).

The builder copies this file, index.md, the executed chapter notebooks and the
exercise notebooks into a staging directory and runs Sphinx there. Everything
the pages load is local: the alabaster theme ships with Sphinx, and plotly.js
is copied ONCE from the plotly wheel to ``_static/plotly.min.js`` and loaded by
every page from there (figures are rendered with ``include_plotlyjs=False``).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # rmqlib_api.py, the API page's extension

project = "rmqlib: RocketMQ consumer rebalance"
author = "the rmqlib authors"
copyright = "the rmqlib authors, Apache-2.0"

# rmqlib_api writes api.md (autodoc of every public module) and adds "Used in:" chapter links to each entry
extensions = ["myst_nb", "sphinx.ext.autodoc", "rmqlib_api"]
autodoc_member_order = "bysource"
autodoc_default_options = {"show-inheritance": True}
add_module_names = False

# rmqlib.site executes every chapter first (nbclient, RMQLIB_STATIC=1) and stops the build, naming the
# notebook and cell, when one fails; Sphinx only renders the stored outputs.
nb_execution_mode = "off"
nb_execution_raise_on_error = True
nb_merge_streams = True
nb_output_stderr = "show"

source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
suppress_warnings = ["myst.header"]

html_theme = "alabaster"
html_title = "rmqlib: RocketMQ consumer rebalance"
html_static_path = ["_static"]
html_js_files = ["plotly.min.js"]
html_css_files = ["rmqlib.css"]
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
html_theme_options = {
    "description": "An interactive textbook on Apache RocketMQ's consumer rebalance",
    "page_width": "1240px",
    "sidebar_width": "260px",
    "fixed_sidebar": True,
    "show_relbars": True,
    "font_family": "system-ui, -apple-system, 'Segoe UI', sans-serif",
    "head_font_family": "system-ui, -apple-system, 'Segoe UI', sans-serif",
}
html_show_sourcelink = False
html_copy_source = False
