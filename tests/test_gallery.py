"""The README's gallery: every picture it shows exists, is small, and is one that ``tools/gallery.py`` draws.

That the command still draws them (it needs Chromium) is tested in tests/browser/test_site.py.
"""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _gallery():
    spec = importlib.util.spec_from_file_location("gallery", ROOT / "tools" / "gallery.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_shows_every_gallery_picture_and_each_is_under_200_kb():
    gallery = _gallery()
    shown = re.findall(r"\(docs/gallery/([\w-]+)\.png\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert 4 <= len(shown) <= 6
    assert sorted(shown) == sorted(gallery.figures())
    for name in shown:
        path = ROOT / "docs" / "gallery" / f"{name}.png"
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert path.stat().st_size < gallery.MAX_BYTES, name


def test_every_gallery_figure_is_built_by_the_library_with_a_title():
    for name, build in _gallery().figures().items():
        fig = build()
        assert fig.layout.title.text, name
        assert fig.data, name
