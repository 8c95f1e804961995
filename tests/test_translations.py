"""The Chinese edition's machinery (rmqlib.translations) on a small made-up book, and the real edition's state."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from rmqlib import translations as tr

ROOT = Path(__file__).resolve().parent.parent


def _book(tmp_path: Path, cells) -> Path:
    nb = new_notebook(
        cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    )
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i:03d}"
    path = tmp_path / "chapters" / "01_demo.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def _cells():
    checked = new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(1 + 1)")
    checked.outputs = [new_output("stream", name="stdout", text="2\n")]
    return [
        new_markdown_cell("# 01 · A demo chapter\n\nQueues are shared among the consumers of a group."),
        checked,
        new_markdown_cell("## Sharing\n\nEvery consumer computes the same answer from the same view."),
        new_code_cell("x = 3"),
    ]


def _translate_all(path: Path, root: Path) -> None:
    tr.skeleton(path, root=root)
    catalog = tr.load_catalog(tr.catalog_path(path, root=root))
    for entry in catalog.entries:  # a heading stays a heading of the same level
        first = entry.text.splitlines()[0]
        hashes, _, words = first.partition(" ")
        entry.text = f"{hashes} 中文：{words}" if first.startswith("#") else "中文：" + first
    tr.dump_catalog(catalog, tr.catalog_path(path, root=root))


def test_todo_lists_every_markdown_cell_until_it_is_translated(tmp_path):
    path = _book(tmp_path, _cells())
    assert [(t.id, t.kind) for t in tr.todo(path, root=tmp_path)] == [("c000", "missing"), ("c002", "missing")]
    tr.skeleton(path, root=tmp_path)  # placeholders hold the English: still work to do
    assert [(t.id, t.kind) for t in tr.todo(path, root=tmp_path)] == [
        ("c000", "untranslated"),
        ("c002", "untranslated"),
    ]
    _translate_all(path, tmp_path)
    assert tr.todo(path, root=tmp_path) == []


def test_build_replaces_prose_and_keeps_code_and_outputs_but_for_the_language_line(tmp_path):
    path = _book(tmp_path, _cells())
    _translate_all(path, tmp_path)
    written = tr.build(root=tmp_path, notebooks=[path])
    target = tmp_path / "chapters" / "zh" / "01_demo.ipynb"
    assert target in written
    english, chinese = (json.loads(p.read_text(encoding="utf-8")) for p in (path, target))
    assert [c["id"] for c in chinese["cells"]] == [c["id"] for c in english["cells"]]
    assert tr.cell_text(chinese["cells"][0]) == "# 中文：01 · A demo chapter"
    first_code = tr.cell_text(chinese["cells"][1]).splitlines()
    assert first_code[0] == "# NBVAL_CHECK_OUTPUT"  # nbval's marker stays first
    assert first_code[1] == tr.LANGUAGE_LINE.format(lang="zh")
    assert first_code[2:] == tr.cell_text(english["cells"][1]).splitlines()[1:]
    assert chinese["cells"][1]["outputs"] == english["cells"][1]["outputs"]  # held to the English numbers
    assert chinese["cells"][3] == english["cells"][3]
    assert tr.build(root=tmp_path, notebooks=[path]) == []  # nothing changed, nothing written
    assert tr.problems(root=tmp_path) == []


def test_changing_one_english_sentence_names_the_cell_to_update(tmp_path):
    path = _book(tmp_path, _cells())
    _translate_all(path, tmp_path)
    tr.build(root=tmp_path, notebooks=[path])
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].source = nb.cells[2].source.replace("same answer", "same allocation")
    nbformat.write(nb, path)
    assert [(t.id, t.kind) for t in tr.todo(path, root=tmp_path)] == [("c002", "stale")]
    assert any("c002 (stale" in line for line in tr.problems(root=tmp_path))
    assert tr.main(["check"]) in (0, 1)  # the command runs on the real book whatever its state
    with pytest.raises(ValueError, match="c002"):
        tr.translate(
            json.loads(path.read_text(encoding="utf-8")), tr.load_catalog(tr.catalog_path(path, root=tmp_path))
        )


def test_a_stale_generated_notebook_is_a_problem(tmp_path):
    path = _book(tmp_path, _cells())
    _translate_all(path, tmp_path)
    tr.build(root=tmp_path, notebooks=[path])
    nb = nbformat.read(path, as_version=4)
    nb.cells[3].source = "x = 4"  # code changes: the translation stands, the generated notebook is stale
    nbformat.write(nb, path)
    assert tr.todo(path, root=tmp_path) == []
    assert [line for line in tr.problems(root=tmp_path) if "stale, run" in line]


def test_inserting_a_cell_moves_translations_to_their_new_ids(tmp_path):
    path = _book(tmp_path, _cells())
    _translate_all(path, tmp_path)
    cells = _cells()
    cells.insert(1, new_markdown_cell("A new paragraph the translator has not seen."))
    path = _book(tmp_path, cells)  # ids are positions: the old c002 is now c003
    tr.build(root=tmp_path, notebooks=[path])
    assert [(t.id, t.kind) for t in tr.todo(path, root=tmp_path)] == [("c001", "missing")]
    assert {e.id for e in tr.load_catalog(tr.catalog_path(path, root=tmp_path)).entries} == {"c000", "c003"}


@pytest.mark.parametrize(
    "text, joined",
    [
        ("甲，\n乙。", "甲，乙。"),  # between Chinese words markdown's space is a stray one
        ("两个 Broker；\nbroker-b 在", "两个 Broker；broker-b 在"),
        ("在大半分钟里\n*没有*持有者", "在大半分钟里*没有*持有者"),
        ("一个队列\n[`RebalanceImpl`] 就", "一个队列 [`RebalanceImpl`] 就"),  # Chinese, then Latin: a space
        ("对 `removeUnnecessaryMessageQueue`\n（见下文）", "对 `removeUnnecessaryMessageQueue`（见下文）"),
        ("- 甲，\n  以及乙；\n- 丙", "- 甲，以及乙；\n- 丙"),  # a list item's own lines, not the next item
        ("段落。\n\n“下一段”", "段落。\n\n“下一段”"),  # a paragraph break stays
        ("```\n中文\n代码\n```", "```\n中文\n代码\n```"),
        ("## 标题\n正文", "## 标题\n正文"),
        ("小结：\n1. 一项", "小结：\n1. 一项"),
        ("An English line\n中文", "An English line\n中文"),
    ],
)
def test_join_broken_lines_takes_out_the_line_breaks_that_show_as_stray_spaces(text, joined):
    assert tr.join_broken_lines(text) == joined
    assert tr.join_broken_lines(joined) == joined


def test_a_line_break_inside_a_chinese_sentence_is_a_problem(tmp_path):
    path = _book(tmp_path, _cells())
    _translate_all(path, tmp_path)
    catalog = tr.load_catalog(tr.catalog_path(path, root=tmp_path))
    catalog.entries[0].text += "\n\n这一句话，\n被拆成两行。"
    tr.dump_catalog(catalog, tr.catalog_path(path, root=tmp_path))
    tr.build(root=tmp_path, notebooks=[path])
    assert [line for line in tr.problems(root=tmp_path) if "c000: a line break inside a Chinese sentence" in line]


def test_a_catalog_of_the_wrong_shape_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "bad.yml"
    path.write_text("source: x\ncells:\n- {id: c000, en: abc}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.yml: cells\\[0\\]"):
        tr.load_catalog(path)
    with pytest.raises(ValueError, match="lang"):
        tr.catalog_path(Path("chapters/01_x.ipynb"), lang="fr")


def test_every_catalog_in_the_repository_is_current_and_its_notebook_regenerated():
    """Each notebook that has a catalog is fully translated, and its generated notebook is current."""
    translated = [nb for nb in tr.english_notebooks() if tr.catalog_path(nb).exists()]
    rel = {nb.relative_to(ROOT).as_posix() for nb in translated}
    found = [
        line
        for line in tr.problems()
        if line.split(" ")[0].rstrip(":") in rel or line.startswith(("chapters/zh/", "exercises/source/zh/"))
    ]
    assert not found, "\n".join(found) + "\n(python -m rmqlib.translations todo / build)"


def test_the_terms_file_gives_one_translation_per_term():
    import yaml

    terms = yaml.safe_load((ROOT / "i18n" / "zh" / "terms.yml").read_text(encoding="utf-8"))["terms"]
    english = [t["en"] for t in terms]
    assert len(english) == len(set(english)) and all(t["zh"].strip() for t in terms)


# --------------------------------------------------------------------------- paths in the prose


def test_localize_paths_points_at_the_translated_edition_only_where_it_exists():
    translated = {"chapters/01_demo.ipynb", "exercises/source/01_demo.ipynb"}
    text = (
        "Set `exercises/source/01_demo.ipynb` (student: `exercises/student/01_demo.ipynb`), "
        "all sets in `exercises/source/` and `exercises/student/`; open `chapters/`, read "
        "chapters/01_demo.ipynb, not `chapters/02_other.ipynb` nor `site/chapters/01_demo.ipynb`; "
        "already there: `chapters/zh/01_demo.ipynb`."
    )
    assert tr.localize_paths(text, translated) == (
        "Set `exercises/source/zh/01_demo.ipynb` (student: `exercises/student/zh/01_demo.ipynb`), "
        "all sets in `exercises/source/zh/` and `exercises/student/zh/`; open `chapters/zh/`, read "
        "chapters/zh/01_demo.ipynb, not `chapters/02_other.ipynb` nor `site/chapters/01_demo.ipynb`; "
        "already there: `chapters/zh/01_demo.ipynb`."
    )
    # with no exercise set translated, the exercise folders stay English
    assert (
        tr.localize_paths("`exercises/source/` `exercises/student/`", {"chapters/01_demo.ipynb"})
        == "`exercises/source/` `exercises/student/`"
    )
    with pytest.raises(ValueError, match="lang"):
        tr.localize_paths("x", translated, lang="fr")


def test_build_points_the_translated_prose_at_the_chinese_exercise_set(tmp_path):
    cells = _cells()
    cells[2] = new_markdown_cell(
        "## Exercises\n\n`exercises/source/01_demo.ipynb` (student version in "
        "`exercises/student/`); chapter `chapters/01_demo.ipynb`."
    )
    path = _book(tmp_path, cells)
    tr.skeleton(path, root=tmp_path)
    catalog = tr.load_catalog(tr.catalog_path(path, root=tmp_path))
    catalog.entries[0].text = "# 01 · 示例"
    catalog.entries[1].text = (
        "## 练习\n\n`exercises/source/01_demo.ipynb`（学生版在 `exercises/student/` 中）；"
        "本章 `chapters/01_demo.ipynb`。"
    )  # the translator quotes the English paths
    tr.dump_catalog(catalog, tr.catalog_path(path, root=tmp_path))
    target = tmp_path / "chapters" / "zh" / "01_demo.ipynb"
    tr.build(root=tmp_path, notebooks=[path])
    # no exercise set is translated yet: only the chapter's own path moves
    assert tr.cell_text(json.loads(target.read_text(encoding="utf-8"))["cells"][2]) == (
        "## 练习\n\n`exercises/source/01_demo.ipynb`（学生版在 `exercises/student/` 中）；"
        "本章 `chapters/zh/01_demo.ipynb`。"
    )
    exercise = tmp_path / "exercises" / "source" / "01_demo.ipynb"
    exercise.parent.mkdir(parents=True)
    nbformat.write(new_notebook(cells=[new_markdown_cell("# Exercises 01")]), exercise)
    nb = nbformat.read(exercise, as_version=4)
    nb.cells[0].id = "c000"
    nbformat.write(nb, exercise)
    tr.dump_catalog(
        tr.Catalog("exercises/source/01_demo.ipynb", [tr.Entry("c000", tr.text_hash("# Exercises 01"), "# 练习 01")]),
        tr.catalog_path(exercise, root=tmp_path),
    )
    assert any("chapters/zh/01_demo.ipynb: stale" in line for line in tr.problems(root=tmp_path))
    tr.build(root=tmp_path, notebooks=[path])
    assert tr.cell_text(json.loads(target.read_text(encoding="utf-8"))["cells"][2]) == (
        "## 练习\n\n`exercises/source/zh/01_demo.ipynb`（学生版在 `exercises/student/zh/` 中）；"
        "本章 `chapters/zh/01_demo.ipynb`。"
    )


def test_the_chinese_edition_names_no_english_notebook_that_has_a_chinese_twin():
    translated = tr.translated_sources()
    english_paths = {p for p in translated} | {
        p.replace("/source/", "/student/") for p in translated if p.startswith("exercises/")
    }
    found = []
    for folder in ("chapters/zh", "exercises/source/zh", "exercises/student/zh"):
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
                if cell["cell_type"] == "markdown":
                    text = tr.cell_text(cell)
                    found += [
                        f"{folder}/{path.name}: {p}" for p in english_paths if f"`{p}`" in text or f" {p}" in text
                    ]
    assert translated and not found, "\n".join(found) + "\n(python -m rmqlib.translations build)"


# --------------------------------------------------------------------------- recurring headings


def test_labels_are_headings_without_their_numbering_and_line_leading_emphasis():
    text = (
        "# 02 · Sharing: evenly\n\n**What you will learn**\n\n1. *Predict, then check*: the order.\n"
        "- **Rubric (3 points).** One point each.\nA *word* inside a sentence is no label.\n### 3 · Explain why"
    )
    assert tr.labels(text) == [
        ("#", "Sharing: evenly"),
        ("*", "What you will learn"),
        ("*", "Predict, then check"),
        ("*", "Rubric (3 points)."),
        ("###", "Explain why"),
    ]


def test_a_recurring_heading_rendered_two_ways_is_named(tmp_path):
    paths = []
    for name, rendering in (("01_demo", "本书的自检"), ("02_more", "本书的自我检查")):
        nb = new_notebook(
            cells=[
                new_markdown_cell(f"# {name[:2]} · {name}"),
                new_markdown_cell("## The book checks itself\n\nEach claim, computed."),
            ]
        )
        for i, cell in enumerate(nb.cells):
            cell.id = f"c{i:03d}"
        path = tmp_path / "chapters" / f"{name}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        tr.dump_catalog(
            tr.Catalog(
                f"chapters/{name}.ipynb",
                [
                    tr.Entry("c000", tr.text_hash(nb.cells[0].source), f"# {name[:2]} · 示例 {name}"),
                    tr.Entry("c001", tr.text_hash(nb.cells[1].source), f"## {rendering}\n\n每条论断都算一遍。"),
                ],
            ),
            tr.catalog_path(path, root=tmp_path),
        )
        paths.append(path)
    conflicts = tr.label_conflicts(root=tmp_path)
    assert conflicts == {
        "The book checks itself": {
            "本书的自检": ["chapters/01_demo.ipynb"],
            "本书的自我检查": ["chapters/02_more.ipynb"],
        }
    }
    assert any(line.startswith("'The book checks itself' is rendered 2 ways") for line in tr.problems(root=tmp_path))
    # one rendering everywhere: nothing to report; a translation that drops a heading is named
    catalog = tr.load_catalog(tr.catalog_path(paths[1], root=tmp_path))
    catalog.entries[1].text = "## 本书的自检\n\n每条论断都算一遍。"
    tr.dump_catalog(catalog, tr.catalog_path(paths[1], root=tmp_path))
    assert tr.label_conflicts(root=tmp_path) == {}
    catalog.entries[1].text = "每条论断都算一遍。"
    tr.dump_catalog(catalog, tr.catalog_path(paths[1], root=tmp_path))
    assert tr.label_conflicts(root=tmp_path) == {
        "": {"headings differ from the English": ["chapters/02_more.ipynb c001"]}
    }


def test_every_recurring_heading_and_label_of_the_real_edition_has_one_rendering():
    conflicts = tr.label_conflicts()
    assert not conflicts, json.dumps(conflicts, ensure_ascii=False, indent=1)


def test_a_recurring_cell_translated_two_ways_is_named(tmp_path):
    opening = "# Exercises {n} · {title}\n\nChapter: `chapters/{n}_x.ipynb`. Fill in the cells, then run the checks."
    translations = {
        "01": "# 练习 01 · 甲\n\n对应章节：`chapters/01_x.ipynb`。填写代码，然后运行检查。",
        "02": "# 练习 02 · 乙\n\n对应章节：`chapters/02_x.ipynb`。填写代码，然后运行检查。",
        "03": "# 练习 03 · 丙\n\n对应章节：`chapters/03_x.ipynb`。请填写单元，再运行检查单元。",
    }
    for n, title in (("01", "One"), ("02", "Two"), ("03", "Three")):
        nb = new_notebook(cells=[new_markdown_cell(opening.format(n=n, title=title))])
        nb.cells[0].id = "c000"
        path = tmp_path / "exercises" / "source" / f"{n}_x.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        tr.dump_catalog(
            tr.Catalog(
                f"exercises/source/{n}_x.ipynb", [tr.Entry("c000", tr.text_hash(nb.cells[0].source), translations[n])]
            ),
            tr.catalog_path(path, root=tmp_path),
        )
    conflicts = tr.cell_conflicts(root=tmp_path)
    assert [sorted(where for w in c.values() for where in w) for c in conflicts.values()] == [
        ["exercises/source/01_x.ipynb", "exercises/source/02_x.ipynb", "exercises/source/03_x.ipynb"]
    ]
    assert [sorted(len(w) for w in c.values()) for c in conflicts.values()] == [[1, 2]]  # 03 is the odd one out
    assert any(line.startswith("a recurring cell is translated 2 ways") for line in tr.problems(root=tmp_path))


def test_every_recurring_cell_of_the_real_edition_has_one_translation():
    conflicts = tr.cell_conflicts()
    assert not conflicts, json.dumps(conflicts, ensure_ascii=False, indent=1)
