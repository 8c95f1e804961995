"""Predict, then see: the reader commits, the model answers."""

import pytest

from rmqlib.viz.predict import Prediction


def test_the_answer_is_computed_once_when_the_question_is_made_and_shown_only_after_a_commitment():
    calls = []
    p = Prediction("How many?", lambda: calls.append(1) or 7, "Because.", choices=[0, 7, 20])
    assert calls == [1] and p.verdict is None and "7" not in p.feedback.value
    assert p.check().startswith("Pick an answer first") and "7" not in p.feedback.value
    p.entry.value = "20"
    assert p.check() == "Not quite: the model says 7. Because." and p.verdict == "wrong"
    p.entry.value = "7"
    assert p.check() == "Right. Because." and p.verdict == "right"
    assert calls == [1]  # computed once
    p.button.click()
    assert "Right." in p.feedback.value


def test_a_number_box_accepts_answers_within_the_tolerance():
    p = Prediction("How long (s)?", lambda: 120.0, "The scan.", tolerance=0.1)
    assert p.check(110) == "Right. The scan." and p.check(100).startswith("Not quite")
    exact = Prediction("How many?", lambda: 3, "Three.")
    assert exact.check(3) == "Right. Three." and exact.verdict == "right"
    assert exact.check(3.5).startswith("Not quite") and exact.check("x").startswith("Not quite")


def test_the_static_page_shows_the_question_and_hides_the_answer_in_a_details_element(monkeypatch):
    p = Prediction(
        "Who goes first?",
        lambda: "the newcomer",
        "It reads before the persist.",
        choices=["the old owner", "the newcomer"],
    )
    monkeypatch.setenv("RMQLIB_STATIC", "1")
    bundle = p._repr_mimebundle_()
    page = bundle["text/html"]
    assert "<details>" in page
    assert page.index("Who goes first?") < page.index("<details>") < page.index("the newcomer</b>")
    monkeypatch.setenv("RMQLIB_STATIC", "0")
    assert "application/vnd.jupyter.widget-view+json" in p._repr_mimebundle_()


@pytest.mark.parametrize(
    "kwargs, error, word",
    [
        (dict(question=""), ValueError, "question"),
        (dict(answer=3), TypeError, "answer"),
        (dict(why=None), TypeError, "why"),
        (dict(choices=[1]), ValueError, "choices"),
        (dict(choices=[1, "1"]), ValueError, "choices"),
        (dict(tolerance=2), ValueError, "tolerance"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, word):
    args = dict(question="q?", answer=lambda: 1, why="w", choices=None) | kwargs
    with pytest.raises(error, match=word):
        Prediction(**args)


def test_a_model_answer_outside_the_choices_is_an_error_not_a_silent_wrong_verdict():
    with pytest.raises(ValueError, match="not one of the choices"):
        Prediction("q?", lambda: 5, "w", choices=[1, 2])
