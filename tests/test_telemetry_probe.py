"""``flashback.telemetry.snapshot(device)``: a SMART snapshot through ``smartctl -j -a``,
tested with a fake ``smartctl`` first on PATH replaying a real drive's recorded output
(tests/data/realdrive), and the purge record that takes one before and after erasing."""

from __future__ import annotations

import copy
import json
import os
import stat
from pathlib import Path

import pytest

import flashback as fb
from flashback import telemetry
from flashback.errors import DeviceError, TelemetryFormatError

REAL = (
    Path(__file__).parent
    / "data"
    / "realdrive"
    / "AnalogJ__scrutiny__webapp_backend_pkg_models_testdata_smart-ata-full.json"
)


def _fake_smartctl(bin_dir: Path, *, stdout_file: Path | None, exit_status: int, log: Path):
    bin_dir.mkdir(exist_ok=True)
    body = f'echo "$@" >> {log}\n'
    body += f"cat {stdout_file}\n" if stdout_file else ""
    p = bin_dir / "smartctl"
    p.write_text(f"#!/bin/sh\n{body}exit {exit_status}\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)


def test_snapshot_decodes_what_smartctl_printed(tmp_path, monkeypatch):
    log = tmp_path / "calls"
    _fake_smartctl(tmp_path / "bin", stdout_file=REAL, exit_status=4, log=log)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    snap = telemetry.snapshot("/dev/sdz")
    assert log.read_text().split() == ["-j", "-a", "/dev/sdz"]
    # the values the file says, read off it (not the decoder's own output): model_name,
    # 241 Total_LBAs_Written raw 64,777,770,148 × 512-byte sectors, temperature.current 36
    assert snap["model"] == "Samsung SSD 860 EVO 500GB"
    assert snap["host_written_bytes"] == 64_777_770_148 * 512
    assert snap["temp_c"] == 36.0
    # bit 2 (a SMART command failed) is the drive's warning: kept, not a refusal
    assert snap["smartctl_exit_status"] == 4


def _set(doc: dict, path: str, value):
    *head, last = path.split(".")
    for k in head:
        doc = doc[int(k)] if isinstance(doc, list) else doc[k]
    doc[last] = value


@pytest.mark.parametrize(
    "path, value, match",
    [
        # each of these came through as a number (or crashed with an AttributeError) before
        ("temperature.current", True, "temperature.current is True, not a number"),
        ("temperature.op_limit_max", "70", "op_limit_max is '70', not a number"),
        ("logical_block_size", -512, "logical_block_size is -512, a negative count"),
        ("power_on_time.hours", "many", "power_on_time.hours is 'many', not an integer"),
        ("model_family", 42, "model_family is 42, not a string"),
        ("smartctl", "7.0", "smartctl is '7.0', not an object"),
        ("ata_smart_attributes.table", {"id": 241}, "table is not a list of objects"),
    ],
)
def test_snapshot_refuses_smartctl_json_with_numbers_of_the_wrong_kind(
    tmp_path, monkeypatch, path, value, match
):
    doc = json.loads(REAL.read_text())
    bad = copy.deepcopy(doc)
    _set(bad, path, value)
    out = tmp_path / "bad.json"
    out.write_text(json.dumps(bad))
    _fake_smartctl(tmp_path / "bin", stdout_file=out, exit_status=0, log=tmp_path / "calls")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    with pytest.raises(TelemetryFormatError, match=match):
        telemetry.snapshot("/dev/sdz")


def test_a_negative_raw_counter_is_not_decoded_into_negative_bytes():
    doc = json.loads(REAL.read_text())
    for a in doc["ata_smart_attributes"]["table"]:
        if a["id"] == 241:
            a["raw"]["value"] = -5
    s = telemetry.decode_smartctl_json(doc)
    assert s.host_written_bytes is None and "241" in s.reasons["host_written_bytes"]
    nvme = json.loads((REAL.parent / REAL.name.replace("ata-full", "nvme")).read_text())
    nvme["nvme_smart_health_information_log"]["data_units_written"] = -1
    with pytest.raises(TelemetryFormatError, match="data_units_written is -1, a negative count"):
        telemetry.decode_smartctl_json(nvme)


def test_snapshot_of_a_device_smartctl_cannot_open_is_a_device_error(tmp_path, monkeypatch):
    msg = tmp_path / "msg.json"
    msg.write_text(
        '{"smartctl": {"version": [7, 3], "messages": '
        '[{"string": "/dev/sdz: Unable to detect device type", "severity": "error"}]}}'
    )
    _fake_smartctl(tmp_path / "bin", stdout_file=msg, exit_status=2, log=tmp_path / "calls")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    with pytest.raises(DeviceError, match="smartctl read nothing from /dev/sdz: .*detect device"):
        telemetry.snapshot("/dev/sdz")


def test_snapshot_without_smartctl_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no smartctl anywhere
    with pytest.raises(DeviceError, match="smartmontools"):
        telemetry.snapshot("/dev/sdz")


def test_a_purge_records_smart_before_and_after(loopdev, tmp_path, monkeypatch):
    """The purge record holds the drive's SMART snapshot at both ends (here a fake smartctl
    answers for the loop device with a real drive's output); before this hook existed the
    record said 'not recorded'."""
    dev = loopdev(8 << 20)
    log = tmp_path / "calls"
    _fake_smartctl(tmp_path / "bin", stdout_file=REAL, exit_status=0, log=log)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    rec = fb.purge(dev, destroy=dev)
    assert isinstance(rec["smart"]["before"], dict), rec["smart"]
    assert rec["smart"]["after"]["model"] == "Samsung SSD 860 EVO 500GB"
    assert log.read_text().count(dev) == 2
