#!/usr/bin/env bash
# Set up the real-browser tests and the site build on a fresh Debian machine:
#   Debian's Chromium at /usr/bin/chromium (never `playwright install`: no browser download),
#   a font that draws Chinese (fonts-wqy-microhei, 1.6 MB, when the machine has none: the Chinese
#   edition's browser test checks that its titles fit their figures, which only means something when
#   the glyphs are real, and that they are drawn with a CJK font),
#   and the project with its test, site, browser and zh (JupyterLab's Chinese language pack) extras.
# Then: python -m pytest -m browser tests/browser   and   python -m rmqlib.site build
set -euo pipefail
cd "$(dirname "$0")/.."

MISSING=""
if [ ! -x /usr/bin/chromium ]; then MISSING="chromium"; fi
if [ -z "$(fc-list :lang=zh family 2>/dev/null | head -n 1)" ]; then MISSING="$MISSING fonts-wqy-microhei"; fi
if [ -n "$MISSING" ]; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "browser-setup: missing$MISSING (/usr/bin/chromium, a CJK font) and apt-get is not available" >&2
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update
    # shellcheck disable=SC2086  # one word per package
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y $MISSING
fi
if [ ! -x /usr/bin/chromium ]; then
    echo "browser-setup: apt-get install chromium did not provide /usr/bin/chromium" >&2
    exit 1
fi

python -m pip install --quiet -e ".[test,site,browser,zh]"
python -c "import playwright.sync_api, sphinx, myst_nb" || {
    echo "browser-setup: playwright, sphinx or myst-nb failed to import after pip install" >&2
    exit 1
}
echo "browser-setup: $(/usr/bin/chromium --version 2>/dev/null | head -n 1); CJK font:" \
     "$(fc-list :lang=zh family | head -n 1); Python packages installed"
