#!/usr/bin/env bash
# Set up the real-browser tests and the site build on a fresh Debian machine:
#   Debian's Chromium at /usr/bin/chromium (never `playwright install`: no browser download),
#   and the project with its test, site and browser extras.
# Then: python -m pytest -m browser tests/browser   and   python -m rmqlib.site build
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ]; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "browser-setup: /usr/bin/chromium is missing and apt-get is not available" >&2
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
fi
if [ ! -x /usr/bin/chromium ]; then
    echo "browser-setup: apt-get install chromium did not provide /usr/bin/chromium" >&2
    exit 1
fi

python -m pip install --quiet -e ".[test,site,browser]"
python -c "import playwright.sync_api, sphinx, myst_nb" || {
    echo "browser-setup: playwright, sphinx or myst-nb failed to import after pip install" >&2
    exit 1
}
echo "browser-setup: $(/usr/bin/chromium --version 2>/dev/null | head -n 1); Python packages installed"
