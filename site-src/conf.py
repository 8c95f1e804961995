"""Sphinx configuration of the rmqlib book site. Build with ``python -m rmqlib.site build`` (see docs/site.md).

The builder copies this file, index.md, the executed chapter notebooks and the
exercise notebooks into a staging directory and runs Sphinx there. Everything
the pages load is local: the alabaster theme ships with Sphinx, and plotly.js
is copied ONCE from the plotly wheel to ``_static/plotly.min.js`` and loaded by
every page from there (figures are rendered with ``include_plotlyjs=False``).

The site has two editions, English and Chinese (``zh/``), each its own Sphinx project staged from this
directory: the builder writes ``edition.json`` beside this file (the language, where the other edition's
pages are, and which pages it has), and this file reads it. Every page links to the same page in the
other edition (``_templates/layout.html``), or to the other edition's front page where it has no twin
(the API reference is English only).
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # rmqlib_api.py, the API page's extension

# what rmqlib.site.build wrote for this edition; a bare checkout of site-src/ is the English one, alone
_EDITION = {"language": "en", "twin_root": None, "twin_pages": [], "twin_language": None}
if (HERE / "edition.json").is_file():
    _EDITION.update(json.loads((HERE / "edition.json").read_text(encoding="utf-8")))
CHINESE = _EDITION["language"] == "zh"

project = "rmqlib：RocketMQ 消费者负载均衡" if CHINESE else "rmqlib: RocketMQ consumer rebalance"
author = "the rmqlib authors"
copyright = "the rmqlib authors, Apache-2.0"

# rmqlib_api writes api.md (autodoc of every public module) and adds "Used in:" chapter links to each entry
# (the Chinese edition links to the English API reference instead of building its own)
extensions = ["myst_nb"] if CHINESE else ["myst_nb", "sphinx.ext.autodoc", "rmqlib_api"]
language = "zh_CN" if CHINESE else "en"  # Sphinx's own labels (搜索, 导航, 上一页 ...) ship with Sphinx
autodoc_member_order = "bysource"
autodoc_default_options = {"show-inheritance": True}
add_module_names = False

# rmqlib.site executes every chapter first (nbclient, RMQLIB_STATIC=1) and stops the build, naming the
# notebook and cell, when one fails; Sphinx only renders the stored outputs.
nb_execution_mode = "off"
nb_execution_raise_on_error = True
nb_merge_streams = True
nb_output_stderr = "show"
# the toggle of a hidden input (every Prediction's source): in the edition's language
nb_code_prompt_show = "显示代码" if CHINESE else "Show code cell {type}"
nb_code_prompt_hide = "隐藏代码" if CHINESE else "Hide code cell {type}"

source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "zh"]  # site-src/zh holds the Chinese index.md
suppress_warnings = ["myst.header"]

html_theme = "alabaster"
html_title = project
templates_path = ["_templates"]
html_static_path = ["_static"]
html_js_files = ["plotly.min.js"]
html_css_files = ["rmqlib.css"]
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
html_theme_options = {
    "description": (
        "一本关于 Apache RocketMQ 消费者负载均衡的交互式教材"
        if CHINESE
        else "An interactive textbook on Apache RocketMQ's consumer rebalance"
    ),
    "page_width": "1240px",
    "sidebar_width": "260px",
    "fixed_sidebar": True,
    "show_relbars": True,
    "font_family": "system-ui, -apple-system, 'Segoe UI', sans-serif",
    "head_font_family": "system-ui, -apple-system, 'Segoe UI', sans-serif",
}
html_show_sourcelink = False
html_copy_source = False


# --------------------------------------------------------------------------- the link to the other edition

TWIN_LABELS = {
    "zh": ("中文", "zh-CN", "本页的中文版", "中文版的首页（本页尚无中文版）"),
    "en": ("English", "en", "This page in English", "The English edition (this page has no English twin)"),
}


def twin_link(pagename, edition=_EDITION):
    """Where page ``pagename`` of this edition links to in the other one: its twin, else the other front page.

    ``{"href": relative URL, "text": link text, "hreflang": ..., "title": ..., "twin": bool}``, or None
    for a site with one edition.
    """
    root, other = edition["twin_root"], edition["twin_language"]
    if root is None or other is None:
        return None
    up = "../" * pagename.count("/")
    twin = pagename in set(edition["twin_pages"])
    text, hreflang, title_twin, title_front = TWIN_LABELS[other]
    return {
        "href": f"{up}{root}{pagename if twin else 'index'}.html",
        "text": text,
        "hreflang": hreflang,
        "title": title_twin if twin else title_front,
        "twin": twin,
    }


def _page_context(app, pagename, templatename, context, doctree):
    context["rmqlib_twin"] = twin_link(pagename)


def setup(app):
    app.connect("html-page-context", _page_context)
