"""Every file flashback writes goes through one guarded writer (``native/src/output/``):
no device node, FIFO or directory (nor a symlink to one); an existing file only with
overwrite; exclusive temporaries that follow no planted link and leave nothing behind; a lock
so two runs cannot write one output; a full disk named in one sentence with what was kept.

Each test reproduces one attack from issue 23 on loop devices, FIFOs and tmpfs made here.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

import flashback as fb
from flashback import _native
from flashback.errors import CaptureFileError, DeviceError, SafetyError

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not ROOT, reason="needs root to make loop devices and mount a small tmpfs"
)

SIM = "sim:generic?scale=1/256"
SMALL = fb.Workload(rw="write", bs="64k", size="2m")


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flashback", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def small_capture() -> fb.Capture:
    return fb.run(SIM, SMALL)


def names(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


@pytest.fixture
def loop_device(tmp_path):
    """A 16 MiB loop device on a sparse file made here (zeros), detached afterwards."""
    if not ROOT or shutil.which("losetup") is None:
        pytest.skip("needs root and losetup to make a loop device")
    img = tmp_path / "loop.img"
    with img.open("wb") as f:
        f.truncate(16 << 20)
    dev = subprocess.run(["losetup", "--find", "--show", str(img)], capture_output=True, text=True)
    if dev.returncode != 0:
        pytest.skip(f"losetup could not attach a loop device: {dev.stderr.strip()}")
    name = dev.stdout.strip()
    try:
        yield Path(name)
    finally:
        subprocess.run(["losetup", "-d", name], check=False)


def device_head(dev: Path, n: int = 1 << 20) -> bytes:
    with dev.open("rb") as f:
        return f.read(n)


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 1 MiB tmpfs mounted under a temporary directory, unmounted afterwards."""

    def make(size: str = "1m") -> Path:
        if not ROOT:
            pytest.skip("needs root to mount a small tmpfs (a full disk)")
        mnt = tmp_path / f"tmpfs-{size}"
        mnt.mkdir()
        r = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            pytest.skip(f"could not mount a tmpfs: {r.stderr.strip()}")
        mounts.append(mnt)
        return mnt

    mounts: list[Path] = []
    yield make
    for m in mounts:
        subprocess.run(["umount", "-l", str(m)], check=False)


def fill(mnt: Path, *, leave_bytes: int = 0) -> None:
    """Fills the tmpfs at ``mnt`` up to ``leave_bytes`` of free space."""
    st = os.statvfs(mnt)
    free = st.f_bavail * st.f_frsize
    with (mnt / "ballast").open("wb") as f:
        try:
            f.write(b"\xaa" * max(free - leave_bytes, 0))
        except OSError:
            pass


# --- item 1: outputs that are devices, or symlinks to devices --------------------------


@needs_root
def test_capture_path_on_a_block_device_is_refused_and_the_device_untouched(loop_device):
    before = device_head(loop_device)
    with pytest.raises(SafetyError, match="block device"):
        fb.run(SIM, SMALL, capture_path=loop_device, overwrite=True)
    assert device_head(loop_device) == before
    assert stat.S_ISBLK(os.stat(loop_device).st_mode), "the device node was replaced"


@needs_root
def test_cli_output_symlink_to_a_block_device_is_refused_with_overwrite(tmp_path, loop_device):
    link = tmp_path / "cap.arrow"
    link.symlink_to(loop_device)
    before = device_head(loop_device)
    p = cli("run", SIM, "--rw", "write", "--bs", "64k", "--size", "2m", "--no-progress",
            "-o", str(link), "--overwrite")  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "block device" in p.stderr and "Traceback" not in p.stderr
    assert device_head(loop_device) == before
    assert stat.S_ISBLK(os.stat(loop_device).st_mode)


def test_save_to_a_fifo_or_a_link_to_one_is_refused_and_the_fifo_kept(tmp_path):
    cap = small_capture()
    fifo = tmp_path / "pipe.parquet"
    os.mkfifo(fifo)
    link = tmp_path / "link.arrow"
    link.symlink_to(fifo)
    for dest in (fifo, link):
        with pytest.raises(SafetyError, match="FIFO"):
            cap.save(dest)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert names(tmp_path) == ["link.arrow", "pipe.parquet"]


