"""Exercise notebooks: student versions from instructor sources, and the checks they call.

``python -m rmqlib.exercises`` reads ``exercises/source/NN_slug.ipynb`` (instructor
versions, solutions marked the way nbgrader marks them) and writes
``exercises/student/NN_slug.ipynb``:

* in a code cell whose metadata says ``nbgrader.solution: true``, every region from
  ``### BEGIN SOLUTION`` to ``### END SOLUTION`` becomes ``# YOUR CODE HERE`` and
  ``raise NotImplementedError()`` at the marker's indentation (a cell without markers is
  replaced whole), as nbgrader's ClearSolutions does; a markdown solution cell becomes
  ``YOUR ANSWER HERE``;
* every output and execution count is cleared.

The autograder cells call :func:`check`: a wrong answer prints what was expected
of it and fails; an answer still missing (``None``) raises NotImplementedError, so
an unanswered student notebook fails only with NotImplementedError.

nbformat is needed only to generate notebooks (it is a test dependency), so it is
imported lazily.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nbformat import NotebookNode

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIR = ROOT / "exercises" / "source"
STUDENT_DIR = ROOT / "exercises" / "student"

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
TEXT_STUB = "YOUR ANSWER HERE"


def _nbformat() -> ModuleType:
    try:
        import nbformat
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SystemExit("rmqlib.exercises needs nbformat: pip install -e '.[test]' (or pip install nbformat)") from exc
    return nbformat


# --------------------------------------------------------------------------- checks used by exercise cells


def check(answer: object, expected: object, what: str, hint: str = "", none_is_answer: bool = False) -> None:
    """Print "Correct" if ``answer == expected``; print a helpful message and fail otherwise.

    ``answer is None`` means "not answered yet" and raises NotImplementedError,
    unless ``none_is_answer`` (for questions whose right answer may be None).
    """
    if answer is None and not none_is_answer:
        raise NotImplementedError(f"{what}: not answered yet -- fill in the cell above")
    if answer != expected:
        print(f"Not quite: {what}.")
        print(f"  your answer: {answer!r}")
        if hint:
            print(f"  hint: {hint}")
        raise AssertionError(f"{what}: wrong answer")
    print(f"Correct: {what}.")


# --------------------------------------------------------------------------- student versions


def is_solution(cell: Mapping[str, Any]) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution", False))


def is_test(cell: Mapping[str, Any]) -> bool:
    nbg = cell.get("metadata", {}).get("nbgrader", {})
    return bool(nbg.get("grade", False)) and not nbg.get("solution", False)


def clear_solution_source(source: str) -> str:
    """Replace each BEGIN/END SOLUTION region with the stub, at the BEGIN line's indentation."""
    lines = source.splitlines()
    if not any(line.strip() == BEGIN for line in lines):
        return CODE_STUB
    out: list[str] = []
    inside = False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise ValueError(f"line {number}: nested {BEGIN}")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out += [indent + stub for stub in CODE_STUB.splitlines()]
        elif stripped == END:
            if not inside:
                raise ValueError(f"line {number}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN} without {END}")
    return "\n".join(out)


def student_version(nb: Mapping[str, Any]) -> NotebookNode:
    """A copy of the instructor notebook with solutions stubbed and outputs cleared."""
    nbformat = _nbformat()
    node: NotebookNode = nbformat.from_dict(nb)
    node.metadata.pop("widgets", None)
    for cell in node.cells:
        if cell.cell_type == "code":
            if is_solution(cell):
                cell.source = clear_solution_source(cell.source)
            cell.outputs = []
            cell.execution_count = None
        elif cell.cell_type == "markdown" and is_solution(cell):
            cell.source = TEXT_STUB
        cell.metadata.pop("execution", None)
    return node


def generate(source_dir: Path = SOURCE_DIR, student_dir: Path = STUDENT_DIR) -> list[Path]:
    """Write a student version of every ``*.ipynb`` in ``source_dir`` into ``student_dir``."""
    nbformat = _nbformat()
    source_dir, student_dir = Path(source_dir), Path(student_dir)
    sources = sorted(source_dir.glob("*.ipynb"))
    if not sources:
        raise FileNotFoundError(f"no exercise notebooks in {source_dir}")
    student_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sources:
        nb = student_version(nbformat.read(path, as_version=4))
        target = student_dir / path.name
        nbformat.write(nb, target)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rmqlib.exercises",
        description="Generate student exercise notebooks from the instructor sources.",
    )
    parser.add_argument("--source", type=Path, default=SOURCE_DIR, help=f"instructor notebooks (default {SOURCE_DIR})")
    parser.add_argument("--dest", type=Path, default=STUDENT_DIR, help=f"where to write (default {STUDENT_DIR})")
    args = parser.parse_args(argv)
    try:
        written = generate(args.source, args.dest)
    except (FileNotFoundError, ValueError) as exc:
        print(f"rmqlib.exercises: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
