"""The knee rule (flashback.analysis.knees): steps and bends of a per-loop curve, each planted
at a known loop; the rule's answer may not depend on how far the curve runs on past a bend.

The old rule (a piecewise-constant fit, replay/procedures/common.py ``level_changes``) fails
the bend and transition tests: it cut a ramp where the halves' means balance (Puget's 4K
QD32 "second breakpoint" read 397.9 GB on a 600 GB replay, 567.5 on the 1.8 TB one), and made
a loop that straddled a step a level of its own (512 KiB at 1/16: 140.5 and 162.6 GB).
"""

from __future__ import annotations

import pathlib

import numpy as np

from flashback.analysis.knees import knees, lines

GB_PER_LOOP = 7.5


def _curve(n_loops: int, *, ramp: tuple[int, int] | None, mixed: float | None = None):
    """193 MB/s for 12 loops, then 132 (a step); from ``ramp[0]`` a linear decline to 127 at
    ``ramp[1]``, flat after (a bend); ``mixed``: loop 12 reads that (a run that straddled
    the step). x is GB written at each loop's end."""
    loop = np.arange(n_loops)
    y = np.where(loop < 12, 193.0, 132.0)
    if ramp is not None:
        a, b = ramp
        frac = np.clip((loop - a) / (b - a), 0.0, 1.0)
        y = np.where(loop >= 12, 132.0 - 5.0 * frac, y)
    if mixed is not None:
        y[12] = mixed
    return (loop + 1) * GB_PER_LOOP, y


def test_a_step_is_placed_at_the_first_loop_of_the_new_level():
    x, y = _curve(80, ramp=None)
    assert knees(x, y) == [x[12]]


def test_a_loop_that_straddled_the_step_is_not_a_level_of_its_own():
    x, y = _curve(80, ramp=None, mixed=162.2)
    assert knees(x, y) == [x[12]]


def test_a_bend_is_found_where_the_ramp_ends_however_far_the_curve_runs_on():
    # two knees allowed: the step, then the bend that ends the ramp (where Puget's curve
    # "levels off"); the ramp's start, the weaker bend, shares the middle segment, which
    # pulls the bend found up to 4 loops early (107-108 for 110 here)
    found = []
    for n_loops in (160, 240, 300):
        x, y = _curve(n_loops, ramp=(30, 110))
        got = knees(x, y)
        assert len(got) == 2 and got[0] == x[12]
        assert abs(got[1] - x[110]) <= 4 * GB_PER_LOOP
        found.append(got[1])
    assert max(found) - min(found) <= GB_PER_LOOP


def test_a_straight_decline_has_no_knee():
    x = np.arange(200) * GB_PER_LOOP
    y = 132.0 - 5.0 * np.arange(200) / 199
    assert knees(x, y) == []


def test_lines_are_the_planted_levels_and_leave_the_straddling_loop_out():
    # the figure draws these: the step's two levels, and a straddling loop pulls neither
    x, y = _curve(80, ramp=None, mixed=162.2)
    segs = lines(x, y)
    assert [s["x_start"] for s in segs[1:]] == knees(x, y) == [x[12]]
    assert segs[0]["x_start"] == x[0] and segs[-1]["x_end"] == x[-1]
    assert abs(segs[0]["y_start"] - 193.0) < 1e-9 and abs(segs[0]["y_end"] - 193.0) < 1e-9
    assert abs(segs[1]["y_start"] - 132.0) < 1e-9 and abs(segs[1]["y_end"] - 132.0) < 1e-9
    assert [s["loops"] for s in segs] == [12, 80 - 13]


def test_lines_draw_a_decline_declining():
    # a bend: the middle segment's line falls the way the planted ramp does
    x, y = _curve(240, ramp=(30, 110))
    segs = lines(x, y)
    assert len(segs) == 3
    mid = segs[1]
    assert mid["y_start"] > mid["y_end"] + 3.0  # the ramp loses 5 MB/s over its loops
    assert abs(segs[2]["y_start"] - 127.0) < 0.2 and abs(segs[2]["y_end"] - 127.0) < 0.2


def test_only_puget_reads_knees():
    """Every other protocol's rows are untouched by the knee rule: no other procedure or
    review part imports it."""
    root = pathlib.Path(__file__).parents[1] / "toolkit" / "flashback"
    users = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "analysis.knees" in p.read_text() and p.name != "knees.py"
    )
    assert users == ["replay/procedures/puget_checks.py", "report/reviews/puget.py"]


def test_the_search_finds_the_fit_an_independent_exact_search_finds():
    # ruptures' Dynp with its piecewise-linear cost ("linear": least squares of y on x and a
    # constant per segment) is an exact search written independently of this one: given the
    # number of knees the rule chose, it must place them at the same loops (on curves whose
    # fit leaves no straddling loop out, a choice ruptures does not have)
    import ruptures as rpt

    from flashback.analysis.knees import _fit

    rng = np.random.default_rng(7)
    compared, two = 0, 0
    # bends (ramps), a second step (a one-loop ramp) and a step alone, with noise; the 1 %
    # noise floor lowered so that gentle bends are knees here
    for n_loops, ramp, sd in ((80, (30, 60), 0.05), (120, (40, 90), 0.1), (160, (30, 110), 0.05),
                              (120, None, 0.4), (90, (20, 70), 0.1), (100, (50, 51), 0.5)):  # fmt: skip
        x, y = _curve(n_loops, ramp=ramp)
        y = y + rng.normal(0.0, sd, size=y.size)
        fit = _fit(x, y, max_knees=2, noise_floor=0.001)
        if not fit or any(gap for _, gap in fit):
            continue
        signal = np.column_stack([y, x, np.ones_like(x)])
        algo = rpt.Dynp(model="linear", min_size=3, jump=1).fit(signal)
        assert algo.predict(n_bkps=len(fit))[:-1] == [i for i, _ in fit], (n_loops, ramp)
        compared += 1
        two += len(fit) == 2
    assert compared >= 4 and two >= 3
