"""Open the book in JupyterLab: ``rmqlib book`` (or ``python -m rmqlib.book``).

It starts ``jupyter lab`` on the whole repository (``chapters/`` and ``exercises/`` in the file
browser), opens the preface, and sets three things for this server only:

* :class:`BookContentsManager`, so that opening a chapter does not change it. JupyterLab copies the
  running kernel's ``language_info`` (with the exact Python version) into a notebook as soon as the
  kernel starts, which marks the document dirty and lets autosave write it back. The manager hands
  the notebook to JupyterLab with the metadata this server's kernel will report, and on save puts
  back what the file on disk had, so a reading leaves the committed metadata as it was.
* ``settings/overrides.json`` beside this module as JupyterLab's settings defaults: no "get notified
  about Jupyter news?" pop-up over the book. A choice the reader made in their own settings wins.
* ``settings/page_config.json``: nbgrader's JupyterLab tools (menus, a "Create Assignment" panel),
  which the test extra installs for the exercise tests, are for instructors and stay out of the book.

Arguments after ``rmqlib book`` go to ``jupyter lab`` (``--allow-root``, ``--no-browser``, ``--port``).
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from jupyter_server.services.contents.largefilemanager import LargeFileManager

PACKAGE = Path(__file__).resolve().parent
SETTINGS_DIR = PACKAGE / "settings"
FIRST_PAGE = "chapters/00_preface.ipynb"
KERNEL_NAME = "python3"
KERNEL_KEYS = ("kernelspec", "language_info")


def find_book_root(start: Path | None = None) -> Path:
    """The repository that holds ``chapters/``: this package's checkout, else ``start`` (default: cwd)."""
    for candidate in (PACKAGE.parent, Path.cwd() if start is None else Path(start)):
        if (candidate / FIRST_PAGE).is_file():
            return candidate.resolve()
    raise ValueError(f"no {FIRST_PAGE} under {PACKAGE.parent} or {start or Path.cwd()}: "
                     "run from the repository root of a clone (git clone, then pip install -e .)")


def lab_command(root: Path, lab_args: Sequence[str] = ()) -> list[str]:
    """The ``jupyter lab`` command line that serves ``root`` as the book."""
    return [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={root}",
            f"--ServerApp.contents_manager_class={__name__}.{BookContentsManager.__name__}",
            f"--LabApp.app_settings_dir={SETTINGS_DIR}", *lab_args, str(root / FIRST_PAGE)]


def kernel_metadata() -> dict:
    """What JupyterLab writes into a notebook when this server's ``python3`` kernel starts."""
    # loaded when the server opens its first notebook: the `rmqlib book` launcher imports this module too
    from ipykernel.ipkernel import IPythonKernel
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
    return {"kernelspec": {"display_name": spec.display_name, "language": spec.language, "name": KERNEL_NAME},
            "language_info": copy.deepcopy(IPythonKernel.language_info)}


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
        return bool(model and model.get("type") == "notebook" and isinstance(model.get("content"), dict)
                    and model["content"].get("metadata", {}).get("kernelspec", {}).get("name") == KERNEL_NAME)

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
    lab_args = list(sys.argv[1:] if argv is None else argv)
    try:
        root = find_book_root()
    except ValueError as error:
        print(f"rmqlib book: {error}", file=sys.stderr)
        return 2
    command = lab_command(root, lab_args)
    os.execv(command[0], command)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
