"""A plotly ``FigureWidget`` that fills the notebook's width from its first render.

Why plotly's own widget does not: since plotly 6, ``go.FigureWidget`` is an anywidget, and its front end
(``plotly/package_data/widgetbundle.js``) calls ``Plotly.newPlot`` inside anywidget's ``render({el})``.
anywidget calls ``render`` while the view's ``el`` is still a detached ``div``: JupyterLab puts the view on the
page only once ``render`` has returned. With ``layout.autosize`` plotly.js takes the width from the element's
computed style, which is empty for a detached element, so it falls back to its default width, 700 px (the height
is the figure's own, or 360 px). Nothing redraws it later: the bundle's resize hooks
(``_processLuminoMessage``: after-attach, after-show, resize) belong to the ipywidgets view class plotly 5 used
and are never called by anywidget, and ``config.responsive`` only listens to *window* resizes. Plain plotly
figures (``text/html`` output) are drawn in a ``div`` already on the page, so they fill the width.

What this class changes: only the front end's timing. Its ``_esm`` is a small module that imports plotly's bundle
unchanged (its text, from the installed plotly, as a module of its own) and calls plotly's ``render`` once the
view's element is on the page and has a width, so plotly's autosize measures the output area, and once the figure
has reached the page (plotly.py opens the widget empty and sends the figure just after; drawn from the empty state,
the plot stayed blank, as the deferred render showed when reopening a notebook). It also sets
``config.responsive`` (plotly.js's own option), so the plot follows later window resizes. Heights are untouched:
a figure that sets ``layout.height`` (the house style does) keeps it. Python-side behaviour (traits, messages,
``batch_update``, ``plotly_update``) is plotly's.
"""

from __future__ import annotations

import functools
import json

import plotly
import plotly.graph_objects as go

# waits for the element to be on the page with a width; gives up waiting for a width (not for the page) after
# FALLBACK_MS, for an element that stays 0 px wide (an empty flex item that shrinks to its content): plotly then
# draws it at its default width, as before
_WRAPPER = """// rmqlib: plotly's FigureWidget front end, unchanged, rendered once the widget's element is on the page
const source = __PLOTLY_WIDGET_ESM__;
const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
let plotly;
try {
  plotly = await import(/* webpackIgnore: true */ url);
} finally {
  URL.revokeObjectURL(url);
}
const FALLBACK_MS = 2000;

function placed(el, signal) {
  return new Promise((resolve) => {
    let timer = null;
    let frame = null;
    let finished = false;
    const watch = new ResizeObserver(() => check());
    function done(ok) {
      if (finished) return;
      finished = true;
      watch.disconnect();
      if (frame !== null) clearTimeout(frame);
      if (timer !== null) clearTimeout(timer);
      resolve(ok);
    }
    function check() {
      if (finished) return;
      if (signal && signal.aborted) return done(false);
      if (!el.isConnected) {  // anywidget renders before JupyterLab attaches the view: look again in 50 ms
        if (frame === null) frame = setTimeout(() => { frame = null; check(); }, 50);
        return;
      }
      if (el.getBoundingClientRect().width > 0) return done(true);
      if (timer === null) timer = setTimeout(() => done(true), FALLBACK_MS);
    }
    if (signal) signal.addEventListener("abort", () => done(false), { once: true });
    watch.observe(el);
    check();
  });
}

// plotly.py opens the widget with empty traits and sends the figure (_widget_layout, _widget_data) just after;
// FigureWidget.__init__ below sets _config last, so its "responsive" key says the figure has arrived
function arrived(model, signal) {
  return new Promise((resolve) => {
    const ready = () => Boolean((model.get("_config") || {}).responsive);
    if (ready()) return resolve(true);
    const onChange = () => {
      if (!ready()) return;
      model.off("change:_config", onChange);
      resolve(true);
    };
    model.on("change:_config", onChange);
    if (signal) signal.addEventListener("abort", () => { model.off("change:_config", onChange); resolve(false); },
                                        { once: true });
  });
}

export default async () => {
  const figure = await plotly.default();
  return {
    initialize(context) {
      return figure.initialize(context);
    },
    render(context) {
      let cleanup = null;
      let removed = false;
      const el = context.el;
      el.dataset.rmqlibWaits = "figure page";  // what the view still waits for (read by the browser tests)
      const met = (what) => (ok) => {
        el.dataset.rmqlibWaits = el.dataset.rmqlibWaits.replace(what, "").trim();
        return ok;
      };
      const waits = [arrived(context.model, context.signal).then(met("figure")),
                     placed(el, context.signal).then(met("page"))];
      Promise.all(waits).then((ok) => {
        if (ok.every(Boolean) && !removed) cleanup = figure.render(context);
      });
      return () => {
        removed = true;
        if (typeof cleanup === "function") cleanup();
      };
    },
  };
};
"""


@functools.cache
def widget_esm() -> str:
    """The front-end module: plotly's installed widget bundle, embedded as a string, rendered once placed."""
    plotly_esm = str(go.FigureWidget._esm)  # anywidget's FileContents of plotly/package_data/widgetbundle.js
    if "export" not in plotly_esm or "default" not in plotly_esm:
        raise RuntimeError(f"plotly {plotly.__version__}'s FigureWidget front end is not an ES module with a "
                           "default export")
    return _WRAPPER.replace("__PLOTLY_WIDGET_ESM__", json.dumps(plotly_esm))


class FigureWidget(go.FigureWidget):
    """``plotly.graph_objects.FigureWidget`` whose plot is drawn once it is on the page (see the module's notes).

    It mirrors no Java class: it is the book's display of a figure. Construct it as a ``go.FigureWidget``.
    """

    @property
    def _esm(self) -> str:  # read by anywidget's __init__, which then makes it a synced trait of this instance
        return widget_esm()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # last, after plotly.py has sent the figure: the front end draws once this has arrived (see _WRAPPER)
        self._config = {**self._config, "responsive": True}
