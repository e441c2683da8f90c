"""fb.purge / flashback purge: the method table and every refusal through the native layer
with its outside parties faked (a fake NVMe controller at the ioctl boundary, a fake
``hdparm`` on PATH replaying recorded output, sysfs trees laid out as the kernel does), a real
loop device (no PTS method: refused by name, TRIM fallback labelled), the simulated drive's
secure-erase model, the replay erase step and the conformance line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import flashback as fb
from flashback import _native
from flashback.errors import ParameterError, SafetyError
from flashback.replay.conformance import conformance

DATA = Path(__file__).parent / "data"


def _sys_tree(root: Path, names: list[str]) -> None:
    """Block devices under ``root/sys`` as the kernel links them: NVMe namespaces under
    their controller (PCIe), ``sd*`` as ATA disks behind libata."""
    s = root / "sys"
    (s / "class/block").mkdir(parents=True, exist_ok=True)
    for n in names:
        if n.startswith("nvme"):
            ctrl = "nvme" + n[4:].split("n")[0]  # nvme0n1 -> nvme0
            rel = f"devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/{ctrl}"
            (s / rel / n / "queue").mkdir(parents=True, exist_ok=True)
            (s / "class/nvme").mkdir(parents=True, exist_ok=True)
            if not (s / "class/nvme" / ctrl).exists():
                os.symlink(f"../../{rel}", s / "class/nvme" / ctrl)
            dev = f"{rel}/{n}"
        else:
            host = "devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0"
            (s / host / "block" / n / "queue").mkdir(parents=True, exist_ok=True)
            (s / host / "vendor").write_text("ATA     \n")
            os.symlink("../..", s / host / "block" / n / "device")
            dev = f"{host}/block/{n}"
        (s / dev / "size").write_text("2048\n")
        (s / dev / "queue/logical_block_size").write_text("512\n")
        (s / dev / "queue/discard_max_bytes").write_text("0\n")
        os.symlink(f"../../{dev}", s / "class/block" / n)


@pytest.fixture
def fake_hdparm(tmp_path, monkeypatch):
    """A fake ``hdparm`` first on PATH: ``-I`` prints the recorded output in $FAKE_HDPARM_I,
    an erase or sanitize zeroes $FAKE_MEDIA, every call is logged to $FAKE_HDPARM_LOG."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "hdparm"
    script.write_text(
        f"""#!{sys.executable}
import os, sys
a = sys.argv[1:]
open(os.environ["FAKE_HDPARM_LOG"], "a").write(" ".join(a) + "\\n")
if a[0] == "-I":
    sys.stdout.write(open(os.environ["FAKE_HDPARM_I"]).read())
elif any(x.startswith(("--security-erase", "--sanitize-block", "--sanitize-crypto")) for x in a):
    m = os.environ["FAKE_MEDIA"]
    n = os.path.getsize(m)
    open(m, "r+b").write(bytes(n))
"""
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "hdparm.log"
    media = tmp_path / "media.bin"
    media.write_bytes(b"\xa5" * (1 << 20))
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_HDPARM_LOG", str(log))
    monkeypatch.setenv("FAKE_MEDIA", str(media))
    return log, media


def _ata(tmp_path, recorded: str, *, plan: bool, destroy=("/dev/sdb",), method="auto"):
    os.environ["FAKE_HDPARM_I"] = str(DATA / "hdparm" / recorded)
    root = tmp_path / "root"
    _sys_tree(root, ["sdb"])
    return _native._purge_with_fakes(
        "/dev/sdb",
        destroy=list(destroy),
        method=method,
        plan=plan,
        verify_samples=8,
        sys_root=root,
        media_path=os.environ["FAKE_MEDIA"],
    )


def test_ata_secure_erase_through_a_fake_hdparm_replaying_real_output(tmp_path, fake_hdparm):
    log, media = fake_hdparm
    rec, _ = _ata(tmp_path, "pastebin_u94BSvF8_security.txt", plan=True)
    # that drive has no enhanced erase: normal secure erase, 88 min estimated
    assert rec["method"] == "ata-secure-erase"
    assert rec["capabilities"]["ata"]["erase_minutes"] == 88
    assert log.read_text().splitlines() == ["-I /dev/sdb"], "plan ran only hdparm -I"
    assert media.read_bytes()[:4] == b"\xa5" * 4
    rec, _ = _ata(tmp_path / "x", "pastebin_u94BSvF8_security.txt", plan=False)
    calls = log.read_text().splitlines()
    assert calls[-2] == "--user-master u --security-set-pass flashback /dev/sdb"
    assert calls[-1] == "--user-master u --security-erase flashback /dev/sdb"
    assert rec["label"] == "purged by ata-secure-erase"
    assert rec["verification"]["passed"] is True
    assert rec["verification"]["blocks_read"] == 8


def test_ata_security_enabled_with_an_unknown_password_is_refused(tmp_path, fake_hdparm):
    log, media = fake_hdparm
    with pytest.raises(SafetyError, match="user password flashback does not know"):
        _ata(tmp_path, "pastebin_a96R05fa_security.txt", plan=False)
    assert log.read_text().splitlines() == ["-I /dev/sdb"]
    assert media.read_bytes()[:4] == b"\xa5" * 4


def _nvme(tmp_path, spec: dict, *, plan: bool, destroy, busy=None, names=("nvme0n1", "nvme0n2")):
    root = tmp_path / "root"
    _sys_tree(root, list(names))
    return _native._purge_with_fakes(
        "/dev/nvme0n1",
        destroy=list(destroy),
        method="auto",
        plan=plan,
        verify_samples=8,
        sys_root=root,
        nvme_spec_json=json.dumps({"namespaces": len(names), **spec}),
        busy=busy or {},
    )


def test_nvme_plan_sends_only_identify_and_lists_every_namespace(tmp_path):
    rec, sent = _nvme(tmp_path, {"sanicap": 2}, plan=True, destroy=[])
    assert {c["opcode"] for c in sent} == {0x06}, sent
    assert rec["method"] == "nvme-sanitize-block"
    assert rec["reaches"] == ["/dev/nvme0n1", "/dev/nvme0n2"]
    assert 'destroy="/dev/nvme0n1,/dev/nvme0n2"' in rec["refusals"][0]


def test_nvme_sanitize_runs_when_every_namespace_is_named(tmp_path):
    rec, sent = _nvme(
        tmp_path, {"sanicap": 2}, plan=False, destroy=["/dev/nvme0n1", "/dev/nvme0n2"]
    )
    san = [c for c in sent if c["opcode"] == 0x84]
    assert len(san) == 1 and san[0]["cdw10"] == 2
    assert rec["verification"]["passed"] is True
    assert rec["sanitize_status"]["state"] == "completed"


def test_nvme_busy_sibling_namespace_refuses(tmp_path):
    busy = {"/dev/nvme0n2": "refusing to write to /dev/nvme0n2: it is mounted at /srv"}
    with pytest.raises(SafetyError, match="mounted at /srv"):
        _nvme(
            tmp_path,
            {"sanicap": 2},
            plan=False,
            destroy=["/dev/nvme0n1", "/dev/nvme0n2"],
            busy=busy,
        )


def test_sim_purge_is_the_secure_erase_model():
    t = fb.Target("sim:generic?scale=1/64")
    t.run(fb.Workload(rw="write", bs="128k", size="8m"))
    assert t.host_written_bytes > 0
    p = fb.purge(t, plan=True)
    assert p["method"] == "sim-secure-erase" and t.host_written_bytes > 0
    rec = fb.purge(t)
    assert rec["label"] == "purged by sim-secure-erase"
    assert rec["verification"]["passed"] is True
    with pytest.raises(SafetyError, match="offers only its secure-erase model"):
        fb.purge(t, method="nvme-sanitize-block")
    with pytest.raises(ParameterError, match="unknown purge method"):
        fb.purge(t, method="shred")


def test_loop_device_refuses_pts_methods_and_falls_back_labelled(loopdev):
    dev = loopdev(16 << 20)
    with pytest.raises(SafetyError, match="offers no PTS purge.*not a PTS purge"):
        fb.purge(dev, destroy=dev, method="nvme-sanitize-block")
    plan = fb.purge(dev, destroy=dev, plan=True)
    assert plan["method"] == "trim" and plan["pts_purge"] is False
    assert plan["refusals"] == []
    with pytest.raises(SafetyError, match="destroy="):
        fb.purge(dev)
    with open(dev, "r+b") as f:
        f.write(b"\x5a" * 4096)
    rec = fb.purge(dev, destroy=dev)
    assert rec["label"] == "not purged (TRIM only): not a PTS purge"
    assert rec["duration_s"] >= 0
    with open(dev, "rb") as f:
        assert f.read(4096) == bytes(4096)


def test_cli_purge_plan_and_refusal(loopdev):
    dev = loopdev(16 << 20)
    exe = [sys.executable, "-m", "flashback"]
    ok = subprocess.run(
        [*exe, "purge", dev, "--destroy", dev, "--plan"], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    assert "method:   trim" in ok.stdout and "not a PTS purge" in ok.stdout
    bad = subprocess.run(
        [*exe, "purge", dev, "--destroy", dev, "--method", "ata-secure-erase"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode != 0
    assert "not an ATA device" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_cli_purge_plan_on_a_sim_drive():
    out = subprocess.run(
        [sys.executable, "-m", "flashback", "purge", "sim:generic?scale=1/64", "--plan"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "sim-secure-erase" in out.stdout


def test_replay_erase_steps_carry_the_purge_and_the_conformance_line():
    rep = fb.replay("anandtech-consistency", target="sim:intel-530-240g?scale=1/64", scale="1/64")
    erase = [s for s in rep.step_records if s["kind"] == "erase"]
    assert erase and all(s["purge"]["method"] == "sim-secure-erase" for s in erase)
    c = rep.conformance()
    assert c["purge"] == ["purged by sim-secure-erase"]
    assert c["write_cache"] == "n/a (simulated drive)"


def test_conformance_names_each_departure():
    trim = {
        "kind": "erase",
        "purge": {"label": "not purged (TRIM only): not a PTS purge", "pts_purge": False},
    }
    real = {"kind": "erase", "purge": {"label": "purged by nvme-sanitize-block", "pts_purge": True}}
    meta = {"target_kind": "block", "target": {"device": {"write_cache_enabled": False}}}
    assert conformance([real], meta, steady_state_reached=True)["line"] == "PTS-conformant run"
    c = conformance([trim], {"target_kind": "block", "target": {}}, steady_state_reached=False)
    assert c["departures"] == [
        "not purged (TRIM only): not a PTS purge",
        "write cache state not recorded",
        "steady state not reached",
    ]
    assert conformance([], meta, steady_state_reached=None)["departures"] == ["no purge step"]


def test_report_prints_the_conformance_line(tmp_path):
    from flashback.report.html import Section, write_report

    s = Section("x", ["p"], conformance=["snia-pts: departs from PTS: steady state not reached"])
    html = write_report([s], tmp_path, figure_formats=()).read_text()
    assert "<p class='conformance'>snia-pts: departs from PTS: steady state not reached</p>" in html


def test_device_and_platform_records_from_real_sysfs_trees():
    root = DATA / "sysfs" / "procfs"
    d = _native.device_record("nvme0n1", root=root, redact_serial=True)
    assert d["model"] == "Samsung SSD 970 PRO 512GB" and d["serial"] == "redacted"
    assert d["link"]["current_speed"] == "8.0 GT/s PCIe"
    p = _native.platform_record(root=root)
    assert p["cpus_logical"] == 8 and p["cpu_governors"] == ["powersave"]


def test_capture_metadata_has_the_device_and_platform_records(loopdev):
    dev = loopdev(16 << 20)
    cap = fb.run(dev, fb.Workload(rw="read", bs="64k", size="1m"))
    assert cap.meta["platform"]["cpus_logical"] >= 1
    assert cap.meta["platform"]["flashback_version"] == _native.__version__
    d = cap.meta["device"]
    assert d["interface"] == "loop" and d["name"] == Path(dev).name
    assert d["size_bytes"] == 16 << 20
    assert d["queue"]["logical_block_size"] == 512
    assert d["loop_backing_file"].endswith(".img")


def test_zero_fill_fallback_writes_zeros_labelled(loopdev):
    dev = loopdev(8 << 20)
    with open(dev, "r+b") as f:
        f.seek(5 << 20)
        f.write(b"\x5a" * 4096)
    rec = fb.purge(dev, destroy=dev, method="zero-fill")
    assert rec["label"] == "not purged (zero fill only): not a PTS purge"
    with open(dev, "rb") as f:
        f.seek(5 << 20)
        assert f.read(4096) == bytes(4096)
