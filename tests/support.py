"""Helpers shared by test modules (importable because pytest puts tests/ on sys.path)."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def conformance_dir() -> Path:
    """``tests/data/conformance`` in the checkout (override with RMQLIB_CONFORMANCE_DIR)."""
    override = os.environ.get("RMQLIB_CONFORMANCE_DIR")
    return Path(override) if override else ROOT / "tests" / "data" / "conformance"
