"""The examples in rmqlib's docstrings run and print what they show (so they cannot go stale)."""

import doctest
import importlib
import pkgutil

import pytest

import rmqlib

# rmqlib.__main__ runs the command line when imported
MODULES = sorted(
    info.name for info in pkgutil.walk_packages(rmqlib.__path__, "rmqlib.") if info.name != "rmqlib.__main__"
)


def test_some_docstrings_have_examples():
    found = sum(len(doctest.DocTestFinder().find(importlib.import_module(name))) for name in MODULES)
    assert found > 0


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} docstring example(s) in {name} failed (see the output above)"
