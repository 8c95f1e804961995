"""The figures' language: every label comes from the message catalog, in English or Chinese."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import time
from pathlib import Path

import plotly.graph_objects as go
import pytest

from rmqlib import viz
from rmqlib.viz import i18n
from rmqlib.viz.messages import PATTERNS, ZH
from rmqlib.viz.style import fit_title, plain_title

ROOT = Path(__file__).resolve().parents[2]


def _load_inventory():
    """tests/viz/viz_inventory.py (loaded by path: only tests/ itself is on the import path)."""
    spec = importlib.util.spec_from_file_location("viz_inventory", Path(__file__).with_name("viz_inventory.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


viz_inventory = _load_inventory()


@pytest.fixture(autouse=True)
def english_around_each_test():
    """Every test starts in English, not strict, and leaves the language as it found it."""
    assert i18n.language() == "en", "a test before this one left the figures in another language"
    yield
    i18n.use_language("en")
    i18n._strict[0] = False


@pytest.fixture(scope="module")
def chinese():
    """Every figure and panel built in Chinese, in strict mode: a label with no entry raises."""
    with i18n.language_of("zh"), i18n.strict():
        built = viz_inventory.figures(), viz_inventory.panels()
    return built


# --------------------------------------------------------------------------- what a reader sees

# Broker, Master and Slave: RocketMQ's Chinese documentation keeps these words as they are
# "diff": the column a dashboard and mqadmin consumerProgress print, which Chinese engineers name as it is printed
_ALLOWED_WORDS = {
    "Broker",
    "Master",
    "Slave",
    "Pop",
    "Java",
    "ms",
    "vnodes",
    "p50",
    "p99",
    "crash",
    "orderly_crash",
    "diff",
}


def _english_words(text: str) -> list[str]:
    """The English words left in ``text`` once Java names, ids, queue names, numbers and markup are taken out."""
    text = re.sub(r"<[^>]+>|%\{[^}]*\}|&\w+;", " ", text)
    text = re.sub(r"\S*@\S*", " ", text)  # client ids (IP@instanceName) are data, whatever the instance is named
    words = []
    for token in re.findall(r"[A-Za-z][\w.@:/=\-\[\]]*", text):
        if (
            re.search(r"[\d_@:/=\-\[\].]", token)
            or token.isupper()  # ids, queues, AVG_BY_CIRCLE, IDC1
            or re.search(r"[a-z][A-Z]", token)
            or token in _ALLOWED_WORDS
        ):  # msgTreeMap, RebalanceImpl
            continue
        words.append(token)
    return words


def _axes(layout: dict) -> list[dict]:
    return [value for key, value in layout.items() if re.fullmatch(r"[xy]axis\d*|polar\d*", key)]


def shown_text(fig: go.Figure) -> dict[str, list[str]]:
    """What a reader reads on ``fig``: its title, axis and legend titles, legend names, hover text, notes."""
    layout = fig.layout.to_plotly_json()
    seen = {"title": [plain_title(layout)], "axes": [], "legend": [], "hover": [], "notes": []}
    for axis in _axes(layout):
        seen["axes"].append(((axis.get("title") or {}).get("text")) or "")
    seen["legend"].append(((layout.get("legend") or {}).get("title") or {}).get("text") or "")
    for trace in fig.to_plotly_json()["data"]:
        if trace.get("showlegend") is not False and trace.get("name"):
            seen["legend"].append(trace["name"])
        for key in ("hovertemplate", "hovertext"):
            value = trace.get(key)
            seen["hover"] += [value] if isinstance(value, str) else [v for v in value or () if isinstance(v, str)]
        colorbar = ((trace.get("colorbar") or {}).get("title") or {}).get("text")
        if colorbar:
            seen["axes"].append(colorbar)
        if "text" in (trace.get("mode") or "") and trace.get("text") is not None:
            value = trace["text"]
            seen["notes"] += [value] if isinstance(value, str) else [str(t) for t in value]
    seen["notes"] += [a.get("text") or "" for a in layout.get("annotations", ())]
    for slider in layout.get("sliders", ()):
        seen["notes"].append((slider.get("currentvalue") or {}).get("prefix") or "")
    return seen


def test_every_figure_in_chinese_has_a_chinese_title_and_no_english_words_left(chinese):
    figures, _ = chinese
    left = {}
    for name, fig in figures.items():
        seen = shown_text(fig)
        assert re.search(r"[\u4e00-\u9fff]", seen["title"][0]), f"{name}: title {seen['title'][0]!r} is not Chinese"
        words = {part: sorted({w for text in texts for w in _english_words(text)}) for part, texts in seen.items()}
        words = {part: found for part, found in words.items() if found}
        if words:
            left[name] = words
    assert not left, f"English words left in Chinese figures: {json.dumps(left, ensure_ascii=False)[:2000]}"


def test_every_panel_in_chinese_labels_its_controls_and_buttons_in_chinese(chinese):
    _, panels = chinese
    for name, panel in panels.items():
        labels = [w.description for w in panel.controls.values()] + [
            b.description for b in getattr(panel, "buttons", [])
        ]
        for label in labels:
            assert re.search(r"[\u4e00-\u9fff]", label) and not _english_words(label), f"{name}: {label!r}"
        assert not _english_words(plain_title(panel.figure.layout)), name


def test_panels_key_their_sliders_by_the_english_label_in_any_language(chinese):
    _, panels = chinese
    assert set(panels["ring_panel"].sliders) == {"consumers", "queues", "virtual nodes"}
    assert {"IDC1 consumers", "IDC2 brokers", "queues per broker"} <= set(panels["machine_room_panel"].sliders)
    assert panels["ring_panel"].sliders["virtual nodes"].description == "虚拟节点"


def test_a_panel_redrawn_after_a_slider_move_stays_in_its_language():
    with i18n.language_of("zh"), i18n.strict():
        panel = viz.ring_panel(
            consumers=3, queues=8, virtual_nodes=2, max_consumers=4, max_queues=8, max_virtual_nodes=4
        )
        panel.sliders["consumers"].value = 4
    assert panel.error is None and "个消费者" in plain_title(panel.figure.layout)


def test_a_missing_entry_raises_in_strict_mode_and_falls_back_to_english_otherwise():
    with i18n.language_of("zh"):
        assert i18n.text("no such label") == "no such label"
        with i18n.strict(), pytest.raises(i18n.MissingTranslation, match="no such label"):
            i18n.text("no such label")
        assert i18n.text("{n} consumers", n=3) == "3 consumers"  # not a catalog entry: the English, filled in
        got = i18n.text("{q} queues over {c} consumers: {counts}", q=8, c=3, counts="x")
        assert got == "8 个队列分给 3 个消费者：x"


def test_the_catalog_keeps_every_field_of_the_english_in_the_chinese():
    fields = re.compile(r"(?<!\{)\{(\w+)(?:[:!][^}]*)?\}(?!\})")
    for english, chinese in list(ZH.items()) + list(PATTERNS["zh"].items()):
        assert sorted(fields.findall(english)) == sorted(fields.findall(chinese)), english
        assert english.count("%{") == chinese.count("%{"), english  # plotly's placeholders all kept
        assert "<extra></extra>" not in english or "<extra></extra>" in chinese, english


def test_every_label_the_builders_pass_to_text_has_a_chinese_entry():
    """Read every ``text("...")`` call in rmqlib/viz: a literal with no entry in ZH fails (strict mode only
    sees the labels the inventory happens to draw)."""
    missing = []
    for path in sorted((ROOT / "rmqlib" / "viz").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("text", "plural"):
                for arg in node.args[: 2 if node.func.id == "plural" else 1]:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value not in ZH:
                        missing.append(f"{path.name}: {arg.value!r}")
    assert not missing, missing


# --------------------------------------------------------------------------- English stays as it was


def test_english_mode_draws_exactly_the_english_labels():
    fig = viz.allocation_view("AVG", 8, 3)
    assert plain_title(fig.layout) == "AVG: 8 queues over 3 consumers: 2 hold 3, 1 holds 2"
    assert fig.layout.xaxis.title.text == "queues (Java sort order)"
    assert viz.ring_panel().sliders["virtual nodes"].description == "virtual nodes"
    pq = viz.process_queue_panel()
    assert [b.description for b in pq.buttons] == ["◀ undo", "acknowledge next ▶", "reset"]
    timeline = viz.ownership_timeline_figure(viz_inventory.runs()[0])
    assert timeline.layout.xaxis.title.text == "simulated time (s)" and timeline.layout.legend.title.text == "consumer"
    assert plain_title(viz.ring_view(4, 16, 0).layout) == (
        "0 virtual nodes: the ring is empty, so no consumer gets a queue"
    )


def test_english_and_chinese_figures_plot_the_same_numbers(chinese):
    figures, _ = chinese
    english = viz_inventory.figures()
    for name, fig in figures.items():
        assert fig.layout.meta == english[name].layout.meta, name

        def plotted(figure):  # the numbers; category labels are words, translated
            return [
                {
                    key: [v for v in trace.get(key) if not isinstance(v, str)]
                    if isinstance(trace.get(key), list)
                    else trace.get(key)
                    for key in ("x", "y", "r", "theta", "z", "base")
                }
                for trace in figure.to_plotly_json()["data"]
            ]

        assert plotted(fig) == plotted(english[name]), name


def test_text_fills_fields_only_when_given_so_plotly_placeholders_need_no_escaping():
    assert i18n.text("%{x}: %{y} queues<extra></extra>") == "%{x}: %{y} queues<extra></extra>"
    assert i18n.text("{cid}<br>{n} queues<extra></extra>", cid="c1", n=2) == "c1<br>2 queues<extra></extra>"


# --------------------------------------------------------------------------- the switch


def test_use_language_switches_and_language_of_restores():
    assert i18n.language() == "en"
    with i18n.language_of("zh"):
        assert i18n.language() == "zh" and i18n.text("consumers") == "消费者"
    assert i18n.language() == "en" and i18n.text("consumers") == "consumers"
    viz.use_language("zh")
    assert viz.language() == "zh"


def test_the_language_set_by_the_test_before_did_not_leak_into_this_one():
    # the test above ends in Chinese; the fixture (which also checks the start of every test) put English back
    assert i18n.language() == "en" and i18n.text("consumers") == "consumers"


@pytest.mark.parametrize("bad", ["fr", "", "ZH", "zh-CN", " zh"])
def test_an_unknown_language_is_refused_naming_lang(bad):
    with pytest.raises(ValueError, match="lang"):
        viz.use_language(bad)
    assert i18n.language() == "en"


@pytest.mark.parametrize("bad", [None, 1, b"zh", ["zh"]])
def test_a_language_that_is_not_a_string_is_refused_naming_lang(bad):
    with pytest.raises(TypeError, match="lang"):
        viz.use_language(bad)


def test_strict_takes_a_bool_and_has_entry_checks_its_arguments():
    with pytest.raises(TypeError, match="on"):
        with i18n.strict("yes"):
            pass
    with pytest.raises(ValueError, match="lang"):
        i18n.has_entry("consumers", "fr")
    assert i18n.has_entry("consumers") and not i18n.has_entry("no such label") and i18n.has_entry("x", "en")


# --------------------------------------------------------------------------- text a notebook passes in


def test_phrase_translates_a_known_title_exactly_or_by_pattern_and_leaves_other_text_alone():
    with i18n.language_of("zh"):
        assert i18n.phrase("offset 112 sent to the broker") == "位点 112 已发送给 Broker"
        assert i18n.phrase("not a catalog entry") == "not a catalog entry"
    assert i18n.phrase("offset 112 sent to the broker") == "offset 112 sent to the broker"


def _chapter_strings():
    """(notebook, text) for every literal a chapter passes to rmqlib.viz as a title, an axis title or a prediction,
    and the run names it gives ``run_variants``, ``latency_figure``, ``backlog_figure`` and ``retry_figure`` (drawn as
    labels)."""
    keywords = {"title", "x_title", "y_title", "why", "label"}
    found = []
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            if "rmqlib.viz" not in source and "Prediction" not in source and "_figure(" not in source:
                continue
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                if (
                    name in ("run_variants", "latency_figure", "backlog_figure", "retry_figure")
                    and node.args
                    and isinstance(node.args[0], ast.Dict)
                ):
                    found += [
                        (path.name, key.value)
                        for key in node.args[0].keys
                        if isinstance(key, ast.Constant) and isinstance(key.value, str)
                    ]
                if not (name == "Prediction" or name.endswith(("_figure", "_view"))):
                    continue
                values = [
                    kw.value
                    for kw in node.keywords
                    if kw.arg in keywords or (name == "Prediction" and kw.arg == "choices")
                ]
                if name == "Prediction" and node.args:
                    values.append(node.args[0])
                for value in values:
                    items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
                    for item in items:
                        try:
                            literal = ast.literal_eval(item)
                        except ValueError:
                            continue
                        if isinstance(literal, str):
                            found.append((path.name, literal))
    return found


def test_every_title_and_prediction_a_chapter_passes_in_has_a_chinese_entry():
    strings = _chapter_strings()
    assert len(strings) > 20  # the chapters do pass their own titles and questions
    missing = [f"{nb}: {text!r}" for nb, text in strings if re.search("[A-Za-z]", text) and not i18n.has_entry(text)]
    assert not missing, "\n".join(missing)


def test_a_prediction_in_chinese_shows_chinese_and_still_judges_the_english_choice():
    from rmqlib.viz import Prediction

    with i18n.language_of("zh"), i18n.strict():
        p = Prediction("Q?", answer=lambda: "about 20 s", why="", choices=["under a second", "about 20 s"])
        assert [label for label, _ in p.entry.options] == ["不到一秒", "约 20 秒"]
        p.entry.value = "about 20 s"
        assert p.check() == "答对了。" and p.verdict == "right"
        assert p.check("under a second").startswith("不对：模型给出的是 约 20 秒")


# --------------------------------------------------------------------------- speed and titles


def test_a_label_lookup_costs_nothing_a_slider_move_could_notice():
    with i18n.language_of("zh"):
        start = time.perf_counter()
        for _ in range(10_000):
            i18n.text(
                "{c} consumers x {v} virtual nodes, {q} queues: {counts} (max - min = {spread})",
                c=4,
                v=3,
                q=16,
                counts="x",
                spread=1,
            )
        per_call = (time.perf_counter() - start) / 10_000
    assert per_call < 50e-6  # a slider move draws a few dozen labels and takes milliseconds


def test_a_long_chinese_title_is_cut_at_its_full_width_colon_and_wrapped_between_characters():
    title = "一致性哈希的不均衡度：" + "每个消费者分到的队列数" * 12
    head, joiner, detail, lines = fit_title(title)
    assert head == "一致性哈希的不均衡度" and joiner == "：" and lines >= 2 and "\u200b<br>" in detail
    assert (
        plain_title({"title": {"text": head}, "annotations": [{"name": "title detail" + joiner, "text": detail}]})
        == title
    )


def test_the_catalog_uses_the_glossary_terms():
    """A label that says consumer, queue, virtual node, offset, seed, pause... says it with the word of
    i18n/zh/terms.yml (the chapters' glossary), never a synonym."""
    import yaml

    terms = {
        t["en"]: re.sub(r"（.*?）", "", t["zh"])
        for t in yaml.safe_load((ROOT / "i18n" / "zh" / "terms.yml").read_text(encoding="utf-8"))["terms"]
    }
    checked = [
        "consumer",
        "queue",
        "virtual node",
        "offset",
        "seed",
        "rebalance",
        "pause",
        "dead-letter queue",
        "pull",
        "heartbeat",
        "imbalance",
        "topic",
    ]
    wrong = []
    for english, chinese in list(ZH.items()) + list(PATTERNS["zh"].items()):
        words = re.sub(r"\{[^}]*\}", " ", english).lower()  # fields are not words
        wrong += [
            f"{english!r} -> {chinese!r}: no {terms[term]}"
            for term in checked
            if re.search(rf"\b{term}s?\b", words) and terms[term] not in chinese
        ]
    assert not wrong, "\n".join(wrong)
