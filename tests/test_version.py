"""One version source: native/Cargo.toml. The package metadata (maturin, ``dynamic``), the
native module's ``__version__`` (``CARGO_PKG_VERSION``), ``flashback.__version__`` and
``flashback --version`` all read it; pyproject.toml spells none of its own."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import flashback
from flashback import _native

ROOT = Path(__file__).resolve().parent.parent


def _cargo_version() -> str:
    return tomllib.loads((ROOT / "native" / "Cargo.toml").read_text())["package"]["version"]


def test_pyproject_takes_its_version_from_cargo():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project, "pyproject.toml spells a version; Cargo.toml is the one"
    assert "version" in project["dynamic"]


def test_every_reader_gives_the_cargo_version():
    version = _cargo_version()
    assert _native.__version__ == version
    assert flashback.__version__ == version
    # the installed metadata: built from this tree (make setup rebuilds on a pyproject change)
    assert importlib.metadata.version("flashback") == version
    out = subprocess.run(
        [sys.executable, "-m", "flashback", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"flashback {version}"
