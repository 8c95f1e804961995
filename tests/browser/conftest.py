"""Fixtures for the real-browser tests: Debian's Chromium driven by Playwright, the built site, JupyterLab.

Run with ``python -m pytest -m browser -n 0 tests/browser`` after ``bash .ci/browser-setup.sh``.
Nothing here is imported by the default run (``-m 'not browser'`` deselects these tests, and
playwright is imported inside the fixtures), so the default suite needs no browser.

* Chromium is ``/usr/bin/chromium`` (or ``$RMQLIB_CHROMIUM``); when it is missing the tests FAIL, they never skip.
* Every page blocks every request that does not go to 127.0.0.1 (``page.route``): the book must work offline.
* Every wait is bounded; the JupyterLab server, the http server and the browser are stopped in ``finally``.
* Screenshots go to ``test-artifacts/`` at the repository root (gitignored).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("RMQLIB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DEFAULT_TIMEOUT_MS = 30_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def browser_context(tmp_path_factory):
    """A Chromium context with a fresh user-data dir; closed (and playwright stopped) even on failure."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: run `bash .ci/browser-setup.sh` "
            "(apt-get install -y chromium); never `playwright install`",
            pytrace=False,
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail('playwright is not installed: pip install -e ".[browser]"', pytrace=False)
    pw = sync_playwright().start()
    context = None
    try:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
            timeout=60_000,
        )
        context.set_default_timeout(DEFAULT_TIMEOUT_MS)
        context.set_default_navigation_timeout(60_000)
        yield context
    finally:
        try:
            if context is not None:
                context.close()
        finally:
            pw.stop()


#: JupyterLab (4.4 on; ``commsOverSubshells`` is "perCommTarget" by default) asks the kernel for a subshell per comm
#: target. When its kernel connection drops its pending requests (a websocket reconnect; seen once in a CI run with two
#: browser sessions on two cores, never on a quiet machine), the dropped request surfaces as an uncaught rejection in
#: JupyterLab's own code. Such errors are kept apart from the page's errors, which the tests assert empty; the tests'
#: own checks of the panels and widgets still run on that page.
JUPYTERLAB_SUBSHELL_CANCEL = re.compile(
    r"Error: Canceled future for (create|delete)_subshell_request message before replies were done"
)


class LocalPage:
    """A page that lets only 127.0.0.1 through and records what it blocked and any page errors."""

    def __init__(self, context):
        self.page = context.new_page()
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.subshell_cancels: list[str] = []  # see JUPYTERLAB_SUBSHELL_CANCEL
        self.page.route("**/*", self._route)
        self.page.on("pageerror", self._page_error)

    def _page_error(self, exc) -> None:
        text = str(exc)
        (self.subshell_cancels if JUPYTERLAB_SUBSHELL_CANCEL.fullmatch(text) else self.errors).append(text)

    def _route(self, route):
        url = route.request.url
        if url.startswith(("http://127.0.0.1:", "http://127.0.0.1/", "data:", "blob:")):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def close(self):
        self.page.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture
def local_page(request, browser_context, artifacts):
    """A fresh page; on failure its screenshot is saved as ``test-artifacts/FAILED-<test>.png``."""
    lp = LocalPage(browser_context)
    try:
        yield lp
    finally:
        report = getattr(request.node, "rep_call", None)
        try:
            if report is not None and report.failed:
                lp.page.screenshot(path=str(artifacts / f"FAILED-{request.node.name}.png"), timeout=10_000)
        finally:
            lp.close()


# --------------------------------------------------------------------------- the static site


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The site, built once per session by the same code as ``python -m rmqlib.site build``."""
    from rmqlib.site import build

    base = tmp_path_factory.mktemp("site")
    start = time.monotonic()
    out = build(out=base / "html", stage_dir=base / "src", log=lambda msg: print(msg, file=sys.stderr))
    print(f"site build took {time.monotonic() - start:.1f} s", file=sys.stderr)
    return out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site_url(built_site):
    """``http://127.0.0.1:<port>`` serving the built site; the server stops at the end of the session."""
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


# --------------------------------------------------------------------------- JupyterLab


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)


@contextlib.contextmanager
def serve_lab(base: Path, lang: str = "en", settings_dir: Path | None = None):
    """JupyterLab started as ``rmqlib book`` starts it (``--lang lang``, the book's settings or
    ``settings_dir``), over a COPY of the repository's chapters/ and exercises/ in ``base`` (running a
    notebook may save it); yields ``(base_url, token, root)``.

    Only what a test needs is added: no browser, a port and token, ``--allow-root``, the app exposed
    in the page (``window.jupyterapp``) so that a test can run a chapter cell by cell, kernels on IPC
    instead of TCP ports, and a fresh user-settings dir whose one setting starts the kernel without asking.
    The news pop-up is not switched off here: the book's own settings must do that. The server runs in its
    own process group, terminated (then killed) when the block ends, whatever happened.
    """
    from rmqlib.book import SETTINGS_DIR, lab_command

    root = base / "root"
    for folder in ("chapters", "exercises"):
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    port, token = free_port(), secrets.token_hex(24)
    tracker = base / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"autoStartDefaultKernel": true}')
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(base / "config"), JUPYTER_RUNTIME_DIR=str(base / "runtime"))
    env.pop("RMQLIB_STATIC", None)
    log = open(base / "jupyterlab.log", "w")
    cmd = lab_command(
        root,
        [
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--ServerApp.token={token}",
            "--allow-root",
            "--ServerApp.port_retries=0",
            "--LabApp.expose_app_in_browser=True",
            # kernels talk over files in this server's runtime dir, not TCP ports: CI runs servers side by side and
            # opens notebooks four at a time, and a port picked free can be taken before its kernel binds it
            "--KernelManager.transport=ipc",
            f"--LabApp.user_settings_dir={base / 'settings'}",
            f"--LabApp.workspaces_dir={base / 'workspaces'}",
        ],
        lang=lang,
        settings_dir=settings_dir or SETTINGS_DIR,
    )
    proc = subprocess.Popen(
        cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{(base / 'jupyterlab.log').read_text()}")
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not answer within 90 s:\n{(base / 'jupyterlab.log').read_text()}")
                time.sleep(0.5)
        yield url, token, root
    finally:
        _stop(proc)
        log.close()


@pytest.fixture(scope="session")
def jupyter_lab(tmp_path_factory):
    """The book in JupyterLab for the whole session (:func:`serve_lab`); yields ``(base_url, token, root)``."""
    with serve_lab(tmp_path_factory.mktemp("jupyterlab")) as lab:
        yield lab
