"""The Chinese edition: one source (the English notebooks), translated prose in catalogs, notebooks generated.

The English notebooks are the source of truth for code. The Chinese prose lives in one catalog per
notebook, ``i18n/zh/chapters/NN_slug.yml`` and ``i18n/zh/exercises/NN_slug.yml``::

    source: chapters/02_sharing_evenly.ipynb
    cells:
    - id: c003              # the English cell's id
      en: 3f2a9c1d0b7e      # the first 12 hex digits of the SHA-256 of the English cell's text
      zh: |
        ## 平均分配 ...

``python -m rmqlib.translations build`` writes ``chapters/zh/NN_slug.ipynb``,
``exercises/source/zh/`` and ``exercises/student/zh/``: every markdown cell is its translation,
every code cell is the English one unchanged (outputs too, so nbval holds the Chinese run to the
English numbers), except that the first code cell starts with one line that switches the figures'
language. ``python -m rmqlib.translations todo`` lists, cell by cell, what needs a translator:
English cells with no entry, and entries whose English cell has changed since (its hash no longer
matches). ``skeleton`` adds entries holding the English for the translator to replace (``todo`` lists
them as untranslated until they hold Chinese). ``check`` exits 1 when anything is missing, stale,
untranslated or not regenerated.

A translated cell speaks of the translated edition: ``build`` points a repository path in its prose
(``chapters/X.ipynb``, ``exercises/source/X.ipynb``, ``exercises/student/X.ipynb`` and the folders
themselves) at the same notebook of the same edition (``chapters/zh/X.ipynb`` ...) wherever that
notebook is translated (:func:`localize_paths`), so a catalog may quote the English path as it is.
A heading or line-leading label the English repeats across notebooks (``## The book checks
itself``, ``*Predict, then check*``) must have one rendering everywhere, and so must a whole cell the
English repeats (an exercise set's opening): :func:`label_conflicts` and :func:`cell_conflicts` list
those that do not, and ``check`` reports them. It also reports a line break inside a Chinese paragraph, which
markdown would show as a space between two Chinese words (:func:`join_broken_lines`).

Cell ids are positions (``c000``, ``c001`` ... see tools/build_notebooks.py), so inserting a cell in
the English shifts the ids after it: ``build`` first moves every entry whose English text is
unchanged to the id that text now has, so only cells whose words changed ask for work.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmqlib.checks import check_str

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ("zh",)
#: The line the first code cell of a translated notebook starts with.
LANGUAGE_LINE = 'import rmqlib.viz; rmqlib.viz.use_language("{lang}")  # 图表与控件使用中文'
HASH_DIGITS = 12


def _yaml():
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SystemExit("rmqlib.translations needs PyYAML: pip install -e '.[test]'") from exc
    return yaml


def _nbformat():
    try:
        import nbformat
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SystemExit("rmqlib.translations needs nbformat: pip install -e '.[test]'") from exc
    return nbformat


def cell_text(cell) -> str:
    """A cell's source as one string (nbformat stores it as a string or a list of lines)."""
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def text_hash(text: str) -> str:
    """What a catalog entry records of the English it translates: 12 hex digits of its SHA-256."""
    check_str(text, "text", empty=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_DIGITS]


# --------------------------------------------------------------------------- where things live


def english_notebooks(root: Path = ROOT) -> list[Path]:
    """Every English notebook of the book: chapters and instructor exercise sets."""
    return sorted((root / "chapters").glob("*.ipynb")) + sorted((root / "exercises" / "source").glob("*.ipynb"))


def catalog_path(notebook: Path, lang: str = "zh", root: Path = ROOT) -> Path:
    """``chapters/X.ipynb`` -> ``i18n/<lang>/chapters/X.yml``;
    ``exercises/source/X.ipynb`` -> ``.../exercises/X.yml``."""
    part = "exercises" if notebook.parent.name == "source" else "chapters"
    return root / "i18n" / _lang(lang) / part / f"{notebook.stem}.yml"


def translated_path(notebook: Path, lang: str = "zh") -> Path:
    """``chapters/X.ipynb`` -> ``chapters/zh/X.ipynb``;
    ``exercises/source/X.ipynb`` -> ``exercises/source/zh/X.ipynb``."""
    return notebook.parent / _lang(lang) / notebook.name


