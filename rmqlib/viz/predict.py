"""Predict, then see: a question the reader answers before the book shows what the model says.

:class:`Prediction` shows a question with choices (or a number box). The right answer is not typed
in the cell: it is a function the book passes (``lambda: replay_handover(...).redelivered[q]``),
so the answer always comes from the model. It is computed when the cell runs (so a broken answer
fails the notebook's tests, and a wrong set of choices too) but shown only once the reader has
committed. The feedback says whether the reader was right, what the model gives, and why.

On the static site (no kernel) the same cell renders as a question with a collapsed answer.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence

import ipywidgets as widgets

from rmqlib.viz.i18n import phrase, text
from rmqlib.viz.static import is_static


class Prediction:
    """A question, the reader's answer, and the model's verdict.

    ``choices``: the options (shown as given; the model's answer must be one of them), or None for
    a number box. ``answer``: a zero-argument function computing the right answer with ``rmqlib``.
    ``why``: one or two sentences shown with the verdict, right or wrong. A number box accepts an
    answer within ``tolerance`` (relative) of the model's.

    The question, the choices and ``why`` are shown through :func:`~rmqlib.viz.i18n.phrase` (the Chinese
    edition runs the same cell); the choices keep their own values, so answers compare as given.
    """

    def __init__(
        self,
        question: str,
        answer: Callable[[], object],
        why: str,
        choices: Sequence | None = None,
        tolerance: float = 0.0,
    ):
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question must be a non-empty str")
        if not callable(answer):
            raise TypeError("answer must be a zero-argument function that computes the right answer")
        if not isinstance(why, str):
            raise TypeError(f"why must be a str, got {type(why).__name__}")
        if choices is not None:
            choices = list(choices)
            if len(choices) < 2 or len(set(map(str, choices))) != len(choices):
                raise ValueError("choices must hold at least two distinct options")
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance < 1:
            raise ValueError(f"tolerance must be a number in [0, 1), got {tolerance!r}")
        self.question, self.why, self.choices, self.tolerance = question, why, choices, float(tolerance)
        self._answer = answer
        self._computed: list = []
        self.answer()  # now, so that a broken answer fails when the cell runs, not when a reader checks
        self.verdict: str | None = None  # "right" or "wrong" once the reader has answered
        self.feedback = widgets.HTML(value="")
        if choices is None:
            self.entry: widgets.ValueWidget = widgets.FloatText(
                value=None, description=text("your answer"), style={"description_width": "initial"}
            )
        else:
            shown = [phrase(str(c)) for c in choices]  # (label, value) pairs only where a label is translated
            options = (
                [str(c) for c in choices] if shown == [str(c) for c in choices] else list(zip(shown, map(str, choices)))
            )
            self.entry = widgets.RadioButtons(options=options, value=None, layout=widgets.Layout(width="max-content"))
        self.button = widgets.Button(description=text("Check"), button_style="primary")
        self.button.on_click(lambda _: self.check())
        self.widget = widgets.VBox(
            [
                widgets.HTML(text("<b>Predict:</b> {question}", question=html.escape(phrase(question)))),
                self.entry,
                self.button,
                self.feedback,
            ]
        )

    def answer(self):
        """The model's answer (computed once, when the question is made)."""
        if not self._computed:
            value = self._answer()
            if self.choices is not None and str(value) not in map(str, self.choices):
                raise ValueError(f"the model's answer {value!r} is not one of the choices {self.choices}")
            self._computed.append(value)
        return self._computed[0]

    def _is_right(self, guess) -> bool:
        right = self.answer()
        if self.choices is not None:
            return str(guess) == str(right)
        try:
            guess, right = float(guess), float(right)
        except (TypeError, ValueError):
            return False
        return math.isclose(guess, right, rel_tol=self.tolerance, abs_tol=0 if self.tolerance else 1e-9)

    def check(self, guess=None) -> str:
        """Judge ``guess`` (default: what the reader entered) and show and return the feedback."""
        guess = self.entry.value if guess is None else guess
        if guess is None or guess == "":
            said = text("Pick an answer first: the point is to commit before you see.")
            self.verdict = None
        else:
            right = self._is_right(guess)
            self.verdict = "right" if right else "wrong"
            head = (
                text("Right.")
                if right
                else text("Not quite: the model says {answer}.", answer=phrase(str(self.answer())))
            )
            said = text("{head} {why}", head=head, why=phrase(self.why))
        color = {"right": "#1CA71C", "wrong": "#B00"}.get(self.verdict or "", "#555")
        self.feedback.value = f"<span style='color:{color}'>{html.escape(said)}</span>"
        return said

    def static_html(self) -> str:
        """The question with a collapsed answer, for a page without a kernel."""
        options = (
            ""
            if self.choices is None
            else "<ul>" + "".join(f"<li>{html.escape(phrase(str(c)))}</li>" for c in self.choices) + "</ul>"
        )
        return text(
            "<div class='rmqlib-predict'><p><b>Predict:</b> {question}</p>{options}<details><summary>"
            "Show the answer</summary><p>The model says <b>{answer}</b>. {why}</p></details></div>",
            question=html.escape(phrase(self.question)),
            options=options,
            answer=html.escape(phrase(str(self.answer()))),
            why=html.escape(phrase(self.why)),
        )

    def _repr_mimebundle_(self, **kwargs):
        if is_static():
            return {
                "text/html": self.static_html(),
                "text/plain": text("Predict: {question}", question=phrase(self.question)),
            }
        return self.widget._repr_mimebundle_(**kwargs)


__all__ = ["Prediction"]
