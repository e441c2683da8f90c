"""``make bench``: every benchmark, one after the other. Results also go to out/bench.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine
import engine_instr
import engine_ring
import fio_import
import live
import memory
import pelt
import replaydir
import run_session
import sim
import startup
import stream
import sweep
import telemetry


def main() -> None:
    results = {"engine": engine.main()}
    results["engine_ring"] = engine_ring.main()
    results["engine_instr"] = engine_instr.main()
    sim.run(sys.argv[1:] or None)
    print("\n== change points: native PELT vs ruptures' Pelt (same penalty, jump 1)")
    pelt.main(["--ruptures-n", "5000"])
    results["fio_import"] = fio_import.main([])
    results["sweep"] = sweep.main(["--scale", "1/32"])
    results["memory"] = memory.main()
    results["stream"] = stream.main([])
    results["startup"] = startup.main()
    results["live"] = live.main()
    results["telemetry"] = telemetry.main()
    results["replaydir"] = replaydir.main([])
    results["run_session"] = run_session.main([])
    out = Path("out")
    out.mkdir(exist_ok=True)
    (out / "bench.json").write_text(json.dumps(results, indent=2))
    print(f"results written to {out / 'bench.json'}")


if __name__ == "__main__":
    main()