def _lang(lang: str) -> str:
    check_str(lang, "lang")
    if lang not in LANGUAGES:
        raise ValueError(f"lang: one of {', '.join(LANGUAGES)}, got {lang!r}")
    return lang


# --------------------------------------------------------------------------- catalogs


@dataclass
class Entry:
    """One translated cell: the English cell's id, the hash of the English it translates, the translation."""

    id: str
    en: str
    text: str


@dataclass
class Catalog:
    source: str
    entries: list[Entry] = field(default_factory=list)

    def by_id(self) -> dict[str, Entry]:
        return {entry.id: entry for entry in self.entries}


def load_catalog(path: Path, lang: str = "zh") -> Catalog:
    """Read a catalog, refusing one whose shape is wrong (naming the file and the entry)."""
    data = _yaml().safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("source"), str) or not isinstance(data.get("cells"), list):
        raise ValueError(f"{path}: a catalog is a mapping with 'source' (a path) and 'cells' (a list)")
    entries, seen = [], set()
    for i, item in enumerate(data["cells"]):
        if not (
            isinstance(item, dict) and set(item) == {"id", "en", lang} and all(isinstance(item[k], str) for k in item)
        ):
            raise ValueError(f"{path}: cells[{i}] must have exactly 'id', 'en' and '{lang}', all text")
        if item["id"] in seen:
            raise ValueError(f"{path}: cell id {item['id']!r} appears twice")
        seen.add(item["id"])
        entries.append(Entry(item["id"], item["en"], item[lang].rstrip("\n")))
    return Catalog(data["source"], entries)


class _Literal(str):
    """A string YAML writes as a ``|`` block, so a catalog reads like the prose it holds."""


