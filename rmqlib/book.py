"""Open the book in JupyterLab: ``rmqlib book`` (or ``python -m rmqlib.book``); ``--lang zh`` for the Chinese edition.

It starts ``jupyter lab`` on the whole repository (``chapters/`` and ``exercises/`` in the file
browser), opens the preface (``--lang zh``: the Chinese preface, ``chapters/zh/00_preface.ipynb``),
and sets these things for this server only:

* :class:`BookContentsManager`, so that opening a chapter does not change it. JupyterLab copies the
  running kernel's ``language_info`` (with the exact Python version) into a notebook as soon as the
  kernel starts, which marks the document dirty and lets autosave write it back. The manager hands
  the notebook to JupyterLab with the metadata this server's kernel will report, and on save puts
  back what the file on disk had, so a reading leaves the committed metadata as it was.
* ``settings/overrides.json`` beside this module as JupyterLab's settings defaults: no "get notified
  about Jupyter news?" pop-up over the book. A choice the reader made in their own settings wins.
* ``settings/page_config.json``: nbgrader's JupyterLab tools (menus, a "Create Assignment" panel),
  which the test extra installs for the exercise tests, are for instructors and stay out of the book.
* with ``--lang zh`` and JupyterLab's Chinese language pack installed (``pip install -e ".[zh]"``), the
  interface language: the settings above plus the translation plugin's ``locale`` (``zh_CN``), written
  to a folder of Jupyter's runtime directory that this server reads instead of ``settings/``
  (:func:`language_settings_dir`). A language the reader chose in Settings → Language still wins.
  Without the pack the chapters are Chinese and the interface English, and one line on stderr says so.

Arguments after ``rmqlib book`` other than ``--lang`` go to ``jupyter lab`` (``--allow-root``,
``--no-browser``, ``--port``). A bad ``--lang`` prints one line and exits 2.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path

from jupyter_server.services.contents.largefilemanager import LargeFileManager

# the server imports the contents manager by name: this module's, also when it runs as `python -m rmqlib.book`
# (then __name__ is "__main__", which the server cannot import)
MODULE = "rmqlib.book"
PACKAGE = Path(__file__).resolve().parent
SETTINGS_DIR = PACKAGE / "settings"
FIRST_PAGE = "chapters/00_preface.ipynb"
#: the page each edition opens on
FIRST_PAGES = {"en": FIRST_PAGE, "zh": "chapters/zh/00_preface.ipynb"}
LANGUAGES = tuple(FIRST_PAGES)
#: JupyterLab's locale for each edition whose interface a language pack can translate
LAB_LOCALES = {"zh": "zh_CN"}
TRANSLATION_PLUGIN = "@jupyterlab/translation-extension:plugin"
LANGUAGE_PACK_ENTRY_POINTS = "jupyterlab.languagepack"  # how jupyterlab_server finds installed packs
KERNEL_NAME = "python3"
KERNEL_KEYS = ("kernelspec", "language_info")


def find_book_root(start: Path | None = None) -> Path:
    """The repository that holds ``chapters/``: this package's checkout, else ``start`` (default: cwd)."""
    for candidate in (PACKAGE.parent, Path.cwd() if start is None else Path(start)):
        if (candidate / FIRST_PAGE).is_file():
            return candidate.resolve()
    raise ValueError(
        f"no {FIRST_PAGE} under {PACKAGE.parent} or {start or Path.cwd()}: "
        "run from the repository root of a clone (git clone, then pip install -e .)"
    )


def lab_command(
    root: Path, lab_args: Sequence[str] = (), lang: str = "en", settings_dir: Path = SETTINGS_DIR
) -> list[str]:
    """The ``jupyter lab`` command line that serves ``root`` as the book, opening ``lang``'s preface."""
    return [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.contents_manager_class={MODULE}.{BookContentsManager.__name__}",
        f"--LabApp.app_settings_dir={settings_dir}",
        *lab_args,
        str(root / FIRST_PAGES[_lang(lang)]),
    ]


def _lang(lang: object) -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"--lang: one of {', '.join(LANGUAGES)}, got {lang!r}")
    return str(lang)


def split_lang(args: Sequence[str]) -> tuple[str, list[str]]:
    """``(lang, the other arguments)`` from ``rmqlib book``'s arguments: ``--lang zh`` or ``--lang=zh``, default en.

    Raises ValueError naming ``--lang`` for an unknown language, a missing value or a second ``--lang``.
    """
    lang, rest, items = None, [], list(args)
    while items:
        item = items.pop(0)
        if item == "--lang" or item.startswith("--lang="):
            if lang is not None:
                raise ValueError("--lang: given twice")
            if item == "--lang":
                if not items:
                    raise ValueError(f"--lang: needs a value, one of {', '.join(LANGUAGES)}")
                item = "--lang=" + items.pop(0)
            lang = _lang(item.partition("=")[2])
        else:
            rest.append(item)
    return lang or "en", rest


