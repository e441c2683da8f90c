"""Drive-telemetry decoders on real outputs (tests/data/realdrive, see its SOURCES.md): the
values each file says, read off it by hand, must come out of the decoders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flashback.errors import TelemetryFormatError
from flashback.telemetry import Snapshot, ata_units, decode, decode_file, wa

D = Path(__file__).parent / "data" / "realdrive"
NVME_660P = D / "AnalogJ__scrutiny__webapp_backend_pkg_models_testdata_smart-nvme.json"
ATA_850 = D / "AnalogJ__scrutiny__webapp_backend_pkg_models_testdata_smart-ata2.json"
ATA_860 = D / "AnalogJ__scrutiny__webapp_backend_pkg_models_testdata_smart-ata-full.json"
NVME_ROCKET = (
    D / "influxdata__telegraf__plugins_inputs_smartctl_testcases_device_nvme_response.json"
)
CLI_211 = (
    D / "netdata__netdata__src_go_plugin_go.d_collector_nvme_testdata_v2.11_nvme-smart-log.json"
)
CLI_23 = D / "netdata__netdata__src_go_plugin_go.d_collector_nvme_testdata_v2.3_nvme-smart-log.json"
S4510 = D / (
    "truenas__py-SMART__tests_dataset_singletests_megaraid_ph_sata_hdd_1_issue_56__"
    "-d_sat+megaraid,60_--all__dev_bus_0"
)
SN750_A = (
    D
    / "truenas__py-SMART__tests_dataset_singletests_nvme_win10_mingw32_0_issue_48__-d_nvme_--all__dev_sda"
)
SN750_B = (
    D
    / "truenas__py-SMART__tests_dataset_singletests_nvme_win10_mingw32_0_issue_48__-d_nvme_--all_sda"
)
SENSORS = D / "buonviri__HJS__sensorsj_experimental_kfanless.sj"
INTEL_S35 = D / "truenas__py-SMART__megaraid_ph_sata_ssd_0__-d_megaraid,28_--all__dev_bus_0"
APPLE = D / "truenas__py-SMART__sata_ssd_macos_0__-d_ata_--all"
APACER = D / "truenas__py-SMART__sata_ssd_1_issue_72__-d_ata_--all__dev_sda"
SN770 = D / "truenas__py-SMART__nvme_5_issue_46__nvmessd.json"


def test_every_pinned_file_is_in_sources_and_decodes():
    sources = (D / "SOURCES.md").read_text()
    files = sorted(p for p in D.iterdir() if p.suffix not in (".md", ".bin"))
    assert len(files) == 14  # + ecclesia_smart_log.bin, decoded by native/src/telemetry/nvme_log.rs
    for p in files:
        assert any(f"`{n}`" in sources for n in _names(p.name)), p.name
        out = decode_file(p)
        snaps = out.values() if isinstance(out, dict) else [out]
        for s in snaps:
            assert isinstance(s, Snapshot)
            assert s.temp_c is not None and 0 < s.temp_c < 120


def _names(name: str) -> list[str]:
    # SOURCES.md abbreviates the longest names with "…" (the SN750 pair shares one row)
    return [
        name,
        name.replace("tests_dataset_singletests_", "…"),
        "…" + name.rsplit("_-d_nvme_", 1)[-1],
    ]


def test_660p_data_units_are_3_980_tb_and_wa_is_unknown_not_one():
    s = decode_file(NVME_660P)
    assert s.protocol == "NVMe" and s.smartctl_version == "7.1"
    assert s.host_written_bytes == 7_773_431 * 512_000
    assert round(s.host_written_bytes / 1e12, 3) == 3.980
    assert s.host_written_error_bytes == 512_000
    assert s.nand_written_bytes is None
    assert "no NAND-write counter" in s.reasons["nand_written_bytes"]
    life = wa.lifetime(s)
    assert life.wa is None and "no NAND counter" in life.reason


def test_d3_s4510_lifetime_wa_is_8_11_with_its_bound():
    s = decode_file(S4510)
    assert s.family == "Intel S4510/S4610/S4500/S4600 Series SSDs"
    assert s.host_written_bytes == 7154 * 32 * 2**20
    assert s.nand_written_bytes == 57989 * 32 * 2**20
    life = wa.lifetime(s)
    assert round(life.wa, 2) == 8.11
    assert life.wa_lo < life.wa < life.wa_hi
    assert life.wa_hi - life.wa_lo < 0.01  # one 32 MiB unit of ~7,000
    assert s.thermal_transitions == (0, None)  # 234 Thermal_Throttle_Status 0/0
    assert s.power_on_hours == 4742 and s.temp_c == 19.0


def test_sn750_pair_differs_by_39_units_and_1185_commands():
    a, b = decode_file(SN750_A), decode_file(SN750_B)
    assert (b.host_written_bytes - a.host_written_bytes) == 39 * 512_000
    assert b.host_write_commands - a.host_write_commands == 1185
    assert a.temp_warning_c == 84.0 and a.temp_critical_c == 88.0
    assert a.warning_temp_time_min == 2
    # smartctl prints thermal-management counters only when non-zero
    assert a.thermal_transitions == (0, 0)
    d = wa.between(a, b)
    assert d.wa is None and "NAND" in d.reason


def test_nvme_cli_2_11_kelvin_and_thermal_management():
    s = decode_file(CLI_211)
    assert s.source == "nvme-cli-2.11"
    assert s.temp_c == 51.0  # 324 K
    assert s.thermal_transitions == (3, 0)
    assert s.thermal_time_s == (1474, 0)
    assert s.percentage_used == 30
    assert s.host_written_bytes == 1_928_683_480 * 512_000


def test_nvme_cli_2_3_flat_layout():
    s = decode_file(CLI_23)
    assert s.source == "nvme-cli-2.3"
    assert s.temp_c == 37.0  # 310 K
    assert s.thermal_transitions == (0, 0)
    assert s.host_write_commands == 1_928_062_610


def test_sensors_nvme_composite_limits_and_alarm():
    out = decode_file(SENSORS)
    assert set(out) == {"nvme-pci-0500", "nvme-pci-0200"}  # coretemp/acpitz are not drives
    s = out["nvme-pci-0500"]
    assert (s.temp_c, s.temp_warning_c, s.temp_critical_c) == (29.85, 109.85, 114.85)
    assert s.temp_alarm is False


def test_samsung_241_counts_lbas_and_860_device_statistics():
    s = decode_file(ATA_860)
    assert s.family == "Samsung based SSDs"
    assert s.host_written_bytes == 64_777_770_148 * 512
    assert s.percentage_used == 19  # device statistics page 7
    assert s.temp_warning_c == 70.0  # SCT op_limit_max
    assert s.nand_written_bytes is None
    assert "Samsung based SSDs" in s.reasons["nand_written_bytes"]


def test_unknown_family_is_none_with_reason_not_a_guess():
    # "X based SSDs" (an anonymised 850 PRO) has 241 Total_LBAs_Written, but its family is
    # not in the table: a wrong unit would be worse than none
    s = decode_file(ATA_850)
    assert s.host_written_bytes is None
    assert "X based SSDs" in s.reasons["host_written_bytes"]
    a = decode_file(APACER)  # Windows smartctl: Latin-1 NBSP separators, CRLF
    assert a.drivedb_version == "7.3/5319"
    assert a.host_written_bytes is None and a.temp_c == 47.0


def test_intel_family_without_243_has_no_nand_counter():
    s = decode_file(INTEL_S35)
    assert s.host_written_bytes == 1_412_735 * 32 * 2**20
    assert s.nand_written_bytes is None
    assert "243" in s.reasons["nand_written_bytes"]


def test_apple_175_host_writes_mib():
    s = decode_file(APPLE)
    assert s.host_written_bytes == 81_979_088 * 2**20
    assert s.host_written_error_bytes == 2**20


def test_rocket_and_sn770_smartctl_json():
    r = decode_file(NVME_ROCKET)
    assert r.smartctl_version == "7.4" and r.percentage_used == 4
    assert r.host_written_bytes == 76_471_882 * 512_000
    s = decode_file(SN770)
    assert s.model == "WD_BLACK SN770 500GB" and s.temp_c == 33.0


def test_renamed_attribute_is_not_decoded_with_the_old_unit():
    attrs = {241: ("Total_LBAs_Written", 100), 243: ("NAND_Writes_32MiB", 800)}
    fam = "Intel S4510/S4610/S4500/S4600 Series SSDs"
    b, e, why = ata_units.decode_counter(fam, attrs, quantity="host", sector_bytes=512)
    assert b is None and "printed as 'Total_LBAs_Written'" in why


def test_wd_nand_is_tlc_plus_slc_and_incomplete_is_none():
    fam = "WD Blue / Red / Green SSDs"
    attrs = {
        241: ("Host_Writes_GiB", 10),
        233: ("NAND_GB_Written_TLC", 30),
        234: ("NAND_GB_Written_SLC", 50),
    }
    b, e, _ = ata_units.decode_counter(fam, attrs, quantity="nand", sector_bytes=512)
    assert b == 80 * 2**30 and e == 2 * 2**30
    del attrs[234]
    b, _, why = ata_units.decode_counter(fam, attrs, quantity="nand", sector_bytes=512)
    assert b is None and "incomplete" in why


def test_snapshot_round_trips_through_json():
    s = decode_file(CLI_211)
    assert Snapshot.from_dict(json.loads(json.dumps(s.to_dict()))) == s


@pytest.mark.parametrize(
    "text, match",
    [
        ("{}", "not smartctl"),
        ('{"smartctl": {}, "device": {"protocol": "NVMe"}}', "nvme_smart_health"),
        ('{"temperature": 300, "data_units_written": "x", "power_on_hours": 1}', "not an integer"),
        ("{not json", "does not parse"),
        ("hello\n", "no 'smartctl X.Y"),
        ("smartctl 7.4 2023\n=== START OF INFORMATION SECTION ===\n", "neither"),
        ('{"nvme-pci-0100": {"Adapter": "PCI adapter", "Composite": {}}}', "no temp"),
    ],
)
def test_bad_input_is_one_clear_error(text, match):
    with pytest.raises(TelemetryFormatError, match=match):
        decode(text)


def test_binary_file_refused(tmp_path):
    p = tmp_path / "x.bin"
    p.write_bytes(b"smartctl 7.4\0\0\0")
    with pytest.raises(TelemetryFormatError, match="binary"):
        decode_file(p)
