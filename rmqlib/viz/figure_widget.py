"""A plotly ``FigureWidget`` whose plot takes the notebook's width once it is on the page.

Why plotly's own widget does not: since plotly 6, ``go.FigureWidget`` is an anywidget, and its front end
(``plotly/package_data/widgetbundle.js``) calls ``Plotly.newPlot`` inside anywidget's ``render({el})``, while the
view's element is still detached: JupyterLab puts it on the page only once ``render`` has returned. plotly.js
measures the detached element, finds no width and falls back to its default, 700 px; nothing redraws it later (the
resize hooks of plotly 5's ipywidgets view are never called by anywidget, and ``config.responsive`` listens only
to *window* resizes). Plain plotly figures are drawn into an element already on the page, so they fill the width.
This is plotly.py issue #5208.

What this class changes: its front end (``_esm``) is a small module that loads plotly's bundle unchanged (the
installed plotly's own text, sent in the widget's opening state as ``_plotly_bundle``) once per page, and lets it
draw at once, as plotly does. Then, whenever the plot's element and the drawn plot differ in width, it asks
plotly.js to resize an autosized plot: first once JupyterLab has attached the view (a timer looks until then),
later whenever the output area changes width (a ``ResizeObserver``). The resize goes through the hook plotly.js
installs for ``config.responsive`` (set here), so it is plotly's own resize, by the right plotly instance. A plot
is never held back: at worst (an element that never gets a width) it stays as plotly drew it. Heights are
untouched: a figure that sets ``layout.height`` (the house style does) keeps it, also in the browser's copy of the
figure, from which plotly's resize deletes it. Python-side behaviour is plotly's.

How the bundle loads matters. anywidget imports each widget's module anew and gives a model 2 s to load it and
initialize; plotly's own widget evaluates its 5 MB bundle within that time for every figure on the page. On a
busy machine that missed the 2 s (a notebook reopened with its kernel running restores all its figures at once),
and the figure was never drawn ("[anywidget] Failed to initialize model."). Here the bundle is evaluated once per
page, and outside that limit: a model's initialize only starts it, and its views wait for it.
"""

from __future__ import annotations

import functools
import hashlib

import plotly
import plotly.graph_objects as go
from traitlets import Unicode, default

# the hook plotly.js puts on a graph div drawn with config.responsive: Plots.resize of that div, skipped while hidden
RESIZE_HOOK = "_responsiveChartHandler"