def test_check_output_refuses_a_character_device_and_a_directory(tmp_path):
    with pytest.raises(SafetyError, match="character device"):
        fb._io.check_output("/dev/null", overwrite=True)
    with pytest.raises(SafetyError, match="directory"):
        fb._io.check_output(tmp_path, overwrite=True)
    sock_path = tmp_path / "s.arrow"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        with pytest.raises(SafetyError, match="socket"):
            small_capture().save(sock_path)
    finally:
        sock.close()
    dangling = tmp_path / "dangling.arrow"
    dangling.symlink_to(tmp_path / "nowhere" / "x")
    with pytest.raises(SafetyError, match="does not exist"):
        fb._io.check_output(dangling, overwrite=True)


# --- item 2: predictable, symlink-following temporaries ---------------------------------


def _foreign(tmp_path: Path) -> Path:
    f = tmp_path / "foreign-secret"
    f.write_bytes(b"someone else's file")
    f.chmod(0o600)
    return f


def test_planted_links_at_the_old_temporary_names_are_not_followed(tmp_path):
    foreign = _foreign(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    cap = small_capture()
    pid = os.getpid()
    planted = [
        out / f"x.parquet.tmp{pid}",
        out / f"x.arrow.tmp{pid}",
        out / "report.html.tmp",
        out / f".fig.svg.tmp{pid}",
    ]
    for p in planted:
        p.symlink_to(foreign)
    cap.save(out / "x.parquet")
    cap.save(out / "x.arrow")
    fb.figures.save_chart(fb.figures.capture_overview(cap.intervals), out / "fig.svg")
    from flashback.report.html import write_report

    write_report([], out, figure_formats=())
    ds = cap.to_dataset(out / "lab")
    planted_ds = ds.with_name(ds.name + f".tmp{pid}")
    ds.unlink()
    planted_ds.symlink_to(foreign)
    cap.to_dataset(out / "lab")
    assert foreign.read_bytes() == b"someone else's file"
    assert stat.S_IMODE(foreign.stat().st_mode) == 0o600
    assert fb.load(out / "x.parquet").intervals.equals(cap.intervals)


def test_named_temporaries_are_random_and_leave_nothing(tmp_path):
    """On a file system without O_TMPFILE the temporary is a random hidden name opened
    O_EXCL|O_NOFOLLOW; a failed write removes it."""
    _native._force_named_temporaries_for_tests(True)
    try:
        seen: list[str] = []
        with fb._io.atomic_output(tmp_path / "x.bin", overwrite=False) as f:
            f.write(b"data")
            seen = names(tmp_path)
        assert len(seen) == 1 and seen[0].startswith(".x.bin.") and seen[0].endswith(".tmp")
        assert names(tmp_path) == ["x.bin"]
        with pytest.raises(RuntimeError):
            with fb._io.atomic_output(tmp_path / "y.bin", overwrite=False) as f:
                f.write(b"half")
                raise RuntimeError("writer failed")
        assert names(tmp_path) == ["x.bin"]
    finally:
        _native._force_named_temporaries_for_tests(False)


def test_nameless_temporary_is_invisible_while_writing(tmp_path):
    with fb._io.atomic_output(tmp_path / "x.bin", overwrite=False) as f:
        f.write(b"data")
        assert names(tmp_path) == []
    assert (tmp_path / "x.bin").read_bytes() == b"data"


# --- item 6 (first half): capture_path naming an unrelated file, or the target ----------


def test_capture_path_naming_an_existing_file_is_refused_without_overwrite(tmp_path):
    other = tmp_path / "notes.arrow"
    other.write_bytes(b"my notes")
    with pytest.raises(SafetyError, match="already exists"):
        fb.run(SIM, SMALL, capture_path=other)
    assert other.read_bytes() == b"my notes"
    cap = fb.run(SIM, SMALL, capture_path=other, overwrite=True)
    assert fb.load(other).meta["run_id"] == cap.meta["run_id"]


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
def test_capture_path_equal_to_the_target_is_refused(tmp_path, how):
    target = tmp_path / "scratch.bin"
    fb.run(target, fb.Workload(rw="write", bs="64k", size="1m"))  # flashback creates it
    before = target.read_bytes()
    cap_path = {"same": target, "symlink": tmp_path / "l.arrow", "hardlink": tmp_path / "h.arrow"}[
        how
    ]
    if how == "symlink":
        cap_path.symlink_to(target)
    elif how == "hardlink":
        os.link(target, cap_path)
    with pytest.raises(SafetyError, match="is the target"):
        fb.run(target, fb.Workload(rw="read", bs="64k", size="1m"), capture_path=cap_path,
               overwrite=True)  # fmt: skip
    assert target.read_bytes() == before


# --- item 8: two runs writing one output; a parquet replaced while loaded ---------------


def test_an_output_locked_by_another_writer_is_refused(tmp_path):
    out = tmp_path / "cap.arrow"
    fb.run(SIM, SMALL, capture_path=out)
    first = fb.load(out).meta["run_id"]
    with out.open("rb") as held:  # what a running flashback holds on its stream
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(SafetyError, match="another flashback process"):
            fb.run(SIM, SMALL, capture_path=out, overwrite=True)
        with pytest.raises(SafetyError, match="another flashback process"):
            small_capture().save(out)
    assert fb.load(out).meta["run_id"] == first


def test_second_cli_run_streaming_to_the_same_output_is_refused(tmp_path):
    target = tmp_path / "scratch.bin"
    out = tmp_path / "cap.arrow"
    first = subprocess.Popen(
        [sys.executable, "-m", "flashback", "run", str(target), "--rw", "randwrite", "--bs",
         "4k", "--size", "4m", "--time", "20s", "--no-progress", "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not out.exists() or out.stat().st_size == 0:
            assert time.monotonic() < deadline and first.poll() is None, (
                "the first run did not start"
            )
            time.sleep(0.1)
        p = cli("run", "sim:generic?scale=1/256", "--rw", "write", "--bs", "64k", "--size",
                "2m", "--no-progress", "-o", str(out), "--overwrite")  # fmt: skip
        assert p.returncode == 2, p.stderr
        assert "another flashback process" in p.stderr
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    cap = fb.load(out)
    assert cap.meta["workload"]["rw"] == "randwrite"  # run 1's file, not run 2's
    assert cap.meta["target"]["kind"] == "file" and "nand_written_bytes" not in cap.intervals


def test_parquet_replaced_while_loading_never_mixes(tmp_path):
    a = fb.run(SIM, fb.Workload(rw="write", bs="64k", size="2m", interval="1ms"))
    b = fb.run(SIM, fb.Workload(rw="write", bs="64k", size="8m", interval="1ms"))
    path = tmp_path / "cap.parquet"
    a.save(path)
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import flashback as fb, os
            a = fb.load({str(path)!r})
            b = fb.run({SIM!r}, fb.Workload(rw="write", bs="64k", size="8m", interval="1ms"))
            i = 0
            while not os.path.exists({str(stop)!r}):
                (a if i % 2 else b).save({str(path)!r}); i += 1
        """),
        ]  # fmt: skip
    )
    try:
        lengths = {len(a.intervals): a.meta["run_id"], len(b.intervals): None}
        assert len(a.intervals) != len(b.intervals)
        for _ in range(300):
            c = fb.load(path)
            n = len(c.intervals)
            assert n in lengths
            if lengths[n] is not None:
                assert c.meta["run_id"] == lengths[n], "metadata of one file, rows of the other"
            else:
                assert c.meta["run_id"] != a.meta["run_id"]
    finally:
        stop.touch()
        writer.wait(timeout=60)


# --- item 9: a full disk -----------------------------------------------------------------


@needs_root
def test_save_on_a_full_disk_names_the_file_and_keeps_the_old_one(small_tmpfs):
    mnt = small_tmpfs("2m")
    cap = fb.run(SIM, fb.Workload(rw="write", bs="4k", size="8m", interval="1ms"))
    old = mnt / "cap.parquet"
    small_capture().save(old)
    kept = old.read_bytes()
    fill(mnt)
    for dest in (old, mnt / "new.parquet", mnt / "new.arrow"):
        with pytest.raises(DeviceError) as e:
            cap.save(dest)
        msg = str(e.value)
        assert f"the disk holding {dest} is full" in msg, msg
        assert ("kept unchanged" in msg) == (dest == old), msg
    assert old.read_bytes() == kept
    assert names(mnt) == ["ballast", "cap.parquet"]


@needs_root
def test_cli_run_to_parquet_on_a_full_disk_keeps_the_completed_run(small_tmpfs):
    mnt = small_tmpfs("1m")
    fill(mnt, leave_bytes=4096)
    out = mnt / "x.parquet"
    p = cli("run", SIM, "--rw", "randwrite", "--bs", "4k", "--size", "8m", "--interval",
            "0.001s", "--no-progress", "-o", str(out))  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert f"the disk holding {out} is full" in p.stderr and "Traceback" not in p.stderr
    rescued = p.stderr.split("saved to ")[1].split(" instead")[0]
    try:
        cap = fb.load(rescued)
        assert cap.status == "complete" and len(cap.intervals) > 0
    finally:
        Path(rescued).unlink(missing_ok=True)
    assert not out.exists() and names(mnt) == ["ballast"]


@needs_root
def test_streaming_onto_a_full_disk_names_the_file(small_tmpfs):
    mnt = small_tmpfs("1m")
    fill(mnt, leave_bytes=64 << 10)
    out = mnt / "cap.arrow"
    with pytest.raises(DeviceError) as e:
        fb.run(SIM, fb.Workload(rw="randwrite", bs="4k", size="16m", interval="1ms"),
               capture_path=out)  # fmt: skip
    msg = str(e.value)
    assert str(out) in msg and "is full" in msg and "altered" not in msg, msg
    kept = fb.recover(out)  # the intervals streamed before the disk filled
    assert len(kept.intervals) > 0 and kept.meta["run_id"]


@needs_root
def test_a_full_disk_while_finishing_a_capture_names_the_file_not_an_alteration(small_tmpfs):
    mnt = small_tmpfs("1m")
    out = mnt / "cap.arrow"
    size = 2 << 20

    def fill_at_the_end(row: dict) -> None:  # the last interval: the disk fills up
        if row["host_written_bytes"] >= size and not (mnt / "ballast").exists():
            fill(mnt)

    with pytest.raises(DeviceError) as e:
        fb.run(SIM, fb.Workload(rw="write", bs="64k", size=size, interval="1ms"),
               capture_path=out, progress=fill_at_the_end)  # fmt: skip
    msg = str(e.value)
    assert str(out) in msg and "is full" in msg and "altered" not in msg, msg
    assert "streamed" in msg and "flashback recover" in msg, msg
    assert len(fb.recover(out).intervals) > 0  # the streamed file is kept


# --- item 10: replay -o DIR checked before the first I/O --------------------------------


@pytest.mark.parametrize("kind", ["file", "existing_save", "fifo"])
def test_replay_output_is_checked_before_the_target_is_touched(tmp_path, kind):
    out = tmp_path / "out"
    if kind == "file":
        out.write_text("a file, not a directory")
    elif kind == "existing_save":
        out.mkdir()
        (out / "replay.json").write_text("{}")
    else:
        out.mkdir()
        os.mkfifo(out / "intervals.parquet")
    target = tmp_path / "scratch.bin"
    fb.run(target, fb.Workload(rw="write", bs="1m", size="64m", data="zeros"))  # flashback's file
    before = target.stat().st_mtime_ns
    p = cli("replay", "anand2009-new-vs-used", "--target", str(target), "-o", str(out),
            "--no-progress")  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert target.stat().st_mtime_ns == before, "the replay wrote before -o was checked"
    assert target.read_bytes() == bytes(64 << 20)


# --- item 11: kill -9 inside a dataset tree; a save cut between its files ----------------


def _killed_mid_write(script: str, marker: Path) -> None:
    """Runs ``script`` in a child that creates ``marker`` mid-write and then waits; SIGKILLs it."""
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)])
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, "the child ended before the kill point"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)


@pytest.mark.parametrize("named", [False, True], ids=["o_tmpfile", "named_fallback"])
def test_kill_9_during_to_dataset_leaves_no_litter_in_the_tree(tmp_path, named):
    lab = tmp_path / "ds" / "lab"
    cap = small_capture()
    first = cap.to_dataset(lab)
    marker = tmp_path / "mid-write"
    _killed_mid_write(
        f"""
        import os, time, polars as pl, flashback as fb
        from flashback import _native
        getattr(_native, "_force_named_temporaries_for_tests", lambda on: None)({named})
        cap = fb.run({SIM!r}, fb.Workload(rw="write", bs="64k", size="1m"))
        real = pl.DataFrame.write_parquet
        def slow(self, f, **kw):
            f = open(f, "wb") if isinstance(f, (str, os.PathLike)) else f
            f.write(b"PAR1 half a file")
            f.flush()
            open({str(marker)!r}, "w").close()
            time.sleep(600)
        pl.DataFrame.write_parquet = slow
        cap.to_dataset({str(lab)!r})
        """,
        marker,
    )
    files = sorted(p.relative_to(lab).as_posix() for p in lab.rglob("*") if p.is_file())
    assert files == [first.relative_to(lab).as_posix()], files
    df = pl.scan_parquet(lab, hive_partitioning=True).collect()
    assert df.height == len(cap.intervals)


def test_kill_9_between_replay_save_files_is_never_loaded_mixed(tmp_path):
    rep = fb.replay(
        "anand2009-new-vs-used", target="sim:generic?scale=1/512", scale="1/1024", progress=False
    )
    out = tmp_path / "rep"
    rep.save(out)
    marker = tmp_path / "between"
    _killed_mid_write(
        f"""
        import os, signal, flashback as fb
        import importlib
        base = importlib.import_module("flashback.replay.saved")
        rep = fb.Replay.load({str(out)!r})
        rep.meta["status"] = "second save"
        def die(*a, **k):
            open({str(marker)!r}, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        orig = base.write_bytes  # replay.json is written last
        base.write_bytes = lambda p, *a, **k: (
            die() if str(p).endswith("replay.json") else orig(p, *a, **k)
        )
        replace = os.replace  # (how flashback 0.1 at f483b33 published it)
        os.replace = lambda a, b: die() if str(b).endswith("replay.json") else replace(a, b)
        rep.save({str(out)!r})
        """,
        marker,
    )
    assert names(out) == ["intervals.parquet", "replay.json", "steps.columns"]
    with pytest.raises(CaptureFileError, match="mixes two saves"):
        fb.Replay.load(out)
    rep.save(out)
    assert fb.Replay.load(out).meta["status"] == rep.meta["status"]


def test_replay_saves_carry_one_id_and_refuse_overwrite_when_asked(tmp_path):
    rep = fb.replay(
        "anand2009-new-vs-used", target="sim:generic?scale=1/512", scale="1/1024", progress=False
    )
    out = rep.save(tmp_path / "rep")
    doc = json.loads((out / "replay.json").read_text())
    assert (
        pl.read_parquet_metadata(out / "intervals.parquet")["flashback.replay_save_id"]
        == doc["save_id"]
    )
    with pytest.raises(SafetyError, match="already exists"):
        rep.save(out, overwrite=False)


def test_capture_save_without_overwrite_keeps_an_existing_file(tmp_path):
    for name in ("x.arrow", "x.parquet"):
        p = tmp_path / name
        p.write_bytes(b"keep me")
        with pytest.raises(CaptureFileError, match="already exists"):
            small_capture().save(p, overwrite=False)
        assert p.read_bytes() == b"keep me"


def test_kill_9_during_capture_save_keeps_the_previous_file_and_no_temporary(tmp_path):
    path = tmp_path / "cap.parquet"
    first = small_capture()
    first.save(path)
    marker = tmp_path / "mid-write"
    _killed_mid_write(
        f"""
        import os, time, polars as pl, flashback as fb
        cap = fb.run({SIM!r}, fb.Workload(rw="write", bs="64k", size="1m"))
        def slow(self, f, **kw):
            f = open(f, "wb") if isinstance(f, (str, os.PathLike)) else f
            f.write(b"PAR1 half a file")
            f.flush()
            open({str(marker)!r}, "w").close()
            time.sleep(600)
        pl.DataFrame.write_parquet = slow
        cap.save({str(path)!r})
        """,
        marker,
    )
    assert names(tmp_path) == ["cap.parquet", "mid-write"]
    assert fb.load(path).meta["run_id"] == first.meta["run_id"]


def test_every_run_has_a_unique_run_id(tmp_path):
    a, b = small_capture(), small_capture()
    assert len(a.meta["run_id"]) == 32 and a.meta["run_id"] != b.meta["run_id"]
    a.save(tmp_path / "a.arrow")
    assert fb.load(tmp_path / "a.arrow").meta["run_id"] == a.meta["run_id"]
