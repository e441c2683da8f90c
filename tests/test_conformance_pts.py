"""The conformance line of a whole ``snia-pts`` replay, end to end: purge, write cache and the
protocol's own steady-state verdict all read from the replay itself."""

from __future__ import annotations

import flashback as fb


def test_snia_pts_replay_on_a_simulated_drive_states_its_conformance():
    rep = fb.replay("snia-pts", target="sim:intel-520-120g?scale=1/64", progress=False)
    c = rep.conformance()
    # every erase step went through fb.purge and says how
    assert c["purge"] and all(p == "purged by sim-secure-erase" for p in c["purge"])
    notes = rep.compare()["note"].to_list()
    reached = "steady state reached" in notes
    # the line follows the protocol's own verdict: conformant only when steady state was reached
    assert c["conformant"] is reached
    assert (c["line"] == "PTS-conformant run") is reached
    if not reached:
        assert any("steady state" in d for d in c["departures"])