_WRAPPER = """// rmqlib: plotly's FigureWidget front end, unchanged, loaded once per page; the plot follows its
// element's width (see rmqlib/viz/figure_widget.py)
const KEY = "__PLOTLY_KEY__";  // names the bundle's exact text

function loadPlotly(model) {
  globalThis[KEY] ??= (async () => {
    const url = URL.createObjectURL(new Blob([model.get("_plotly_bundle")], { type: "text/javascript" }));
    try {
      return await import(/* webpackIgnore: true */ url);
    } finally {
      URL.revokeObjectURL(url);
    }
  })().catch((error) => {
    delete globalThis[KEY];  // a later widget tries again
    throw error;
  });
  return globalThis[KEY];
}

// el is plotly's graph div. Once it is on the page, and again whenever its width changes, an autosized plot whose
// drawn width differs from the element's is resized by plotly.js's own hook. Until the first resize (or a first
// fit), a timer looks every POLL_MS: a ResizeObserver alone missed the attach in some runs (the element is drawn
// and observed while detached). After that the observer follows the output area's width. A width is asked for
// once, so a rounding difference cannot loop.
const POLL_MS = 100;

function followWidth(el) {
  let fitted = false;
  let asked = null;
  let timer = null;
  function check() {
    const layout = el._fullLayout;
    const width = Math.round(el.getBoundingClientRect().width);
    if (!el.isConnected || !layout || !layout.autosize || width < 1) return;
    if (Math.abs(width - layout.width) <= 1) {
      fitted = true;
      return;
    }
    const resize = el.__RESIZE_HOOK__;
    if (width === asked || typeof resize !== "function") return;
    asked = width;
    el.dataset.rmqlibResized = String(Number(el.dataset.rmqlibResized || 0) + 1);  // read by the browser tests
    keepHeight(el);
    resize();
  }
  function poll() {
    timer = null;
    check();
    if (!fitted && asked === null) timer = setTimeout(poll, POLL_MS);
  }
  const watch = new ResizeObserver(() => check());
  watch.observe(el);
  poll();
  return () => {
    watch.disconnect();
    if (timer !== null) clearTimeout(timer);
  };
}

// plotly.js's resize deletes layout.height from the browser's copy of the figure before it re-measures (the drawn
// height stays); put back the height the figure set, so that copy keeps matching the Python figure
function keepHeight(el) {
  const height = el.layout && el.layout.height;
  if (height === undefined || typeof el.on !== "function") return;
  function restore() {
    el.removeListener("plotly_relayout", restore);
    if (el.layout && el.layout.height === undefined) el.layout.height = height;
  }
  el.on("plotly_relayout", restore);
}

// initialize only starts loading plotly, outside anywidget's 2 s limit (the module docstring says why); views
// wait for it. Updates Python sends before plotly's model listens are missed, as with plotly's own widget.
export default () => {
  let ready = null;
  return {
    initialize(context) {
      ready = loadPlotly(context.model).then(async (plotly) => {
        const figure = await plotly.default();
        await figure.initialize(context);
        return figure;
      });
      ready.catch((error) => console.error("[rmqlib] plotly's widget front end did not load:", error));
    },
    async render(context) {
      const figure = await ready;
      if (context.signal && context.signal.aborted) return undefined;  // the view went while plotly loaded
      const cleanup = figure.render(context);
      const unwatch = followWidth(context.el);
      return () => {
        unwatch();
        if (typeof cleanup === "function") cleanup();
      };
    },
  };
};
"""


@functools.cache
def plotly_bundle() -> str:
    """plotly's installed widget front end (``plotly/package_data/widgetbundle.js``), checked for what we use."""
    bundle = str(go.FigureWidget._esm)  # anywidget's FileContents of the file
    if "export" not in bundle or "default" not in bundle:
        raise RuntimeError(
            f"plotly {plotly.__version__}'s FigureWidget front end is not an ES module with a default export"
        )
    if RESIZE_HOOK not in bundle:
        raise RuntimeError(f"plotly {plotly.__version__}'s plotly.js no longer installs {RESIZE_HOOK}")
    return bundle


def bundle_key(bundle: str) -> str:
    """The page-wide name the front end loads ``bundle`` under: another text (another plotly) gets another name."""
    return "rmqlib-plotly-widget-" + hashlib.sha256(bundle.encode()).hexdigest()[:16]


@functools.cache
def widget_esm() -> str:
    """The front-end module: loads :func:`plotly_bundle` once per page and watches the plot's width."""
    return _WRAPPER.replace("__PLOTLY_KEY__", bundle_key(plotly_bundle())).replace("__RESIZE_HOOK__", RESIZE_HOOK)


class FigureWidget(go.FigureWidget):
    """``plotly.graph_objects.FigureWidget`` whose plot fills its output's width (see the module's notes).

    It mirrors no Java class: it is the book's display of a figure. Construct it as a ``go.FigureWidget``.
    """

    # in the state the widget opens with, so the front end has it when it initializes
    _plotly_bundle = Unicode().tag(sync=True)

    @default("_plotly_bundle")
    def _default_plotly_bundle(self) -> str:
        return plotly_bundle()

    @property
    def _esm(self) -> str:  # read by anywidget's __init__, which then makes it a synced trait of this instance
        return widget_esm()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # plotly.js installs its resize hook only for responsive plots; plotly's __init__ has just set _config to {}
        self._config = {**self._config, "responsive": True}
