"""``rmqlib book``: the JupyterLab command line and the contents manager that keeps a notebook unchanged on opening.

The real browser check (open every notebook, nothing marked dirty) is in tests/browser/test_reading.py.
"""

import json
import sys
from pathlib import Path

import pytest

from rmqlib import book, cli

ROOT = Path(__file__).resolve().parent.parent
STORED = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python", "version": "3.0.1"},
}


@pytest.fixture
def manager(tmp_path):
    nb = {"cells": [], "metadata": STORED, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "a.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    return book.BookContentsManager(root_dir=str(tmp_path))


def test_opening_shows_the_running_kernels_metadata(manager):
    shown = manager.get("a.ipynb")["content"]["metadata"]
    assert shown == book.kernel_metadata()
    assert shown["language_info"]["version"] != "3.0.1"  # what JupyterLab would otherwise write, marking it dirty


def test_saving_puts_back_the_metadata_on_disk(manager, tmp_path):
    model = manager.get("a.ipynb")
    model["content"]["cells"] = [{"cell_type": "markdown", "id": "m0", "metadata": {}, "source": "note"}]
    manager.save(model, "a.ipynb")
    saved = json.loads((tmp_path / "a.ipynb").read_text(encoding="utf-8"))
    assert saved["metadata"] == STORED
    assert "".join(saved["cells"][0]["source"]) == "note"  # the reader's change is kept


def test_other_kernels_and_files_are_left_as_jupyter_handles_them(manager, tmp_path):
    other = {
        "cells": [],
        "metadata": {"kernelspec": {"name": "ir", "display_name": "R", "language": "R"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "r.ipynb").write_text(json.dumps(other), encoding="utf-8")
    assert manager.get("r.ipynb")["content"]["metadata"] == other["metadata"]
    (tmp_path / "x.txt").write_text("x", encoding="utf-8")
    assert manager.get("x.txt")["content"] == "x"


def test_lab_command_serves_the_whole_repository_and_opens_the_preface():
    command = book.lab_command(ROOT, ["--no-browser"])
    assert f"--ServerApp.root_dir={ROOT}" in command and "--no-browser" in command
    assert "--ServerApp.contents_manager_class=rmqlib.book.BookContentsManager" in command
    assert command[-1] == str(ROOT / "chapters" / "00_preface.ipynb")
    overrides = json.loads((book.SETTINGS_DIR / "overrides.json").read_text(encoding="utf-8"))
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"


def test_the_book_hides_the_instructors_nbgrader_tools_from_readers():
    from jupyterlab_server.config import get_page_config

    page_config = get_page_config([], app_settings_dir=str(book.SETTINGS_DIR))
    assert "@jupyter/nbgrader" in page_config["disabledExtensions"]


def test_find_book_root_names_what_is_missing(tmp_path, monkeypatch):
    assert book.find_book_root() == ROOT
    monkeypatch.setattr(book, "PACKAGE", tmp_path / "rmqlib")
    with pytest.raises(ValueError, match="chapters/00_preface.ipynb"):
        book.find_book_root(tmp_path)


def test_book_without_a_checkout_exits_2_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(book, "PACKAGE", tmp_path / "rmqlib")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["book", "--allow-root"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_chinese_readme_gives_the_readmes_two_commands_and_the_language_pack_extra():
    import tomllib

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "](README.zh-CN.md)" in readme and "](README.md)" in chinese
    commands = ["pip install -e . && rmqlib book", 'pip install -e ".[test]" && python -m pytest']
    for command in commands:  # the same commands, word for word, as code blocks in both
        assert f"```\n{command}\n```" in readme and f"```\n{command}\n```" in chinese, command
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert [req.split(">")[0] for req in extras["zh"]] == ["jupyterlab-language-pack-zh-CN"]
    assert '```\npip install -e ".[zh]"\n```' in chinese and "Settings → Language" in chinese
    assert (ROOT / "chapters" / "zh" / "00_preface.ipynb").is_file() and "chapters/zh/00_preface.ipynb" in chinese
    assert "```\nrmqlib book --lang zh\n```" in chinese and "python -m rmqlib.book --lang zh" in chinese


# --------------------------------------------------------------------------- rmqlib book --lang zh


@pytest.fixture
def no_exec(monkeypatch):
    """Record the command ``rmqlib book`` would become instead of becoming it (no server starts)."""
    started = []

    def execv(path, command):
        started.append(command)
        raise SystemExit(0)

    monkeypatch.setattr(book.os, "execv", execv)
    return started


def test_split_lang_takes_lang_out_of_the_arguments_for_jupyter_lab():
    assert book.split_lang(["--allow-root"]) == ("en", ["--allow-root"])
    assert book.split_lang(["--lang", "zh", "--no-browser"]) == ("zh", ["--no-browser"])
    assert book.split_lang(["--port=9", "--lang=en"]) == ("en", ["--port=9"])
    for bad, message in (
        (["--lang", "fr"], "one of en, zh, got 'fr'"),
        (["--lang"], "needs a value"),
        (["--lang=zh", "--lang", "en"], "given twice"),
        (["--lang="], "got ''"),
    ):
        with pytest.raises(ValueError, match=f"^--lang: .*{message}"):
            book.split_lang(bad)


@pytest.mark.parametrize("args", [["--lang", "fr"], ["--allow-root", "--lang"], ["--lang=zh", "--lang=zh"]])
def test_book_with_a_bad_lang_exits_2_with_one_line_and_starts_nothing(args, no_exec, capsys):
    assert cli.main(["book", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rmqlib book: --lang: ")
    assert no_exec == []


def test_book_lang_zh_opens_the_chinese_preface_in_a_chinese_interface(no_exec, monkeypatch, tmp_path, capsys):
    from jupyterlab_server.settings_utils import _get_overrides

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setattr(book, "language_pack_installed", lambda lang: True)
    with pytest.raises(SystemExit):
        cli.main(["book", "--lang", "zh", "--no-browser"])
    command = no_exec.pop()
    assert command[-1] == str(ROOT / "chapters" / "zh" / "00_preface.ipynb") and "--no-browser" in command
    assert "--lang" not in command and "zh" not in command
    settings = Path(next(a for a in command if a.startswith("--LabApp.app_settings_dir=")).partition("=")[2])
    assert settings == tmp_path / "runtime" / "rmqlib-book-settings-zh"  # this server's, not the reader's
    overrides, error = _get_overrides(str(settings))  # read as JupyterLab reads them
    assert not error and overrides[book.TRANSLATION_PLUGIN] == {"locale": "zh_CN"}
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"  # the book's own too
    assert (settings / "page_config.json").read_bytes() == (book.SETTINGS_DIR / "page_config.json").read_bytes()
    assert capsys.readouterr().err == ""


def test_book_lang_zh_without_the_language_pack_says_so_in_one_line(no_exec, monkeypatch, capsys):
    monkeypatch.setattr(book, "language_pack_installed", lambda lang: False)
    with pytest.raises(SystemExit):
        cli.main(["book", "--lang=zh"])
    command = no_exec.pop()
    assert command[-1] == str(ROOT / "chapters" / "zh" / "00_preface.ipynb")
    assert f"--LabApp.app_settings_dir={book.SETTINGS_DIR}" in command  # the interface stays English
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'pip install -e ".[zh]"' in err


def test_book_without_lang_opens_the_english_preface_with_the_books_settings(no_exec, capsys):
    with pytest.raises(SystemExit):
        cli.main(["book", "--allow-root"])
    command = no_exec.pop()
    assert command[-1] == str(ROOT / "chapters" / "00_preface.ipynb") and "--allow-root" in command
    assert f"--LabApp.app_settings_dir={book.SETTINGS_DIR}" in command and capsys.readouterr().err == ""


def test_language_pack_installed_reads_jupyterlabs_entry_points(monkeypatch):
    class EntryPoint:
        def __init__(self, name):
            self.name = name

    monkeypatch.setattr(
        book, "entry_points", lambda group: [EntryPoint("fr_FR")] if group == book.LANGUAGE_PACK_ENTRY_POINTS else []
    )
    assert book.language_pack_installed("en") and not book.language_pack_installed("zh")
    monkeypatch.setattr(
        book, "entry_points", lambda group: [EntryPoint("zh_CN")] if group == book.LANGUAGE_PACK_ENTRY_POINTS else []
    )
    assert book.language_pack_installed("zh")
    with pytest.raises(ValueError, match="--lang"):
        book.language_pack_installed("fr")


@pytest.mark.filterwarnings("ignore:'rmqlib.book' found in sys.modules:RuntimeWarning")  # runpy, re-running it
def test_python_m_rmqlib_book_names_a_contents_manager_the_server_can_import(no_exec, monkeypatch):
    import importlib
    import runpy

    # no_exec patched os.execv itself (book.os is the os module), so the module runpy runs afresh sees it too
    monkeypatch.setattr(sys, "argv", ["python -m rmqlib.book", "--lang", "zh", "--no-browser"])
    monkeypatch.setattr(book, "language_pack_installed", lambda lang: False)
    with pytest.raises(SystemExit):
        runpy.run_module("rmqlib.book", run_name="__main__")  # as `python -m rmqlib.book` runs it
    command = no_exec.pop()
    name = next(a for a in command if a.startswith("--ServerApp.contents_manager_class=")).partition("=")[2]
    module, _, cls = name.rpartition(".")
    assert getattr(importlib.import_module(module), cls).__name__ == "BookContentsManager"
    assert command[-1].endswith("chapters/zh/00_preface.ipynb")


def test_python_m_rmqlib_book_with_a_bad_lang_exits_2_with_one_line():
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "rmqlib.book", "--lang", "fr"], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "rmqlib book: --lang: one of en, zh, got 'fr'\n"
