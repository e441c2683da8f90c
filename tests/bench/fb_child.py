"""One flashback run in a child process of the benchmark; prints a JSON line with the I/Os,
the run's duration and the CPU seconds this process spent during the run (all threads)."""

from __future__ import annotations

import argparse
import json
import resource

import flashback as fb


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("target")
    p.add_argument("--fields", required=True, help="workload fields as JSON")
    p.add_argument("--destroy")
    p.add_argument("--no-recording", action="store_true")
    a = p.parse_args()
    w = fb.Workload(**json.loads(a.fields))
    t = fb.Target(a.target, destroy=a.destroy)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    _, meta = t._t.run(w.fields(), no_recording=a.no_recording)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    tot = meta["totals"]
    print(
        json.dumps(
            {
                "ios": tot["read_ios"] + tot["write_ios"] + tot["trim_ios"],
                "bytes": tot["read_bytes"] + tot["write_bytes"],
                "duration_s": meta["duration_s"],
                "cpu_s": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
                "cpu_user_s": r1.ru_utime - r0.ru_utime,
                "engine": meta.get("engine"),
                "inflight_mean": meta.get("inflight_mean"),
                "status": meta["status"],
            }
        )
    )


if __name__ == "__main__":
    main()
