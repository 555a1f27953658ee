#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# gpuvirtctl against the real module: what it prints, in text and JSON,
# matches the simulated GPUs' debugfs "hardware" state; its errors are clear
# and have the documented exit codes; monitor reports add and remove.
#
# Runs as root in the test VM (selftests/vm-run.sh). Prints KTAP.
set -u

cd "${GPUVIRT_SRC:-.}" || exit 1
. selftests/lib/ktap.sh

KO=${GPUVIRT_KO_DIR:-build/$(uname -r)}
CTL=${GPUVIRT_BIN:-build/user}/gpuvirtctl
BUS=/sys/bus/gpuvirt_sim
HW=/sys/kernel/debug/gpuvirt_sim
T=$(mktemp -d)
MON_PID=

cleanup() {
	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
	rmmod gpuvirt_sim 2>/dev/null
	rmmod gpuvirt 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

if [ ! -x "$CTL" ] || [ ! -e "$KO/kernel/core/gpuvirt.ko" ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP gpuvirtctl or the modules are not built"
	exit 4
fi
rmmod gpuvirt_sim gpuvirt 2>/dev/null

ktap_plan 14

# 1: no module, no family
"$CTL" gpu show >"$T/out" 2>"$T/err"
rc=$?
ktap_diag "$(cat "$T/err")"
[ $rc -eq 1 ] && grep -q "gpuvirt netlink family is not available" "$T/err"
ktap_result $? "without the module: exit 1 and says the family is missing"

modprobe -a vfio mdev && insmod "$KO/kernel/core/gpuvirt.ko" && insmod "$KO/kernel/sim/gpuvirt_sim.ko"
ktap_result $? "modules load"

# 3: empty dump
"$CTL" -j gpu show >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d != {"gpu": []})' "$T/out"
ktap_result $? "no GPUs: empty JSON list"

echo "0 h200-141gb" >$BUS/new_device && echo "5 custom 6G 2" >$BUS/new_device
ktap_result $? "two simulated GPUs created"

# 5: JSON matches the hardware, field by field
"$CTL" -j gpu show >"$T/json" 2>"$T/err"
ktap_diag "$(cat "$T/json")"
python3 - "$T/json" "$HW" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
gpus = {g["id"]: g for g in doc["gpu"]}
assert sorted(gpus) == [0, 5], gpus
for gid, g in gpus.items():
    hw = dict(l.split(": ", 1) for l in open(f"{sys.argv[2]}/sim{gid}/hw").read().splitlines())
    assert g["name"] == f"sim{gid}", g
    assert g["model"] == hw["model"], (g, hw)
    assert g["vram"] == int(hw["vram_size"]), (g, hw)
    assert g["engines"] == int(hw["engines"]), (g, hw)
    assert g["mode"] == "timesliced", g
    assert g["backend"] == "gpuvirt_sim", g
assert gpus[0]["vram"] == 141 << 30 and gpus[5]["vram"] == 6 << 30
PY
ktap_result $? "-j gpu show matches the sim debugfs"

# 6: text form
"$CTL" gpu show >"$T/text" 2>"$T/err"
ktap_diag "$(cat "$T/text")"
grep -qx "gpu 0 name sim0 model h200-141gb vram 141G engines 7 mode timesliced backend gpuvirt_sim" "$T/text" &&
	grep -qx "gpu 5 name sim5 model custom vram 6G engines 2 mode timesliced backend gpuvirt_sim" "$T/text" &&
	[ "$(wc -l <"$T/text")" -eq 2 ]
ktap_result $? "gpu show text lists both GPUs"

# 7: pretty JSON is the same document
"$CTL" -j -p gpu show >"$T/pretty" 2>/dev/null
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' "$T/json" "$T/pretty" &&
	[ "$(wc -l <"$T/pretty")" -gt 2 ]
ktap_result $? "-j -p gives the same document, pretty-printed"

# 8: one GPU by id
"$CTL" -j gpu show id 5 >"$T/one" 2>"$T/err"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (len(d["gpu"]) == 1 and d["gpu"][0]["id"] == 5))' "$T/one"
ktap_result $? "gpu show id 5 returns just GPU 5"

# 9: unknown id: runtime error with the kernel's extack message
"$CTL" gpu show id 9 >"$T/out" 2>"$T/err"
rc=$?
ktap_diag "$(cat "$T/err")"
[ $rc -eq 1 ] && grep -q "no GPU with this id" "$T/err" && [ ! -s "$T/out" ]
ktap_result $? "gpu show id 9: exit 1 with the kernel's message"

# 10: usage error names the field
"$CTL" gpu show id abc >"$T/out" 2>"$T/err"
rc=$?
ktap_diag "$(cat "$T/err")"
[ $rc -eq 2 ] && grep -q '"id"' "$T/err" && grep -q 'abc' "$T/err"
ktap_result $? "gpu show id abc: usage error naming the field"

# 11-13: monitor sees add and del, in order
"$CTL" -j monitor >"$T/mon" 2>"$T/monerr" &
MON_PID=$!
for _ in $(seq 50); do
	# the monitor is subscribed once its socket shows up in the netlink table
	grep -q . "$T/monerr" && break
	[ -n "$(awk 'NR>1 && $3 == 16 && $5 != 0' /proc/net/netlink)" ] && break
	sleep 0.1
done
sleep 0.5
echo "7 a100-40gb" >$BUS/new_device && echo 7 >$BUS/del_device
ktap_result $? "GPU 7 created and removed"
for _ in $(seq 50); do
	[ "$(wc -l <"$T/mon")" -ge 2 ] && break
	sleep 0.1
done
kill "$MON_PID" 2>/dev/null
wait "$MON_PID" 2>/dev/null
MON_PID=
ktap_diag "$(cat "$T/mon")" "$(cat "$T/monerr")"
python3 - "$T/mon" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [e["event"] for e in ev] == ["add", "del"], ev
assert all(e["gpu"]["id"] == 7 for e in ev), ev
assert ev[0]["gpu"]["model"] == "a100-40gb", ev
PY
ktap_result $? "monitor -j printed add then del for GPU 7"

# 13: the earlier GPUs are untouched
"$CTL" -j gpu show >"$T/json2" 2>/dev/null
cmp -s "$T/json" "$T/json2"
ktap_result $? "GPUs 0 and 5 unchanged by the monitor test"

# 14: family goes with the module
rmmod gpuvirt_sim && rmmod gpuvirt
"$CTL" gpu show >/dev/null 2>"$T/err"
[ $? -eq 1 ] && grep -q "not available" "$T/err"
ktap_result $? "after rmmod: the family is gone again"

ktap_finish