def dump_catalog(catalog: Catalog, path: Path, lang: str = "zh") -> None:
    yaml = _yaml()

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(_Literal, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|"))
    data = {
        "source": catalog.source,
        "cells": [{"id": e.id, "en": e.en, lang: _Literal(e.text + "\n")} for e in catalog.entries],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.dump(data, Dumper=Dumper, allow_unicode=True, sort_keys=False, width=10_000), encoding="utf-8")


# --------------------------------------------------------------------------- what needs work


@dataclass
class Todo:
    """A cell that needs a translator: ``missing`` (no entry) or ``stale`` (the English changed since)."""

    notebook: str
    id: str
    kind: str
    english: str
    en: str

    def __str__(self) -> str:
        return f"{self.notebook} {self.id} ({self.kind}, en: {self.en})"


def _markdown(nb) -> list:
    return [cell for cell in nb["cells"] if cell["cell_type"] == "markdown"]


def resync(catalog: Catalog, nb) -> bool:
    """Move entries whose English text is unchanged but sits under another id now; True if any moved."""
    where = {}
    for cell in _markdown(nb):
        where.setdefault(text_hash(cell_text(cell)), []).append(cell["id"])
    ids = {cell["id"]: text_hash(cell_text(cell)) for cell in _markdown(nb)}
    moved = False
    taken = {e.id for e in catalog.entries if ids.get(e.id) == e.en}  # entries that are right where they are
    for entry in catalog.entries:
        if ids.get(entry.id) == entry.en:
            continue
        free = [cid for cid in where.get(entry.en, []) if cid not in taken]
        if free:
            entry.id = free[0]
            taken.add(free[0])
            moved = True
    order = {cell["id"]: i for i, cell in enumerate(nb["cells"])}
    catalog.entries.sort(key=lambda e: order.get(e.id, len(order)))
    return moved


def todo(notebook: Path, lang: str = "zh", root: Path = ROOT) -> list[Todo]:
    """The markdown cells of ``notebook`` whose translation is missing or stale."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    path = catalog_path(notebook, lang, root)
    entries = load_catalog(path, lang).by_id() if path.exists() else {}
    rel = notebook.relative_to(root).as_posix()
    out = []
    for cell in _markdown(nb):
        text = cell_text(cell)
        entry = entries.get(cell["id"])
        if entry is None:
            out.append(Todo(rel, cell["id"], "missing", text, text_hash(text)))
        elif entry.en != text_hash(text):
            out.append(Todo(rel, cell["id"], "stale", text, text_hash(text)))
        elif _untranslated(text, entry.text):
            out.append(Todo(rel, cell["id"], "untranslated", text, text_hash(text)))
    return out


def _untranslated(english: str, translation: str) -> bool:
    """A translation that is the English itself, or prose with no Chinese in it (a skeleton left as it was)."""
    if translation.strip() == english.strip() and any(ch.isalpha() for ch in english):
        return True
    has_words = sum(ch.isalpha() and ch.isascii() for ch in english) > 40
    return has_words and not any("\u4e00" <= ch <= "\u9fff" for ch in translation)


def skeleton(notebook: Path, lang: str = "zh", root: Path = ROOT) -> Path:
    """Add an entry holding the English text for every cell ``todo`` lists as missing.

    The translator replaces each text; until then ``todo`` lists it as untranslated. A stale entry
    is left alone: the translator revises it and then writes the new hash ``todo`` shows.
    """
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    path = catalog_path(notebook, lang, root)
    catalog = load_catalog(path, lang) if path.exists() else Catalog(notebook.relative_to(root).as_posix())
    resync(catalog, nb)
    for item in todo(notebook, lang, root):
        if item.kind == "missing":
            catalog.entries.append(Entry(item.id, item.en, item.english))
    order = {cell["id"]: i for i, cell in enumerate(nb["cells"])}
    catalog.entries.sort(key=lambda e: order.get(e.id, len(order)))
    dump_catalog(catalog, path, lang)
    return path


def orphans(notebook: Path, lang: str = "zh", root: Path = ROOT) -> list[str]:
    """Catalog entries for cells the English notebook no longer has as markdown."""
    path = catalog_path(notebook, lang, root)
    if not path.exists():
        return []
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    ids = {cell["id"] for cell in _markdown(nb)}
    return [entry.id for entry in load_catalog(path, lang).entries if entry.id not in ids]


# --------------------------------------------------------------------------- paths in the prose

# a repository path in the prose: one of the three book folders, then a notebook of it or nothing more
# (the folder itself); not inside a longer path (``site/chapters/``) and not already an edition's (``chapters/zh/``)
_BOOK_PATH = re.compile(
    r"(?<![\w./-])(?P<folder>chapters|exercises/source|exercises/student)/"
    r"(?!(?:[a-z]{2}(?:-[A-Za-z]+)?)/)(?P<name>[\w.-]+\.ipynb)?(?![\w/-])"
)


def translated_sources(lang: str = "zh", root: Path = ROOT) -> set[str]:
    """The English notebooks (``chapters/X.ipynb``, ``exercises/source/X.ipynb``) that have a ``lang`` catalog."""
    return {nb.relative_to(root).as_posix() for nb in english_notebooks(root) if catalog_path(nb, lang, root).exists()}


def localize_paths(text: str, translated: set[str], lang: str = "zh") -> str:
    """``text`` with every book path pointed at the ``lang`` edition where that edition has the notebook.

    ``chapters/X.ipynb`` -> ``chapters/<lang>/X.ipynb`` when ``chapters/X.ipynb`` is in ``translated``;
    ``exercises/student/X.ipynb`` follows ``exercises/source/X.ipynb`` (the student set is generated from
    it); a folder (``exercises/source/``) when any notebook of it is translated. Other paths stay as they are.
    """
    check_str(text, "text", empty=True)
    _lang(lang)
    folders = {path.rsplit("/", 1)[0] for path in translated}
    if "exercises/source" in folders:
        folders.add("exercises/student")

    def point(match: re.Match[str]) -> str:
        folder, name = match["folder"], match["name"]
        source = "exercises/source" if folder == "exercises/student" else folder
        if (f"{source}/{name}" in translated) if name else (folder in folders):
            return f"{folder}/{lang}/{name or ''}"
        return match[0]

    return _BOOK_PATH.sub(point, text)


# --------------------------------------------------------------------------- recurring labels

# a heading, or a label that opens a line (after a list marker): **Model answer.**, *Predict, then check*
_LABEL = re.compile(
    r"^(?:(?P<level>#{1,6})[ \t]+(?P<heading>[^\n]+?)[ \t]*"
    r"|[ \t]*(?:(?:[-+]|\d+\.)[ \t]+)?(?P<label>\*\*[^*\n]+\*\*|\*[^*\s][^*\n]*\*)(?!\*))$"
    r"|^[ \t]*(?:(?:[-+]|\d+\.)[ \t]+)?(?P<lead>\*\*[^*\n]+\*\*|\*[^*\s][^*\n]*\*)(?=[^*])",
    re.M,
)
# a numbering that is the notebook's own, not the label's: "02 · ", "3 · ", "11c · ", "第 3 章 · "
_NUMBERING = re.compile(r"^(?:\d+[a-z]?(?:\.\d+)*[ \t]*[·.][ \t]*)")


def labels(markdown: str) -> list[tuple[str, str]]:
    """The headings and line-leading labels of a markdown cell, in order: ``("##", text)`` or ``("*", text)``.

    A heading's numbering (``02 ·`` and the space after it) is dropped, so the same heading in two chapters compares
    equal.
    """
    out = []
    for match in _LABEL.finditer(markdown):
        if match["heading"] is not None:
            out.append((match["level"], _NUMBERING.sub("", match["heading"]).strip()))
        else:
            out.append(("*", (match["label"] or match["lead"]).strip("*").strip()))
    return out


def _translated_markdown(lang: str, root: Path) -> Iterator[tuple[str, dict[str, Any], Entry]]:
    """Every English markdown cell that has a catalog entry: ``(notebook path, cell, entry)``."""
    for notebook in english_notebooks(root):
        path = catalog_path(notebook, lang, root)
        if not path.exists():
            continue
        rel = notebook.relative_to(root).as_posix()
        entries = load_catalog(path, lang).by_id()
        for cell in _markdown(json.loads(notebook.read_text(encoding="utf-8"))):
            entry = entries.get(cell["id"])
            if entry is not None:
                yield rel, cell, entry


def label_conflicts(lang: str = "zh", root: Path = ROOT) -> dict[str, dict[str, list[str]]]:
    """English labels used in more than one notebook that are not rendered the same way everywhere.

    Returns ``{english: {rendering: [notebooks]}}`` for each such label. A cell whose translation has
    not the English cell's headings (same number, same levels) is listed under the key ``""`` (as
    ``"<notebook> <cell id>"``): its labels cannot be paired.
    """
    seen: dict[str, dict[str, set[str]]] = {}
    unpaired: list[str] = []
    for rel, cell, entry in _translated_markdown(lang, root):
        english, translated = labels(cell_text(cell)), labels(entry.text)
        headings = [kind for kind, _ in english if kind != "*"]
        if headings != [kind for kind, _ in translated if kind != "*"]:
            unpaired.append(f"{rel} {cell['id']}")
            continue
        if [kind for kind, _ in english] != [kind for kind, _ in translated]:
            english, translated = ([item for item in pair if item[0] != "*"] for pair in (english, translated))
        for (_, en), (_, rendering) in zip(english, translated):
            seen.setdefault(en, {}).setdefault(rendering, set()).add(rel)
    out = {
        en: {rendering: sorted(where) for rendering, where in renderings.items()}
        for en, renderings in seen.items()
        if len(renderings) > 1 and len(set().union(*renderings.values())) > 1
    }
    if unpaired:
        out[""] = {"headings differ from the English": unpaired}
    return out


# characters a line break next to shows as a stray space: Chinese punctuation (with the dash, quotes and ellipsis
# Chinese text uses), and Chinese characters
_PUNCTUATION = "\u2014\u2018-\u201d\u2026\u3000-\u303f\uff00-\uffef"
_CJK_END = re.compile(f"[{_PUNCTUATION}\u4e00-\u9fff]$")
_CJK_START = re.compile(f"[*_]*[{_PUNCTUATION}\u4e00-\u9fff]")  # emphasis marks do not count
_CJK_PUNCTUATION = re.compile(f"[{_PUNCTUATION}]")
_BLOCK_START = re.compile(r"\s*([-*+]\s|\d+\.\s|#|>|\||```|<)")


def join_broken_lines(text: str) -> str:
    """``text`` with every line break inside a paragraph that follows a Chinese character or punctuation mark,
    or comes before a Chinese punctuation mark, taken out. Markdown shows such a break as a space, which Chinese
    does not put between words; a space is kept only between a Chinese character and a Latin word, digit or code
    span, as the edition writes them. Code fences, tables and the start of a list item, heading or quote are left
    as they are."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        joinable = (
            out
            and not fenced
            and line.strip()
            and out[-1].strip()
            and not _BLOCK_START.match(line)
            and not out[-1].lstrip().startswith(("|", "#"))
            and (_CJK_END.search(out[-1]) or _CJK_PUNCTUATION.match(line.lstrip()))
        )
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not joinable:
            out.append(line)
            continue
        rest = line.lstrip()
        space = "" if _CJK_START.match(rest) or _CJK_PUNCTUATION.search(out[-1][-1]) else " "
        out[-1] += space + rest
    return "\n".join(out)