def language_pack_installed(lang: str) -> bool:
    """Whether JupyterLab's language pack for ``lang``'s interface is installed (English needs none)."""
    locale = LAB_LOCALES.get(_lang(lang))
    return locale is None or any(ep.name == locale for ep in entry_points(group=LANGUAGE_PACK_ENTRY_POINTS))


def language_settings_dir(lang: str, parent: Path | None = None) -> Path:
    """The settings folder a ``lang`` server reads: :data:`SETTINGS_DIR` for English, else a copy of it
    (under ``parent``, default Jupyter's runtime directory) whose overrides also set JupyterLab's locale.

    The copy is rewritten on every start, so it always follows ``settings/``; nothing of the reader's
    own JupyterLab settings is touched.
    """
    locale = LAB_LOCALES.get(_lang(lang))
    if locale is None:
        return SETTINGS_DIR
    if parent is None:
        from jupyter_core.paths import jupyter_runtime_dir

        parent = Path(jupyter_runtime_dir())
    target = Path(parent) / f"rmqlib-book-settings-{lang}"
    target.mkdir(parents=True, exist_ok=True)
    for source in SETTINGS_DIR.glob("*.json"):
        if source.name != "overrides.json":
            shutil.copyfile(source, target / source.name)
    overrides = json.loads((SETTINGS_DIR / "overrides.json").read_text(encoding="utf-8"))
    overrides[TRANSLATION_PLUGIN] = {**overrides.get(TRANSLATION_PLUGIN, {}), "locale": locale}
    (target / "overrides.json").write_text(json.dumps(overrides, indent=2) + "\n", encoding="utf-8")
    return target


def kernel_metadata() -> dict:
    """What JupyterLab writes into a notebook when this server's ``python3`` kernel starts."""
    # loaded when the server opens its first notebook: the `rmqlib book` launcher imports this module too
    from ipykernel.ipkernel import IPythonKernel
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
    return {
        "kernelspec": {"display_name": spec.display_name, "language": spec.language, "name": KERNEL_NAME},
        "language_info": copy.deepcopy(IPythonKernel.language_info),
    }


class BookContentsManager(LargeFileManager):
    """Jupyter's file contents manager, with the kernel metadata kept as committed (see the module docstring).

    Only notebooks whose kernelspec is ``python3`` are touched, and only the two metadata keys
    ``kernelspec`` and ``language_info``; everything else is read and saved as Jupyter does.
    """

    _kernel_metadata: dict | None = None

    def _running_kernel_metadata(self) -> dict:
        if self._kernel_metadata is None:
            self._kernel_metadata = kernel_metadata()
        return self._kernel_metadata

    @staticmethod
    def _is_book_notebook(model: dict | None) -> bool:
        return bool(
            model
            and model.get("type") == "notebook"
            and isinstance(model.get("content"), dict)
            and model["content"].get("metadata", {}).get("kernelspec", {}).get("name") == KERNEL_NAME
        )

    def get(self, path, content=True, type=None, format=None, **kwargs):
        model = super().get(path, content=content, type=type, format=format, **kwargs)
        if self._is_book_notebook(model):
            model["content"]["metadata"].update(copy.deepcopy(self._running_kernel_metadata()))
        return model

    def save(self, model, path=""):
        if self._is_book_notebook(model) and self.file_exists(path):
            on_disk = super().get(path, content=True, type="notebook")["content"].get("metadata", {})
            metadata = model["content"].setdefault("metadata", {})
            for key in KERNEL_KEYS:
                if key in on_disk:
                    metadata[key] = on_disk[key]
        return super().save(model, path)


def main(argv: Sequence[str] | None = None) -> int:
    """Start JupyterLab on the book; the process becomes ``jupyter lab``."""
    try:
        lang, lab_args = split_lang(sys.argv[1:] if argv is None else argv)
        root = find_book_root()
    except ValueError as error:
        print(f"rmqlib book: {error}", file=sys.stderr)
        return 2
    settings_dir = SETTINGS_DIR
    if language_pack_installed(lang):
        settings_dir = language_settings_dir(lang)
    else:
        print(
            f"rmqlib book: the chapters open in {lang}; JupyterLab's menus stay English until its language "
            f'pack is installed (pip install -e ".[{lang}]")',
            file=sys.stderr,
        )
    command = lab_command(root, lab_args, lang, settings_dir)
    os.execv(command[0], command)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
