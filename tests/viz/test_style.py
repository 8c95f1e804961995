"""The house style: titles fitted to the plot, legends in rows under it, applying it twice changes nothing."""

import plotly.graph_objects as go
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlib.viz.style import (
    PLOT_WIDTH_PX,
    TEMPLATE_NAME,
    _wrap,
    fit_title,
    house_style,
    legend_rows,
    plain_title,
    styled_figure,
)


def test_a_short_title_stays_as_it_is():
    assert fit_title("AVG: 8 queues") == ("AVG: 8 queues", "", "", 0)


def test_a_long_title_keeps_a_headline_and_loses_no_word():
    text = (
        "MACHINE_ROOM_NEARBY-AVG: 12 queues in 3 rooms: 4 consumed from their own room, 8 from another room "
        "because no consumer runs there, and the fallback shares them room by room"
    )
    head, joiner, detail, lines = fit_title(text)
    assert head == "MACHINE_ROOM_NEARBY-AVG: 12 queues in 3 rooms" and lines == detail.count("<br>") + 1 >= 2
    assert head + joiner + detail.replace("<br>", " ") == text
    fig = house_style(go.Figure(layout=dict(title=text)))
    (note,) = fig.layout.annotations
    assert fig.layout.title.text == head and note.text == detail
    assert plain_title(fig.layout) == text
    assert len(house_style(fig).layout.annotations) == 1 and plain_title(fig.layout) == text  # idempotent


def test_the_detail_is_never_a_stray_word_or_two():
    # one word past the headline's width, at a word break and after a colon: words of the headline go with it
    text = "messages consumed per second by each of the six consumers of the group, in 5 s averages"
    assert fit_title(text)[1:] == (" ", "5 s averages", 1)
    text = "six consumers share four queues and two of them are idle all the time in this run: averages"
    assert fit_title(text)[1:3] == (" ", "run: averages")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text("abcdefghij", min_size=1, max_size=12), min_size=2, max_size=30))
def test_a_title_of_words_leaves_a_short_detail_only_when_its_headline_has_no_word_to_give(words):
    text = " ".join(words)
    head, joiner, detail, _ = fit_title(text)
    assert head + joiner + detail.replace("<br>", " ") == text
    if detail and len(detail.replace("<br>", " ")) < 12:
        assert head.rfind(" ") < 12


def test_legend_rows_grow_with_the_entries():
    assert legend_rows(["a", "b"]) == 1
    assert legend_rows([f"10.0.0.{i}@10{i:02d}" for i in range(24)]) > 2


def test_house_style_lays_the_legend_under_the_plot_and_is_idempotent():
    fig = go.Figure([go.Scatter(x=[1], y=[1], name=f"consumer {i}") for i in range(12)])
    fig.update_layout(title="t", height=300, xaxis_title="time")
    once = house_style(fig).to_plotly_json()["layout"]
    twice = house_style(go.Figure(fig)).to_plotly_json()["layout"]
    assert once == twice
    assert once["template"] == TEMPLATE_NAME or once["template"]["layout"]  # the registered template
    assert once["legend"]["orientation"] == "h" and once["legend"]["yref"] == "container"
    assert once["height"] > 300 and once["margin"]["b"] >= 58 + 21 * legend_rows(
        [f"consumer {i}" for i in range(12)], width_px=PLOT_WIDTH_PX
    )


def test_a_parenthesis_goes_with_the_detail_and_the_title_reads_back_whole():
    text = "CONSISTENT_HASH: median max - min goes from 21 at 1 vnode(s) to 8 at 200 (8 consumers, 64 queues, 8 sets)"
    head, joiner, detail, _ = fit_title(text)
    assert head == "CONSISTENT_HASH" and joiner == ": "  # a colon is preferred to a parenthesis
    text = "orderly_crash seed 1 broker lock table, bars, and listener calls, ticks (lock expiry 60 s, seed 1)"
    head, joiner, detail, _ = fit_title(text)
    assert head.endswith("calls, ticks") and detail == "(lock expiry 60 s, seed 1)" and joiner == " "
    assert plain_title(house_style(go.Figure(layout=dict(title=text))).layout) == text


def test_a_name_value_clause_after_a_semicolon_stays_whole():
    text = "12 queues in 3 rooms: 4 consumed from another room, 4 consumed by nobody; consumers: 2 hold 3, 1 holds 2"
    head, joiner, detail, _ = fit_title(text)
    assert (head, joiner, detail) == (
        "12 queues in 3 rooms: 4 consumed from another room, 4 consumed by nobody",
        "; ",
        "consumers: 2 hold 3, 1 holds 2",
    )
    assert plain_title(house_style(go.Figure(layout=dict(title=text))).layout) == text


def test_a_builder_that_retitles_a_styled_figure_keeps_each_word_once():
    from rmqlib.viz import machine_room_view

    view = plain_title(machine_room_view("MACHINE_ROOM_NEARBY-AVG", (1, 1, 1), (2, 1, 0)).layout)
    assert view.startswith("MACHINE_ROOM_NEARBY-AVG: 12 queues in 3 rooms: ") and view.count("consumers:") == 1


def test_styled_figure_is_house_style_of_the_same_figure():
    """The one-pass builder the sliders use gives exactly the figure house_style gives."""
    data = [dict(type="scatter", x=[0, 1], y=[0, 1], name=f"consumer-{i}") for i in range(12)]
    layout = dict(
        title=dict(
            text="12 queues over 12 consumers: 12 hold 1; every consumer holds exactly one queue in this made-up group"
        ),
        height=300,
        xaxis=dict(title=dict(text="queues")),
        legend=dict(title=dict(text="consumer")),
        meta={"view": "test"},
    )
    one_pass = styled_figure(data, layout)
    assert one_pass.to_plotly_json() == house_style(go.Figure(data=data, layout=layout)).to_plotly_json()
    assert one_pass.layout.annotations, "the long title was not split into a headline and a detail"
    assert one_pass.layout.height > 300, "no strip was kept for the legend"


def test_a_chinese_line_never_begins_with_closing_punctuation():
    """Chinese typesetting keeps a comma, a full stop or a closing bracket on the line it closes."""
    text = "等待中的消息：" + "；".join(f"gRPC 推送，缓存 {n} 条最多 72 条（22 秒）" for n in range(2, 9))
    with_punctuation = 0
    for limit in range(8, 60):
        lines = _wrap(text, limit)
        assert "".join(line.replace("\u200b", "") for line in lines).replace(" ", "") == text.replace(" ", "")
        assert not any(line.lstrip("\u200b")[:1] in "，。、；：！？）》」』】" for line in lines[1:]), (limit, lines)
        with_punctuation += sum(line.rstrip("\u200b")[-1:] in "，；）" for line in lines[:-1])
    assert with_punctuation  # some breaks fell right after punctuation, which stayed on the line before
    assert plain_title(house_style(go.Figure(layout=dict(title=text))).layout) == text
