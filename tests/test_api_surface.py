"""The public Python surface: every public function and method documents what it raises,
result objects are built by keyword, one vocabulary for the options users meet, and every
top-level export is lazy and listed."""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import pytest

#: the modules a user reaches: ``flashback`` itself and its public subpackages
MODULES = (
    "flashback",
    "flashback.figures",
    "flashback.fio",
    "flashback.dataset",
    "flashback.replay",
    "flashback.sim",
    "flashback.analysis",
)

#: analysis callables whose ``Raises:`` section the analysis branch fills; remove each name
#: (and then this set) once that branch is merged.
ANALYSIS_PENDING = frozenset()


def _module(name: str):
    # ``flashback.replay`` is also a function on the package: take the submodule itself.
    return importlib.import_module(name)


def _public_callables() -> list[tuple[str, str, object]]:
    """(public name, defining module, function) for every public function, public method
    and constructor reachable from :data:`MODULES`, each once."""
    out, seen = [], set()

    def add(name: str, owner_module: str, fn: object) -> None:
        key = (getattr(fn, "__module__", owner_module), getattr(fn, "__qualname__", name))
        if key in seen:
            return
        seen.add(key)
        out.append((name, owner_module, fn))

    for m in MODULES:
        mod = _module(m)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if isinstance(obj, type):
                if issubclass(obj, BaseException):
                    continue
                for attr, v in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if isinstance(v, (staticmethod, classmethod)):
                        v = v.__func__
                    if inspect.isfunction(v):
                        add(f"{obj.__qualname__}.{attr}", obj.__module__, v)
                # a constructor that checks its arguments: a hand-written ``__init__`` or a
                # dataclass's ``__post_init__`` (a plain dataclass's ``__init__`` only stores)
                own_init = "__init__" in vars(obj) and not dataclasses.is_dataclass(obj)
                if own_init or "__post_init__" in vars(obj):
                    add(f"{obj.__qualname__}()", obj.__module__, obj)
            elif inspect.isfunction(obj):
                add(name, obj.__module__, obj)
    return out


CALLABLES = _public_callables()


def _doc(fn: object) -> str:
    doc = inspect.getdoc(fn) or ""
    if isinstance(fn, type) and "__init__" in vars(fn):
        doc += "\n" + (inspect.getdoc(vars(fn)["__init__"]) or "")
    return doc


def _params(name: str, fn: object):
    marks = []
    if name in ANALYSIS_PENDING:
        marks.append(pytest.mark.xfail(strict=False, reason="filled by the analysis branch"))
    return pytest.param(name, fn, id=name, marks=marks)


def test_the_walk_reaches_the_surface():
    names = {n for n, _, _ in CALLABLES}
    # a few names from each corner, so the walk cannot silently find nothing
    for expected in (
        "run",
        "Target.run",
        "Target.discard",
        "Target.idle",
        "load",
        "read_fio",
        "save_chart",
        "scan_captures",
        "changepoints",
        "Replay.compare",
        "calibrate",
    ):
        assert expected in names
    assert len(names) > 60


@pytest.mark.parametrize(("name", "fn"), [_params(n, f) for n, _, f in CALLABLES])
def test_public_callable_documents_raises(name, fn):
    doc = _doc(fn)
    assert "\nRaises:" in "\n" + doc, f"{name} has no 'Raises:' section in its docstring"
    body = doc.split("Raises:", 1)[1].strip()
    assert body, f"{name}: the 'Raises:' section is empty"


def _all_parameters():
    for name, _, fn in CALLABLES:
        target = vars(fn).get("__init__", fn) if isinstance(fn, type) else fn
        try:
            sig = inspect.signature(target)
        except (TypeError, ValueError):
            continue
        yield name, sig


#: public callables allowed to take ``**kwargs``: they forward them to a function the caller
#: chose (a protocol's parameters, an analysis per group, a dataclass copy).
VAR_KEYWORD_ALLOWED = {"replay", "per_group", "Workload.replace", "open_target"}


def test_no_public_option_hides_behind_var_keyword():
    hidden = [
        name
        for name, sig in _all_parameters()
        if name not in VAR_KEYWORD_ALLOWED
        and any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    ]
    assert hidden == []


def test_confidence_levels_are_called_confidence():
    # ``level`` names a segment's mean throughput in result frames; a CI level is ``confidence``
    offenders = [
        name
        for name, sig in _all_parameters()
        if name not in ANALYSIS_PENDING and ("level" in sig.parameters or "ci_level" in sig.parameters)
    ]
    assert offenders == []


#: result objects outside the analysis package, built by keyword only
KEYWORD_BUILT = (
    ("flashback.sweep", "SweepResult", {"jobs": [], "paths": None, "elapsed_s": 0.0}),
    ("flashback.dataset.grouped", "Grouped", {"by": ["serial"], "results": {}}),
)


@pytest.mark.parametrize(("module", "cls", "kwargs"), KEYWORD_BUILT, ids=[c for _, c, _ in KEYWORD_BUILT])
def test_result_objects_are_built_by_keyword(module, cls, kwargs):
    klass = getattr(importlib.import_module(module), cls)
    obj = klass(**kwargs)
    for f, v in kwargs.items():
        assert getattr(obj, f) == v
    with pytest.raises(TypeError):
        klass(*kwargs.values())


def test_every_lazy_export_resolves_and_is_listed():
    import flashback

    assert set(flashback._LAZY) <= set(flashback.__all__)
    for name in flashback.__all__:
        assert name in flashback._LAZY or name in vars(flashback), name
    for name in flashback._LAZY:
        getattr(flashback, name)
    assert sorted(set(flashback.__all__)) == sorted(flashback.__all__), "duplicate names"


@pytest.mark.parametrize("module", MODULES[1:])
def test_subpackage_all_names_exist(module):
    mod = _module(module)
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert missing == []


def test_dataclass_results_have_no_positional_fields():
    for module, cls, _ in KEYWORD_BUILT:
        klass = getattr(importlib.import_module(module), cls)
        assert all(f.kw_only for f in dataclasses.fields(klass)), cls

