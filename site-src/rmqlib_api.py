"""The site's API reference: every public function and class of rmqlib, and the chapters that use it.

A Sphinx extension (loaded by ``conf.py``), in three parts:

* :func:`chapter_usage` reads the code cells of ``chapters/*.ipynb`` and finds what each one takes from
  rmqlib: names imported with ``from rmqlib... import name`` and attributes reached through an imported
  module (``scenarios.crash(...)`` after ``from rmqlib.sim import scenarios``). Each name is resolved to
  the object it is, so ``from rmqlib.viz import allocation_figure`` counts for
  ``rmqlib.viz.figures.allocation_figure``, where autodoc documents it.
* at ``builder-inited`` it writes ``api.md``: one section per public module of rmqlib, each an
  ``automodule`` of the members defined there (undocumented public functions and classes included);
* ``autodoc-process-docstring`` appends "Used in:" and a link to every chapter that uses the entry, as
  d2l's library reference does, and ``build-finished`` writes the whole index to ``api-usage.json``
  beside the pages (``{"rmqlib.allocation.allocate_group": ["chapters/02_sharing_evenly", ...]}``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PACKAGE = "rmqlib"
API_DOC = "api"
USAGE_FILE = "api-usage.json"
# the book's tooling, not its library: documented nowhere else either
SKIPPED_MODULES = ("rmqlib.__main__",)


# --------------------------------------------------------------------------- what the chapters use

_TIMING_MAGICS = ("%time ", "%timeit ", "%prun ")


def _line(line: str) -> str:
    """One line as Python: ``%time x = f()`` keeps ``x = f()``; other magics and shell lines become blank."""
    text = line.lstrip()
    if text.startswith(_TIMING_MAGICS):
        return text.split(" ", 1)[1]
    return "" if text.startswith(("%", "!")) else line


def _code(source: str) -> str:
    """A cell's source as Python (see :func:`_line`; a ``%%time`` cell's first line goes, the rest stays)."""
    return "\n".join(_line(line) for line in source.splitlines())


def _key(obj: Any) -> str | None:
    """``module.qualname`` of a function or class (where autodoc documents it), else None."""
    if inspect.isclass(obj) or inspect.isfunction(obj):
        module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if isinstance(module, str) and module.split(".")[0] == PACKAGE and isinstance(qualname, str):
            return f"{module}.{qualname}"
    return None


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def cell_names(source: str, modules: dict[str, Any] | None = None) -> set[str]:
    """The rmqlib functions and classes one code cell uses, as ``module.qualname``.

    ``modules`` maps a name to the rmqlib module it is bound to; a cell's imports are added to it, so that
    passing one dict to every cell of a notebook in order follows the kernel's namespace (a module imported
    in one cell and used in a later one).
    """
    modules = {} if modules is None else modules
    try:
        tree = ast.parse(_code(source))
    except SyntaxError:
        return set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] == PACKAGE
        ):
            source_module = _import(node.module)
            if source_module is None:
                continue
            for alias in node.names:
                obj = getattr(source_module, alias.name, None)
                if obj is None:
                    obj = _import(f"{node.module}.{alias.name}")
                if inspect.ismodule(obj):
                    modules[alias.asname or alias.name] = obj
                elif (key := _key(obj)) is not None:
                    used.add(key)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != PACKAGE:
                    continue
                if alias.asname:
                    if (module := _import(alias.name)) is not None:
                        modules[alias.asname] = module
                elif (module := _import(PACKAGE)) is not None:
                    modules[PACKAGE] = module  # `import rmqlib.sim` binds `rmqlib`
    if modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                chain: list[str] = []
                root: ast.expr = node
                while isinstance(root, ast.Attribute):
                    chain.append(root.attr)
                    root = root.value
                if not isinstance(root, ast.Name) or root.id not in modules:
                    continue
                obj = modules[root.id]
                for attr in reversed(chain):
                    obj = getattr(obj, attr, None)
                    if not inspect.ismodule(obj):
                        break
                if (key := _key(obj)) is not None:
                    used.add(key)
    return used


def notebook_names(path: Path) -> set[str]:
    """Every rmqlib function and class the code cells of the notebook at ``path`` use."""
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    used: set[str] = set()
    modules: dict[str, Any] = {}
    for cell in notebook.get("cells", ()):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            used |= cell_names("".join(source) if isinstance(source, list) else source, modules)
    return used


def chapter_usage(chapters: Path, prefix: str = "chapters") -> dict[str, list[str]]:
    """``{"module.qualname": [docname, ...]}`` over ``chapters/*.ipynb``, chapters in reading (file) order.

    A docname is the page's Sphinx name, ``prefix/<notebook stem>``.
    """
    usage: dict[str, list[str]] = {}
    for path in sorted(Path(chapters).glob("*.ipynb")):
        for key in sorted(notebook_names(path)):
            usage.setdefault(key, []).append(f"{prefix}/{path.stem}")
    return dict(sorted(usage.items()))


# --------------------------------------------------------------------------- the page


def public_modules() -> list[str]:
    """Every importable module of rmqlib whose dotted name has no part starting with ``_``, sorted."""
    package = importlib.import_module(PACKAGE)
    names = [PACKAGE] + [info.name for info in pkgutil.walk_packages(package.__path__, f"{PACKAGE}.")]
    public = [
        name
        for name in names
        if name not in SKIPPED_MODULES and not any(part.startswith("_") for part in name.split("."))
    ]
    return sorted(name for name in public if _import(name) is not None)


def api_page(modules: Iterable[str]) -> str:
    """The MyST source of the API page: an introduction, then one ``automodule`` section per module."""
    lines = [
        "# API reference",
        "",
        "Every public function and class of `rmqlib`, module by module, from its docstring. An entry that a",
        "chapter uses ends with **Used in:** and a link to each such chapter (found in the chapters' code",
        "cells when the site is built), so you can go from a function to the pages that show it at work.",
        "",
    ]
    for module in modules:
        lines += [
            f"## `{module}`",
            "",
            "```{eval-rst}",
            f".. automodule:: {module}",
            "   :members:",
            "   :ignore-module-all:",
            "```",
            "",
        ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- Sphinx hooks


def _builder_inited(app: Any) -> None:
    srcdir = Path(app.srcdir)
    app.env.rmqlib_usage = chapter_usage(srcdir / "chapters")
    page = srcdir / f"{API_DOC}.md"
    modules = app.config.rmqlib_api_modules
    text = api_page(public_modules() if modules is None else modules)
    if not page.is_file() or page.read_text(encoding="utf-8") != text:
        page.write_text(text, encoding="utf-8")


def _skip_member(app: Any, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    """Keep a module's public functions and classes even without a docstring (autodoc drops those)."""
    if what == "module" and skip and not name.startswith("_") and _key(obj) is not None:
        return False
    return None


def _used_in(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    if what not in ("function", "class", "exception"):
        return
    docs = getattr(app.env, "rmqlib_usage", {}).get(_key(obj) or name, [])
    if docs:
        lines += ["", "**Used in:** " + ", ".join(f":doc:`/{doc}`" for doc in docs)]


def _build_finished(app: Any, exception: Exception | None) -> None:
    if exception is None:
        usage = getattr(app.env, "rmqlib_usage", {})
        (Path(app.outdir) / USAGE_FILE).write_text(json.dumps(usage, indent=1) + "\n", encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.autodoc")
    app.add_config_value("rmqlib_api_modules", None, "env")  # None: every public module of rmqlib
    app.connect("builder-inited", _builder_inited)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-docstring", _used_in)
    app.connect("build-finished", _build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
