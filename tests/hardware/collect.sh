#!/usr/bin/env bash
# flashback hardware kit: run on a SPARE drive you are willing to erase. Never run by
# `make test`. Produces a bundle (identity, SMART before/after, hwmon trace, purge log) the
# project can pin as fixtures. Usage (as root):
#   tests/hardware/collect.sh /dev/nvme1n1 OUT_DIR [--purge]
# Without --purge nothing is written to the drive: identity, SMART and a purge *plan* only.
set -euo pipefail
dev=${1:?usage: collect.sh /dev/DEVICE OUT_DIR [--purge]}
out=${2:?usage: collect.sh /dev/DEVICE OUT_DIR [--purge]}
do_purge=${3:-}
py=${PYTHON:-$(dirname "$0")/../../.venv/bin/python}
name=$(basename "$(readlink -f "$dev")")
mkdir -p "$out"
log() { echo "[$(date -u +%FT%TZ)] $*" | tee -a "$out/kit.log"; }

log "flashback hardware kit on $dev ($name)"
uname -a > "$out/uname.txt"
# identity: sysfs as the kernel shows it, the ATA IDENTIFY inside VPD 89h, the NVMe controller
tar -C / -chf "$out/sysfs-$name.tar" --ignore-failed-read \
    "sys/block/$name/queue" "sys/block/$name/size" "sys/block/$name/device" 2>/dev/null || true
[ -r "/sys/block/$name/device/vpd_pg89" ] && cp "/sys/block/$name/device/vpd_pg89" "$out/vpd_pg89.bin"
for l in /sys/class/ata_link/*/sata_spd; do [ -r "$l" ] && echo "$l $(cat "$l")"; done > "$out/sata_spd.txt" 2>/dev/null || true
case $name in
  nvme*)
    ctrl=/dev/${name%n*}
    nvme id-ctrl "$ctrl" -b > "$out/id-ctrl.bin"
    nvme id-ns "$dev" -b > "$out/id-ns.bin"
    nvme get-log "$ctrl" --log-id=0x81 --log-len=512 -b > "$out/sanitize-log-before.bin" || true
    nvme smart-log "$ctrl" -o json > "$out/nvme-smart-before.json"
    ;;
  sd*) hdparm -I "$dev" > "$out/hdparm-I.txt" ;;
esac
smartctl -x -j "$dev" > "$out/smartctl-before.json" || true
"$py" -c "import json,sys,flashback._native as n; json.dump({'device': n.device_record('$name'), 'platform': n.platform_record()}, sys.stdout, indent=2)" > "$out/record.json"

# hwmon trace: every temperature input, once a second, in the background
( while :; do
    for t in /sys/class/hwmon/hwmon*/temp*_input; do
      echo "$(date +%s.%N) $t $(cat "$t" 2>/dev/null)"
    done
    sleep 1
  done ) > "$out/hwmon-trace.txt" &
trace=$!
trap 'kill $trace 2>/dev/null || true' EXIT

"$py" -m flashback purge "$dev" --plan --json > "$out/purge-plan.json" || true
if [ "$do_purge" = "--purge" ]; then
  reaches=$("$py" -c "import json;print(','.join(d for d in json.load(open('$out/purge-plan.json'))['reaches'] if d.startswith('/dev/')))")
  log "purging $reaches (the plan above says how)"
  "$py" -m flashback purge "$dev" --destroy "$reaches" --json > "$out/purge-record.json"
  case $name in
    nvme*) nvme get-log "${ctrl}" --log-id=0x81 --log-len=512 -b > "$out/sanitize-log-after.bin" || true
           nvme smart-log "$ctrl" -o json > "$out/nvme-smart-after.json" ;;
  esac
  smartctl -x -j "$dev" > "$out/smartctl-after.json" || true
fi
log "bundle written to $out: attach it to an issue (the serial is in it: redact it first if you wish)"