def _cell_shape(text: str) -> str:
    """A markdown cell with what varies from notebook to notebook taken out: the title line (``# ...``), book
    paths in backticks, numbers and line breaks. Two cells of the same shape say the same thing."""
    text = re.sub(r"^# [^\n]*", "#", text.strip())
    text = re.sub(r"`[^`\n]*/[^`\n]*`", "`P`", text)
    return " ".join(re.sub(r"\d+", "N", text).split())


def cell_conflicts(lang: str = "zh", root: Path = ROOT) -> dict[str, dict[str, list[str]]]:
    """English cells that recur (the same shape, :func:`_cell_shape`, in more than one notebook: an exercise
    set's opening, a heading-only cell) but whose translations differ in shape: ``{english: {translation:
    [notebooks]}}``, each text shown in its shape."""
    seen: dict[str, dict[str, set[str]]] = {}
    for rel, cell, entry in _translated_markdown(lang, root):
        shapes = seen.setdefault(_cell_shape(cell_text(cell)), {})
        shapes.setdefault(_cell_shape(entry.text), set()).add(rel)
    return {
        en: {zh: sorted(where) for zh, where in shapes.items()}
        for en, shapes in seen.items()
        if len(shapes) > 1 and len(set().union(*shapes.values())) > 1
    }


