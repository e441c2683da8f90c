"""A real JupyterLab on loopback runs a notebook; headless Chromium must see the chart.

This catches a renderer that loads vega from a CDN (which fails offline): every request the
page makes must go to the local server (or be data:/blob:).
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from support.chromium import Chromium, chromium_binary

pytestmark = pytest.mark.skipif(
    chromium_binary() is None, reason="chromium is not installed (make test installs it)"
)

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _notebook(path: Path) -> None:
    """The project's quickstart notebook, as committed (outputs stripped)."""
    nb = nbformat.read(REPO / "notebooks" / "00-quickstart.ipynb", as_version=4)
    nbformat.write(nb, path)


@pytest.fixture
def lab(tmp_path: Path):
    _notebook(tmp_path / "quickstart.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(tmp_path / "cfg"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "rt"),
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={tmp_path}",
            "--ServerApp.allow_root=True",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(log := open(tmp_path / "lab.log", "wb")),  # closed at teardown
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail(
                    "JupyterLab did not start: " + (tmp_path / "lab.log").read_text()[-2000:]
                )
            time.sleep(0.3)
    yield base, token
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


NB = "[...window.jupyterapp.shell.widgets('main')].find(w => w.title.label === 'quickstart.ipynb')"


def test_chart_renders_in_jupyterlab_offline(lab):
    base, token = lab
    with Chromium(timeout_s=60) as b:
        b.navigate(f"{base}/lab/tree/quickstart.ipynb?token={token}")
        assert b.wait_for(
            f"(() => {{ try {{ return {NB}.sessionContext.session.kernel.connectionStatus === 'connected' }}"
            " catch (e) { return false } })()",
            timeout_s=120,
        ), "the notebook's kernel did not connect"
        b.evaluate(f"(() => {{ window.jupyterapp.shell.activateById({NB}.id); return true }})()")
        b.pump(1)
        b.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells').then(() => true)")
        found = b.wait_for(
            "document.querySelectorAll('.jp-OutputArea-output .vega-embed svg, .jp-OutputArea-output .vega-embed canvas').length",
            timeout_s=120,
        )
        assert found, "no rendered chart (.vega-embed svg/canvas) in the notebook output"
        b.wait_for(
            "document.querySelectorAll('.jp-OutputArea-output .vega-embed').length >= 2",
            timeout_s=120,
        )
        text = b.evaluate(
            "[...document.querySelectorAll('.jp-OutputArea-output .vega-embed')].map(e => e.innerText).join(' ')"
        )
        assert "MB/s" in text or "IOPS" in text  # axis titles of flashback's charts, drawn
        errors = b.evaluate(
            '[...document.querySelectorAll(\'.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], .jp-RenderedText[data-mime-type="application/vnd.jupyter.error"]\')].map(e => e.innerText).filter(t => /Error|Traceback/.test(t))'
        )
        assert errors == [], errors
        foreign = [
            u
            for u in b.requests
            if not u.startswith((base, "data:", "blob:", "about:", "ws://127.0.0.1"))
        ]
        assert foreign == [], f"requests left the machine: {foreign[:5]}"


def test_make_lab_starts_as_root_with_lab_args(tmp_path: Path):
    """``make lab`` refused to start as root ("Running as root is not recommended") on the
    machine where ``make demo`` needs root, and took no arguments; LAB_ARGS passes them."""
    import shutil

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(tmp_path / "cfg"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "rt"),
    )
    args = f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={token}"
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "-o", "setup", "lab", f"LAB_ARGS={args}"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                url = f"http://127.0.0.1:{port}/api/contents?token={token}"
                with urllib.request.urlopen(url, timeout=5) as r:
                    listing = r.read().decode()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
                    pytest.fail(f"make lab did not serve (exit {proc.poll()}):\n{out[-2000:]}")
                time.sleep(0.5)
        assert "00-quickstart.ipynb" in listing  # served from notebooks/
    finally:
        os.killpg(proc.pid, 15)
        proc.communicate(timeout=30)
