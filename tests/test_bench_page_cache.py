"""The page-cached file the QD1 and ``t/io_uring`` bench rows read (``tests/bench/engine.py``
``page_cached_file``): what it promises (every read done inside the enter that submits it, so
one ``io_uring_enter`` per QD1 I/O), that it leaves nothing mounted, attached or on disk, even
when the body fails, and that perf's completion count the rows use for ``t/io_uring`` agrees
with flashback's own count of the same run (issue 29)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import need_root_and

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))

import engine
import engine_ring

import flashback as fb

MiB = 1 << 20


def mounts() -> str:
    return Path("/proc/self/mounts").read_text()


def attached() -> str:
    return subprocess.run(["losetup", "-a"], capture_output=True, text=True, check=True).stdout


def test_a_qd1_read_of_the_page_cache_is_one_enter_per_io():
    """fio reaps its ring before it waits; so does the engine now. The old wait entered the
    kernel for a completion already in the ring: 2 enters per I/O here."""
    need_root_and("losetup", "mkfs.ext4", "mount")
    with engine.page_cached_file(4 * MiB) as path:
        cap = fb.run(path, fb.Workload(rw="randread", bs="4k", iodepth=1, loops=1, direct=False))
    ios = cap.meta["totals"]["read_ios"]
    assert ios == 1024
    # besides one per I/O: arming and removing the run's timeout, and an eighth spare (a page
    # reclaimed meanwhile is read by a worker and waited for); the old wait made 2 per I/O
    assert cap.meta["io_uring_enters"] <= ios + ios // 8 + 4, cap.meta["io_uring_enters"]


def ours() -> set[str]:
    """The bench's page-cache loop devices attached now (``losetup -a`` lines)."""
    return {ln for ln in attached().splitlines() if "flashback-pc-" in ln}


def test_nothing_is_left_mounted_attached_or_on_disk_when_the_body_fails():
    need_root_and("losetup", "mkfs.ext4", "mount")
    # another bench's may be attached meanwhile: only this one's must go
    before = ours()
    with pytest.raises(RuntimeError, match="the body failed"):
        with engine.page_cached_file(2 * MiB) as path:
            mnt = str(Path(path).parent)
            held = open(path, "rb")  # a file still open on the filesystem as it goes
            assert mnt in mounts() and len(ours() - before) == 1
            raise RuntimeError("the body failed")
    assert mnt not in mounts()
    assert not Path(mnt).exists()
    # the file still open kept the filesystem, so the loop device, alive: detached lazily, it
    # goes when that file is closed
    held.close()
    deadline = time.monotonic() + 10
    while ours() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ours() - before


def test_perf_counts_a_runs_completions_as_flashback_does():
    """The page-cache ``t/io_uring`` rows count I/Os with the kernel's tracepoint; on a
    flashback run it gives flashback's own count plus the run's timeout completions."""
    need_root_and("losetup", "mkfs.ext4", "mount", "perf")
    if why := engine_ring.perf_counts():
        pytest.skip(why)
    with engine.page_cached_file(8 * MiB) as path:
        code = (
            "import json, sys, flashback as fb\n"
            "cap = fb.run(sys.argv[1], fb.Workload(rw='randread', bs='4k', iodepth=8, loops=4,"
            " direct=False), session='shared')\n"
            "print(json.dumps({**cap.meta['totals'], 'io_uring_enters': cap.meta['io_uring_enters']}))"
        )
        c = engine_ring.spawn_counted([sys.executable, "-c", code, path])
    totals = json.loads(c.out.strip().splitlines()[-1])
    ios = totals["read_ios"]
    assert ios == 4 * 2048
    # the run's 20 ms timeout posts one completion each time it fires (a run this short: few)
    assert ios <= c.completions <= ios + 200, (ios, c.completions)
    assert c.cpu_s > 0
    # perf's count of the run's enters is flashback's own, besides the interpreter's none
    assert c.enters == totals["io_uring_enters"], (c.enters, totals)


def test_the_user_share_tells_user_space_from_the_kernel():
    """The page-cache ``t/io_uring`` rows' sampled user share (``engine_ring.user_share``):
    a program spending its time in a loop of its own is mostly user space, one copying inside
    the kernel almost none, and nothing of perf's is left behind."""
    need_root_and("perf")
    if why := engine_ring.perf_counts():
        pytest.skip(why)
    before = set(Path(engine.ram_dir()).glob("flashback-share-*"))
    looping = engine_ring.user_share(
        [sys.executable, "-c", "x = 0\nfor i in range(10_000_000):\n    x += i"]
    )
    copying = engine_ring.user_share(["dd", "if=/dev/zero", "of=/dev/null", "bs=4M", "count=1500"])
    assert looping > 0.7, looping
    assert copying < 0.2, copying
    assert set(Path(engine.ram_dir()).glob("flashback-share-*")) == before


def fake_perf(bin_dir: Path, counted_from: int) -> Path:
    """A ``perf`` on ``bin_dir`` that runs its command, then writes ``perf stat``'s CSV to its
    ``-o`` file: ``<not counted>`` for every event on its first ``counted_from - 1`` calls,
    numbers after. Returns the file counting its calls."""
    calls = bin_dir / "calls"
    calls.write_text("0")
    script = bin_dir / "perf"
    script.write_text(
        "#!/bin/sh\n"
        f'n=$(($(cat "{calls}") + 1)); echo $n > "{calls}"\n'
        'out=""; while [ "$1" != "--" ]; do [ "$1" = "-o" ] && out="$2"; shift; done; shift\n'
        '"$@"\n'
        f'if [ $n -lt {counted_from} ]; then v="<not counted>"; else v=""; fi\n'
        '{ echo "${v:-2000.5},msec,task-clock,1,100.00"\n'
        '  echo "${v:-4096},,io_uring:io_uring_complete,1,100.00"\n'
        '  echo "${v:-512},,syscalls:sys_enter_io_uring_enter,1,100.00"; } > "$out"\n'
    )
    script.chmod(0o755)
    return calls


def test_a_run_perf_did_not_count_is_run_again_once(tmp_path, monkeypatch):
    """perf printed ``<not counted>`` once in some 170 runs here: ``spawn_counted`` runs such a
    run again, and refuses in one sentence when perf counts neither time."""
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    calls = fake_perf(tmp_path, counted_from=2)
    c = engine_ring.spawn_counted(["echo", "ran"])
    assert (c.out.strip(), c.completions, c.enters, c.cpu_s) == ("ran", 4096, 512, 2.0005)
    assert calls.read_text().strip() == "2"
    calls = fake_perf(tmp_path, counted_from=3)
    with pytest.raises(RuntimeError, match="perf did not count task-clock"):
        engine_ring.spawn_counted(["echo", "ran"])
    assert calls.read_text().strip() == "2"