# --------------------------------------------------------------------------- generating the edition


def translate(nb, catalog: Catalog, lang: str = "zh", translated: set[str] | None = None):
    """The translated notebook: markdown from the catalog, code unchanged but for the language line.

    ``translated``: the English notebooks (repository paths) that have a translation, whose paths the
    prose is pointed at (:func:`localize_paths`); default: those with a catalog under :data:`ROOT`.
    """
    out = copy.deepcopy(nb)
    entries = catalog.by_id()
    if translated is None:
        translated = translated_sources(lang)
    first_code = True
    for cell in out["cells"]:
        if cell["cell_type"] == "markdown":
            entry = entries.get(cell["id"])
            if entry is None or entry.en != text_hash(cell_text(cell)):
                raise ValueError(
                    f"{catalog.source}: cell {cell['id']} has no current translation "
                    f"(python -m rmqlib.translations todo)"
                )
            cell["source"] = localize_paths(entry.text, translated, lang)
        elif cell["cell_type"] == "code" and first_code:
            first_code = False
            line = LANGUAGE_LINE.format(lang=lang)
            text = cell_text(cell)
            # a check-output marker must stay the cell's first line for nbval and the hygiene checks
            if text.startswith("# NBVAL"):
                marker, _, rest = text.partition("\n")
                cell["source"] = f"{marker}\n{line}\n{rest}"
            else:
                cell["source"] = f"{line}\n{text}"
    out["metadata"] = {**out.get("metadata", {}), "rmqlib": {"translation_of": catalog.source, "language": lang}}
    return out


