"""The package's layers, enforced: every import inside ``toolkit/flashback`` — at the top of a
module or inside a function — goes from a higher layer to a lower one or stays in its layer,
and no chain of imports comes back to where it started.

An import inside a function breaks a cycle at run time, so nothing fails when one is added;
this test reads the source (``ast``) instead, so it sees those imports too.

A module's layer is the one of the longest prefix listed below. Lowest first:
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "toolkit" / "flashback"

#: Lowest first. A module may import its own layer and the ones before it, never a later one.
LAYERS: list[tuple[str, list[str]]] = [
    # no flashback imports but errors/_native: the bricks every other module stands on
    (
        "foundation",
        [
            "flashback.errors",
            "flashback._text",
            "flashback._native",  # the compiled Rust core (native/src/python)
            "flashback.units",
            "flashback.columns",
            "flashback._io",
            "flashback._meta",
            "flashback._options",
            "flashback._render",
        ],
    ),
    # what a run is and where its data goes: workloads, targets, captures and their files
    (
        "data",
        [
            "flashback.workload",
            "flashback.progress",
            "flashback.live",  # a progress display (progress="live")
            "flashback.capture",
            "flashback.dataset",
            "flashback.fio",
            "flashback.telemetry",
            "flashback.published",
            "flashback.targets",
            "flashback.purge",
            "flashback.trace",
        ],
    ),
    ("analysis", ["flashback.analysis"]),
    # procedures replayed on a target, and runs of many of them
    ("replay", ["flashback.replay", "flashback.sim", "flashback.sweep"]),
    ("figures", ["flashback.figures"]),
    ("notebook", ["flashback.notebook"]),
    ("report", ["flashback.report"]),
    # the ways in: the command line and the public façade (``import flashback as fb``)
    ("entry", ["flashback.cli", "flashback.__main__", "flashback"]),
]

ROOT = "flashback"  # the façade: only ever matched exactly, never as a prefix

#: Cycles left, stated. None: ``Replay`` lives beside ``replay()`` in ``replay.api`` and hands
#: ``replay`` to ``compare(rerun=)`` when ``compare(seeds=, sensitivity=)`` replays the
#: procedure again, so ``replay.compare`` imports nothing above it (issue 28, item 2).
#: The test fails if this set changes, in either direction.
KNOWN_CYCLES: list[list[str]] = []


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _known(modules: dict[str, Path]) -> set[str]:
    return set(modules) | {"flashback._native"}


def _imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int, bool]]:
    """(imported flashback module, line, runs) for every import in the file, wherever it
    stands; ``runs`` is False for one under ``if TYPE_CHECKING:`` (annotations only).
    ``from a.b import c`` is an import of ``a.b.c`` when that is a module, else of ``a.b``."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(), filename=str(path))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for stmt in block.body
        for node in ast.walk(stmt)
    }
    found = []
    for node in ast.walk(tree):
        runs = id(node) not in typing_only
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno, runs) for a in node.names if _ours(a.name)]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not _ours(module):
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.append((sub if sub in known else module, node.lineno, runs))
    return [(m, line, runs) for m, line, runs in found if m != name]


def _ours(module: str) -> bool:
    return module == ROOT or module.startswith(ROOT + ".")


def _layer(module: str) -> int | None:
    """Index in LAYERS of the longest listed prefix of ``module``; None when unlisted."""
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            hit = module == prefix or (prefix != ROOT and module.startswith(prefix + "."))
            if hit and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


@functools.cache  # parsed once for all the tests below
def _graph() -> dict[str, list[tuple[str, int, bool]]]:
    modules = _modules()
    known = _known(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def upward_imports(graph: dict[str, list[tuple[str, int, bool]]]) -> list[str]:
    """Each import of a later layer, as 'a (layer) -> b (layer), line N' (one for
    annotations only counts too: the lower module would be written against the higher)."""
    bad = []
    for module, imports in sorted(graph.items()):
        here = _layer(module)
        for target, line, _ in imports:
            there = _layer(target)
            if here is not None and there is not None and there > here:
                bad.append(
                    f"{module} ({LAYERS[here][0]}) -> {target} ({LAYERS[there][0]}), line {line}"
                )
    return bad


def cycles(graph: dict[str, list[tuple[str, int, bool]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted;
    imports under ``if TYPE_CHECKING:`` never run and make no cycle."""
    edges = {
        m: sorted({t for t, _, runs in imps if runs and t in graph}) for m, imps in graph.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # recursion depth is bounded by the ~150 modules
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


# --- the rules -------------------------------------------------------------------------------


def test_every_module_has_a_layer():
    unlisted = [m for m in _modules() if _layer(m) is None]
    assert not unlisted, f"add these modules to LAYERS in {__file__}: {unlisted}"


def test_no_import_goes_up_a_layer():
    bad = upward_imports(_graph())
    assert not bad, "imports from a lower layer to a higher one:\n" + "\n".join(bad)


def test_no_import_cycles():
    found = [c for c in cycles(_graph()) if c not in KNOWN_CYCLES]
    assert not found, "import cycles (each a set of modules reaching each other):\n" + "\n".join(
        " <-> ".join(c) for c in found
    )


def test_internal_modules_do_not_import_the_facade():
    """``import flashback as fb`` inside the package runs the façade's lazy table to reach a
    module that could be named directly; the façade is for users, notebooks and the CLI."""
    allowed = {ROOT, "flashback.__main__"}
    bad = [
        f"{m}, line {line}"
        for m, imports in sorted(_graph().items())
        if m not in allowed and not m.startswith("flashback.cli")
        for target, line, _ in imports
        if target == ROOT
    ]
    assert not bad, "internal modules importing the public façade:\n" + "\n".join(bad)


def test_the_known_cycle_is_still_there():
    """When the replay cycle is gone, KNOWN_CYCLES must be emptied (so it cannot return)."""
    found = cycles(_graph())
    assert all(c in found for c in KNOWN_CYCLES), f"remove from KNOWN_CYCLES: {KNOWN_CYCLES}"


# --- the checker checks what it says ---------------------------------------------------------


def test_the_checker_sees_imports_inside_functions_and_relative_ones(tmp_path):
    src = (
        "def f():\n    from flashback.report import html\n\nfrom . import units\n"
        "if TYPE_CHECKING:\n    from flashback.dataset import scan\n"
    )
    (tmp_path / "m.py").write_text(src)
    known = {"flashback.report.html", "flashback.units", "flashback.capture"}
    found = _imports("flashback.capture", tmp_path / "m.py", known)
    assert sorted(found) == [
        ("flashback.dataset", 6, False),
        ("flashback.report.html", 2, True),
        ("flashback.units", 4, True),
    ]
    graph = {"flashback.capture": found, "flashback.report.html": [], "flashback.units": []}
    assert upward_imports(graph) == [
        "flashback.capture (data) -> flashback.report.html (report), line 2"
    ]


def test_the_checker_finds_a_cycle_through_three_modules():
    graph = {
        "a": [("b", 1, True)],
        "b": [("c", 1, True)],
        "c": [("a", 9, True)],
        "d": [("a", 1, True), ("e", 2, False)],
        "e": [("d", 3, True)],  # d -> e is for annotations only: no cycle
    }
    assert cycles(graph) == [["a", "b", "c"]]
