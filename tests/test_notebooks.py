"""The notebooks: each runs at its small defaults without an error and draws its charts, the
executed notebook keeps every chart when saved and exported (nbconvert HTML opened offline in
headless Chromium), and each ``.ipynb`` is the stripped twin of its ``py:percent`` file.

Notebooks are executed for real with papermill on the ``python3`` kernel of this interpreter,
at the small defaults of their ``parameters`` cell (simulated drives, temporary files). Each
is executed once per session; the export test reuses that execution.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
jupytext = pytest.importorskip("jupytext")
papermill = pytest.importorskip("papermill")

from conftest import need_root_and  # noqa: E402
from support.chromium import Chromium, chromium_binary  # noqa: E402

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
VEGA = "application/vnd.vega.v5+json"  # the interactive form JupyterLab draws
STATIC = "image/png"  # the static form saved/exported notebooks show

# notebook -> the number of charts it draws (each displayed chart is one output)
CHARTS = {
    "00-quickstart": 3,
    "01-puget": 4,
    "02-behardware": 3,
    "03-xbit": 4,
    "04-anandtech-consistency": 3,
    "05-anand2009": 2,
    "06-snia-pts": 2,
    "07-your-drive": 3,
    "08-simulator": 5,
    "09-fleet": 2,
}


def _execute(name: str, tmp_path: Path, parameters: dict) -> tuple[nbformat.NotebookNode, float]:
    # NOTEBOOKS_OUT=dir keeps the executed notebooks for a look (default: the test's tmp dir)
    out = Path(os.environ.get("NOTEBOOKS_OUT", tmp_path)) / f"{name}.out.ipynb"
    t0 = time.monotonic()
    papermill.execute_notebook(
        str(NOTEBOOKS_DIR / f"{name}.ipynb"),
        str(out),
        parameters=parameters,
        kernel_name="python3",
        cwd=str(tmp_path),
        progress_bar=False,
    )
    return nbformat.read(out, as_version=4), time.monotonic() - t0


_EXECUTED: dict[str, tuple[nbformat.NotebookNode, float]] = {}


@pytest.fixture(scope="session")
def executed(tmp_path_factory):
    """``executed(name)`` -> (executed notebook, seconds), run once per session at defaults."""

    def get(name: str) -> tuple[nbformat.NotebookNode, float]:
        if name not in _EXECUTED:
            _EXECUTED[name] = _execute(name, tmp_path_factory.mktemp(name), {})
        return _EXECUTED[name]

    return get


def _outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def _check_outputs(name: str, nb: nbformat.NotebookNode) -> None:
    outs = _outputs(nb)
    errors = [o for o in outs if o.get("output_type") == "error"]
    assert not errors, f"{name}: {errors[0].get('ename')}: {errors[0].get('evalue')}"
    charts = [o for o in outs if VEGA in o.get("data", {})]
    assert len(charts) == CHARTS[name], (
        f"{name} displayed {len(charts)} charts; it draws {CHARTS[name]}"
    )
    # every chart also carries its static form, which saved/exported notebooks show
    static = [o for o in charts if o["data"].get(STATIC, "").startswith("iVBORw0KGgo")]
    assert len(static) == len(charts), f"{name}: {len(charts) - len(static)} charts lack a PNG"


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_notebook_runs_and_draws_its_charts(name: str, executed, record_property) -> None:
    nb, seconds = executed(name)
    record_property("seconds", round(seconds, 1))
    print(f"{name}: {seconds:.1f} s")
    _check_outputs(name, nb)


@pytest.fixture(scope="module")
def browser():
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (make test installs it)")
    with Chromium() as b:
        b.offline()
        yield b


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_exported_html_shows_every_chart_offline(
    name: str, executed, browser, tmp_path: Path
) -> None:
    """The executed notebook, exported by nbconvert to HTML and opened with networking off,
    shows one drawn image per chart output (the widget alone would leave them blank)."""
    from nbconvert import HTMLExporter

    nb, _ = executed(name)
    body, _ = HTMLExporter().from_notebook_node(nb)
    path = tmp_path / f"{name}.html"
    path.write_text(body, encoding="utf-8")
    browser.navigate(path.as_uri())
    browser.wait_for("document.readyState === 'complete'", timeout_s=30)
    drawn = browser.evaluate(
        "[...document.querySelectorAll('.jp-OutputArea-output')]"
        ".filter(o => [...o.querySelectorAll('img, svg, canvas')]"
        ".some(e => e.getBoundingClientRect().width > 100 && e.getBoundingClientRect().height > 50"
        " && (e.tagName !== 'IMG' || (e.complete && e.naturalWidth > 100)))).length"
    )
    print(f"{name}: {drawn} charts drawn in the exported HTML (chart cells: {CHARTS[name]})")
    assert drawn == CHARTS[name], f"{name}: {drawn} of {CHARTS[name]} charts drawn offline"


def test_your_drive_on_a_loop_device(tmp_path: Path, loopdev) -> None:
    """07 on a real block device (a loop device on a sparse file), confirmed with destroy=."""
    need_root_and("losetup")
    dev = loopdev(64 << 20)
    params = {"device": dev, "destroy": dev, "size": "64m", "written": "160m"}
    nb, _ = _execute("07-your-drive", tmp_path, params)
    _check_outputs("07-your-drive", nb)
    text = "".join(o.get("text", "") for o in _outputs(nb) if o.get("output_type") == "stream")
    assert f"writing to {dev}" in text


def test_your_drive_refuses_a_device_without_destroy(tmp_path: Path, loopdev) -> None:
    need_root_and("losetup")
    dev = loopdev(64 << 20)
    with pytest.raises(papermill.PapermillExecutionError, match="SafetyError"):
        _execute("07-your-drive", tmp_path, {"device": dev})


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_ipynb_is_the_stripped_twin_of_the_py(name: str) -> None:
    py = jupytext.read(NOTEBOOKS_DIR / f"{name}.py")
    ipynb = nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)
    assert [(c.cell_type, c.source) for c in py.cells] == [
        (c.cell_type, c.source) for c in ipynb.cells
    ], f"{name}.ipynb differs from {name}.py; run: jupytext --sync notebooks/{name}.py"
    for c in ipynb.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, f"{name}.ipynb has outputs"
    tagged = [c for c in ipynb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{name} needs exactly one cell tagged 'parameters'"
    assert "full size" in tagged[0].source, f"{name}: say the full-size values in a comment"


def test_every_notebook_is_listed() -> None:
    assert sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.py")) == sorted(CHARTS)


def test_prose_is_not_copied_from_the_reviews() -> None:
    """The notebooks tell the reviews' facts in their own words: no run of 7 words in a
    markdown cell appears verbatim in any seed document."""
    seeds_dir = NOTEBOOKS_DIR.parent.parent / "shared" / "seeds"
    if not seeds_dir.is_dir():
        pytest.skip(f"seed documents not found at {seeds_dir} (the repository's ../shared/seeds)")
    words = lambda s: re.findall(r"[a-z0-9.%']+", s.lower())  # noqa: E731
    text = " ".join(" ".join(words(p.read_text(encoding="utf-8"))) for p in seeds_dir.glob("*.txt"))
    copied = []
    for name in sorted(CHARTS):
        for cell in jupytext.read(NOTEBOOKS_DIR / f"{name}.py").cells:
            if cell.cell_type != "markdown":
                continue
            w = words(cell.source)
            copied += [
                (name, " ".join(w[i : i + 7]))
                for i in range(len(w) - 6)
                if " ".join(w[i : i + 7]) in text
            ]
    assert not copied, copied


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_parameter_advice_is_valid(name: str) -> None:
    """Every size a parameters-cell comment suggests (``e.g. "400g"``) is one flashback takes:
    07 once advised ``size="100%"``, which raises."""
    from flashback.units import parse_size

    ipynb = nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)
    (cell,) = [c for c in ipynb.cells if "parameters" in c.metadata.get("tags", [])]
    for line in cell.source.splitlines():
        m = re.match(r"(size|written|offset)\s*=.*?#(.*)$", line)
        if m:
            for suggested in re.findall(r'"([^"]+)"', m.group(2)):
                parse_size(suggested, field=m.group(1))  # raises ParameterError if not


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_papermill_reads_every_parameter(name: str, caplog) -> None:
    """papermill's own parser (``inspect_notebook``, behind ``--help-notebook`` and its
    "unknown parameter" check) reads every name the parameters cell assigns, each with the
    default Python gives it, and warns of nothing: it skips a line holding two ``=``, and
    06's ``target`` comment said "(with destroy=)"."""
    import ast
    import logging

    path = NOTEBOOKS_DIR / f"{name}.ipynb"
    ipynb = nbformat.read(path, as_version=4)
    (cell,) = [c for c in ipynb.cells if "parameters" in c.metadata.get("tags", [])]
    assigned = {
        t.id: ast.literal_eval(node.value)
        for node in ast.parse(cell.source).body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    with caplog.at_level(logging.WARNING, logger="papermill"):
        read = papermill.inspect_notebook(str(path))
    assert [r.getMessage() for r in caplog.records if r.name.startswith("papermill")] == []
    assert {k: ast.literal_eval(p["default"]) for k, p in read.items()} == assigned


def test_your_drive_keeps_the_capture_it_says_it_keeps(tmp_path: Path) -> None:
    """07 saved the capture inside the scratch directory it removed in the same cell, under a
    comment saying "keep it": now it is saved beside the notebook and loads back."""
    import flashback as fb

    _execute("07-your-drive", tmp_path, {})
    kept = tmp_path / "my-drive.arrow"
    assert kept.is_file()
    assert fb.load(kept).intervals.height > 0