def _write(nb, path: Path) -> bool:
    """Write ``nb`` as nbformat does; True if the file changed."""
    nbformat = _nbformat()
    node = nbformat.from_dict(nb)
    text = nbformat.writes(node) + "\n"
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def build(lang: str = "zh", root: Path = ROOT, notebooks: list[Path] | None = None) -> list[Path]:
    """Regenerate every translated notebook (of ``notebooks``, default all) that has a complete catalog.

    Returns the files written.

    Entries are first moved to the ids their unchanged English now has (the catalog is rewritten
    only if one moved). The student exercise sets are generated from the translated sources.
    """
    from rmqlib import exercises

    written = []
    translated = translated_sources(lang, root)
    for notebook in notebooks or english_notebooks(root):
        path = catalog_path(notebook, lang, root)
        if not path.exists():
            continue
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        catalog = load_catalog(path, lang)
        if resync(catalog, nb):
            dump_catalog(catalog, path, lang)
            written.append(path)
        if todo(notebook, lang, root):
            continue  # incomplete: `todo` and `check` say which cells
        target = translated_path(notebook, lang)
        if _write(translate(nb, catalog, lang, translated), target):
            written.append(target)
    source = root / "exercises" / "source" / lang
    if source.is_dir():
        written += exercises.generate(source, root / "exercises" / "student" / lang)
    return written


def problems(lang: str = "zh", root: Path = ROOT) -> list[str]:
    """Everything that keeps the edition from being whole and current, one line each."""
    out = []
    translated = translated_sources(lang, root)
    for notebook in english_notebooks(root):
        rel = notebook.relative_to(root).as_posix()
        path = catalog_path(notebook, lang, root)
        if not path.exists():
            out.append(f"{rel}: no catalog ({path.relative_to(root).as_posix()})")
            continue
        out += [f"{item}" for item in todo(notebook, lang, root)]
        out += [
            f"{rel} {cid}: the catalog translates a cell the English no longer has"
            for cid in orphans(notebook, lang, root)
        ]
        out += [
            f"{rel} {entry.id}: a line break inside a Chinese sentence shows as a space (join_broken_lines)"
            for entry in load_catalog(path, lang).entries
            if join_broken_lines(entry.text) != entry.text
        ]
        target = translated_path(notebook, lang)
        if not any(str(t).startswith(rel) for t in todo(notebook, lang, root)):
            expected = translate(
                json.loads(notebook.read_text(encoding="utf-8")), load_catalog(path, lang), lang, translated
            )
            nbformat = _nbformat()
            text = nbformat.writes(nbformat.from_dict(expected)) + "\n"
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                out.append(f"{target.relative_to(root).as_posix()}: stale, run python -m rmqlib.translations build")
    for english, renderings in label_conflicts(lang, root).items():
        if english:
            out.append(
                f"{english!r} is rendered {len(renderings)} ways: "
                + "; ".join(f"{r!r} in {', '.join(w)}" for r, w in renderings.items())
            )
        else:
            out += [
                f"{where}: the translation's headings are not the English cell's"
                for where in renderings["headings differ from the English"]
            ]
    for english, translations in cell_conflicts(lang, root).items():
        out.append(
            f"a recurring cell is translated {len(translations)} ways ({english[:60]}...): "
            + "; ".join(f"{', '.join(w)}" for w in translations.values())
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rmqlib.translations", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("todo", "skeleton", "build", "check"))
    parser.add_argument("notebooks", nargs="*", type=Path, help="English notebooks (default: all)")
    parser.add_argument("--lang", default="zh", choices=LANGUAGES)
    args = parser.parse_args(argv)
    if args.command == "build":
        for path in build(args.lang, notebooks=[p.resolve() for p in args.notebooks] or None):
            print(f"wrote {path.relative_to(ROOT).as_posix()}")
        return 0
    if args.command == "check":
        found = problems(args.lang)
        for line in found:
            print(line)
        return 1 if found else 0
    notebooks = [p.resolve() for p in args.notebooks] or english_notebooks()
    if args.command == "skeleton":
        for notebook in notebooks:
            print(f"wrote {skeleton(notebook, args.lang).relative_to(ROOT).as_posix()}")
        return 0
    for notebook in notebooks:
        for item in todo(notebook, args.lang):
            print(f"=== {item}\n{item.english}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
