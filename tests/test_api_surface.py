"""The public Python surface: every public function and method that raises documents it,
result objects are built by keyword, one vocabulary for the options users meet, and every
top-level export is lazy and listed."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import textwrap

import pytest

from flashback.errors import ParameterError
from flashback.units import interval_seconds
from flashback.workload import Workload

#: the modules a user reaches: ``flashback`` itself and its public subpackages
MODULES = (
    "flashback",
    "flashback.figures",
    "flashback.fio",
    "flashback.dataset",
    "flashback.replay",
    "flashback.sim",
    "flashback.analysis",
    "flashback.published",
    "flashback.units",
    "flashback.notebook",
)


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
        names = getattr(mod, "__all__", None) or [
            n
            for n, v in vars(mod).items()
            if not n.startswith("_") and inspect.isfunction(v) and v.__module__ == m
        ]
        for name in names:
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
    return pytest.param(name, fn, id=name)


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


def _raises_in_body(fn: object) -> bool:
    """Whether the callable's own source (a class's ``__init__``/``__post_init__``) holds a
    ``raise`` statement; what the functions it calls raise is not followed."""
    if isinstance(fn, type):
        parts = [vars(fn)[k] for k in ("__init__", "__post_init__") if k in vars(fn)]
    else:
        parts = [fn]
    for part in parts:
        tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(part))))
        if any(isinstance(node, ast.Raise) for node in ast.walk(tree)):
            return True
    return False


def _raises_problem(name: str, fn: object) -> str | None:
    """Why ``fn``'s docstring breaks the rule, or None: a callable whose body raises documents
    a non-empty ``Raises:`` section, and no section says it raises nothing."""
    doc = _doc(fn)
    if "\nRaises:" in "\n" + doc:
        body = doc.split("Raises:", 1)[1].strip()
        if not body:
            return f"{name}: the 'Raises:' section is empty"
        if body.split(None, 1)[0].rstrip(".:").lower() == "nothing":
            return f"{name}: 'Raises: Nothing' (leave the section out when nothing is raised)"
        return None
    if _raises_in_body(fn):
        return f"{name} raises but has no 'Raises:' section in its docstring"
    return None


def test_the_raises_rule_catches_both_faults():
    def raises_undocumented(x: int) -> int:
        """Half of ``x``."""
        if x % 2:
            raise ParameterError("odd")
        return x // 2

    def raises_documented(x: int) -> int:
        """Half of ``x``.

        Raises:
            ParameterError: ``x`` is odd.
        """
        if x % 2:
            raise ParameterError("odd")
        return x // 2

    def says_nothing() -> int:
        """One.

        Raises:
            Nothing: it returns a constant.
        """
        return 1

    def quiet() -> int:
        """One."""
        return 1

    assert "no 'Raises:' section" in (_raises_problem("f", raises_undocumented) or "")
    assert "Raises: Nothing" in (_raises_problem("f", says_nothing) or "")
    assert _raises_problem("f", raises_documented) is None
    assert _raises_problem("f", quiet) is None


@pytest.mark.parametrize(("name", "fn"), [_params(n, f) for n, _, f in CALLABLES])
def test_public_callable_documents_raises(name, fn):
    problem = _raises_problem(name, fn)
    assert problem is None, problem


def _all_parameters():
    for name, _, fn in CALLABLES:
        target = vars(fn).get("__init__", fn) if isinstance(fn, type) else fn
        try:
            sig = inspect.signature(target)
        except (TypeError, ValueError):
            continue
        yield name, sig


#: public callables allowed to take ``**kwargs``: they forward them to a function the caller
#: chose (a protocol's parameters, an analysis per group, a dataclass copy, Target's options),
#: or receive what a framework passes (the notebook renderer's metadata from Altair).
VAR_KEYWORD_ALLOWED = frozenset(
    {"replay", "per_group", "Workload.replace", "open_target", "render"}  # render: Altair's
)


def _vocabulary_params():
    out = []
    for name, sig in _all_parameters():
        out.append(pytest.param(name, sig, id=name))
    return out


@pytest.mark.parametrize(("name", "sig"), _vocabulary_params())
def test_public_signature_uses_the_one_vocabulary(name, sig):
    params = sig.parameters
    if name not in VAR_KEYWORD_ALLOWED:
        hidden = [p.name for p in params.values() if p.kind is p.VAR_KEYWORD]
        assert hidden == [], f"{name} hides options behind **{hidden[0] if hidden else ''}"
    if not name.endswith("()"):  # a result's ``level`` field is a segment's mean, not a CI level
        assert "ci_level" not in params, f"{name}: a confidence level is called confidence="
        assert "level" not in params, f"{name}: a confidence level is called confidence="
    # the workload field keeps fio's name and duration strings; elsewhere a length in seconds
    if name != "Workload()":
        assert "interval" not in params, f"{name}: an interval length is interval_s= (seconds)"


#: result objects outside the analysis package, built by keyword only
KEYWORD_BUILT = (
    ("flashback.sweep", "SweepResult", {"jobs": [], "paths": None, "elapsed_s": 0.0}),
    ("flashback.dataset.grouped", "Grouped", {"by": ["serial"], "results": {}}),
    (
        "flashback.trace",
        "Remap",
        {"time_scale": 0.5, "offset_scale": 0.25, "offset_shift_bytes": 8192, "align_bytes": 512},
    ),
)


@pytest.mark.parametrize(
    ("module", "cls", "kwargs"), KEYWORD_BUILT, ids=[c for _, c, _ in KEYWORD_BUILT]
)
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


def test_interval_s_is_seconds():
    assert interval_seconds(None, where="f") == 1.0
    assert interval_seconds(0.25, where="f") == 0.25


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"interval_s": 0.0}, "above zero"),
        ({"interval_s": float("nan")}, "above zero"),
        ({"interval_s": "1s"}, "needs a number of seconds"),
        ({"interval_s": True}, "needs a number of seconds"),
    ],
)
def test_interval_s_refuses_bad_lengths(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        interval_seconds(kwargs["interval_s"], where="f")


def test_workload_replace_refuses_an_unknown_field():
    w = Workload(rw="randwrite", bs="4k")
    with pytest.raises(ParameterError, match="no field 'blocksize'"):
        w.replace(blocksize="16k")
    assert w.replace(bs="16k").resolved["bs"] == 16384


def test_workload_fields_are_keyword_only():
    with pytest.raises(TypeError):
        Workload("randwrite")
    assert Workload(rw="randwrite").rw == "randwrite"


@pytest.mark.parametrize(
    ("module", "cls"),
    [
        ("flashback.fio.logs", "Log"),
        ("flashback.replay.base", "Protocol"),
        ("flashback.sim.calibrate", "Calibration"),
    ],
)
def test_wide_dataclasses_take_keywords_only(module, cls):
    klass = getattr(importlib.import_module(module), cls)
    fields = dataclasses.fields(klass)
    assert len(fields) >= 9
    assert all(f.kw_only for f in fields), f"{cls} can still be built positionally"
