#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# gpuvirtctl against the real module: what it prints, in text and JSON,
# matches sysfs and the debugfs "hardware" state (the sim's and the core's);
# what it sets shows there; its errors are clear, carry the kernel's
# message and have the documented exit codes, and a refused change changes
# nothing; monitor reports GPU, vGPU and scheduler events.
#
# Runs as root in the test VM (selftests/vm-run.sh). Prints KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

TYPES=/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types
SCHED_SYSFS=$BUS/devices/sim0/gpu/gpuvirt
MON_PID=
MONT_PID=

U1=6c1e2b6a-1d3f-4a8e-9b2c-0d4e5f6a7b81
U3=6c1e2b6a-1d3f-4a8e-9b2c-0d4e5f6a7b83
U4=6c1e2b6a-1d3f-4a8e-9b2c-0d4e5f6a7b84

vmt_start_clean gpuvirt_sim gpuvirt
vmt_on_exit vmt_reap MON_PID MONT_PID
vmt_need_ctl
vmt_need_modules gpuvirt

# The guest runs under TCG, often next to other VMs, where a fork costs a
# few hundred milliseconds: the helpers below (and vmtest.sh's run, has,
# sysfs_is and debugfs_is) use shell builtins only, and the JSON checks are
# few python runs that check much each.

# line FILE REGEX: a whole line of FILE matches the extended regex REGEX
line() {
	local l ls
	mapfile -t ls <"$1"
	for l in "${ls[@]}"; do
		[[ $l =~ ^$2$ ]] && return 0
	done
	echo "# no line of $1 matches: $2"
	return 1
}

# lines FILE: the number of lines of FILE, in $n
lines() {
	local ls
	mapfile -t ls <"$1"
	n=${#ls[@]}
}

# last_has FILE TEXT: the last line of FILE contains TEXT
last_has() {
	local ls
	mapfile -t ls <"$1"
	[ ${#ls[@]} -gt 0 ] && [[ ${ls[-1]} == *"$2"* ]]
}

ktap_plan 42

# 1: no module, no family
run gpu show
[ $rc -eq 1 ] && grep -q "gpuvirt netlink family is not available" "$T/err"
ktap_result $? "without the module: exit 1 and says the family is missing"

vmt_load gpuvirt gpuvirt_sim
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
    assert g["vgpu-mode"] == open(f"/sys/bus/gpuvirt_sim/devices/sim{gid}/gpu/gpuvirt/vgpu_mode").read().strip(), g
    assert g["backend"] == "gpuvirt_sim", g
    assert g["dev"] == hw["pci"] == "80%02x:00:00.0" % gid, (g, hw)
    assert g["vgpu-model"] == "mdev" and g["max-vfs"] == 16 and g["vfs"] == 0, g
assert gpus[0]["vram"] == 141 << 30 and gpus[5]["vram"] == 6 << 30
PY
ktap_result $? "-j gpu show matches the sim debugfs"

# 6: text form
"$CTL" gpu show >"$T/text" 2>"$T/err"
ktap_diag "$(cat "$T/text")"
grep -qx "gpu 0 name sim0 dev 8000:00:00.0 model h200-141gb vram 141G engines 7 mode timesliced vgpu-mode homogeneous backend gpuvirt_sim vgpu-model mdev max-vfs 16 vfs 0" "$T/text" &&
	grep -qx "gpu 5 name sim5 dev 8005:00:00.0 model custom vram 6G engines 2 mode timesliced vgpu-mode homogeneous backend gpuvirt_sim vgpu-model mdev max-vfs 16 vfs 0" "$T/text" &&
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
run gpu show id 9
[ $rc -eq 1 ] && grep -q "no GPU with this id" "$T/err" && [ ! -s "$T/out" ]
ktap_result $? "gpu show id 9: exit 1 with the kernel's message"

# 10: usage error names the field
run gpu show id abc
[ $rc -eq 2 ] && grep -q '"id"' "$T/err" && grep -q 'abc' "$T/err"
ktap_result $? "gpu show id abc: usage error naming the field"

# --- type ------------------------------------------------------------------

# 11: the text line of one type
run type show
cp "$T/out" "$T/types.txt"
[ $rc -eq 0 ] &&
	line "$T/types.txt" "gpu 0 type H200-35C series C fb 35G max-instances 4 available 4 description num_heads=.*, max_instance=4, series=C"
ktap_result $? "type show: text line of H200-35C"

# 12: every type of both GPUs: JSON agrees with the text and with the mdev
# types in sysfs; one type by name; the dump filtered by GPU
"$CTL" -j type show >"$T/types.json" 2>"$T/err" &&
	"$CTL" -j type show gpu 0 name H200-35C >"$T/type1.json" 2>"$T/err" &&
	"$CTL" -j type show gpu 5 >"$T/types5.json" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && python3 - "$T" <<'PY'
import json, os, re, sys
t_ = sys.argv[1]
types = json.load(open(f"{t_}/types.json"))["type"]
lines = open(f"{t_}/types.txt").read().splitlines()
assert len(types) == len(lines), (len(types), len(lines))
label = {"gpu": "gpu", "type": "name", "series": "series", "fb": "fb",
         "max-instances": "max-instances", "available": "available-instances"}
def size(s):
    m = {"K": 10, "M": 20, "G": 30, "T": 40}
    return int(s[:-1]) << m[s[-1]] if s[-1] in m else int(s)
for t, line in zip(types, lines):
    # text: "label value" pairs, the description runs to the end
    head, desc = line.split(" description ", 1)
    w = head.split(" ")
    text = {label[w[i]]: w[i + 1] for i in range(0, len(w), 2)}
    assert desc == t["description"], (desc, t)
    assert int(text["gpu"]) == t["gpu"] and text["name"] == t["name"], (text, t)
    assert text["series"] == t["series"] and size(text["fb"]) == t["fb"], (text, t)
    assert int(text["max-instances"]) == t["max-instances"], (text, t)
    assert int(text["available-instances"]) == t["available-instances"], (text, t)
    d = f"/sys/bus/gpuvirt_sim/devices/sim{t['gpu']}/gpu/mdev_supported_types/gpuvirt_sim-{t['name']}"
    sysfs = lambda f: open(f"{d}/{f}").read().strip()
    assert sysfs("name") == t["name"], (t, sysfs("name"))
    assert int(sysfs("available_instances")) == t["available-instances"], t
    assert sysfs("description") == t["description"], t
    assert f"max_instance={t['max-instances']}," in t["description"], t
    assert t["series"] in "QBAC" and t["name"].endswith(t["series"]), t
# type show lists the time-sliced types; the GPU's PCI function also lists
# its MIG-backed ones (H200-1-18C, ...) for libvirt (mig.rst)
mig_backed = re.compile(r"-[0-9]-[0-9]+C")
for g in (0, 5):
    n = len([d for d in os.listdir(f"/sys/bus/gpuvirt_sim/devices/sim{g}/gpu/mdev_supported_types")
             if not mig_backed.search(d)])
    assert n and n == sum(t["gpu"] == g for t in types), (g, n)
one = json.load(open(f"{t_}/type1.json"))["type"]
assert len(one) == 1 and one[0]["name"] == "H200-35C" and one[0]["fb"] == 35 << 30, one
assert one[0]["max-instances"] == 4 and one[0]["available-instances"] == 4, one
assert one == [t for t in types if t["gpu"] == 0 and t["name"] == "H200-35C"], one
five = json.load(open(f"{t_}/types5.json"))["type"]
assert five == [t for t in types if t["gpu"] == 5], five
PY
ktap_result $? "-j type show: matches the text and sysfs; one by name; filtered by GPU"

# 13: a missing type; name without gpu
run type show gpu 0 name H200-36C
[ $rc -eq 1 ] && [ ! -s "$T/out" ] &&
	has "$T/err" 'the GPU has no type of this name (attribute "name"'
ok=$?
run type show name H200-35C
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" '"name" needs "gpu"'
ktap_result $? "type show: unknown name: exit 1 with the kernel's message; name without gpu: usage error"

# --- vgpu add / show --------------------------------------------------------

# 14: add with a UUID and a weight prints the new vGPU; sysfs agrees
run vgpu add gpu 0 type H200-35C uuid "$U1" weight 300
diag_file "$T/out"
lines "$T/out"
[ $rc -eq 0 ] && [ "$n" -eq 1 ] &&
	line "$T/out" "vgpu $U1 gpu 0 type H200-35C weight 300 min 0 max 100 vram-offset [0-9]+[KMGT]? vram 35G open false ctx [0-9]+ frame-rate-limiter true heads 1 heads-on 0 run 0 slices 0 preemptions 0 work 0 packets 0 wait-max 0 migration running saves 0 resumes 0 refused 0 bytes-saved 0 bytes-resumed 0 last-stop-copy 0" &&
	[ -d "$MDEV/$U1" ] && sysfs_is "$MDEV/$U1/gpuvirt/weight" 300 &&
	sysfs_is "$TYPES/gpuvirt_sim-H200-35C/available_instances" 3
ktap_result $? "vgpu add uuid weight: created, printed, weight in sysfs"

# 15: add -j without a UUID makes a random v4 one
run -j vgpu add gpu 0 type H200-35C
diag_file "$T/out"
cp "$T/out" "$T/add.json"
U2=$(python3 - "$T/add.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))["vgpu"]
assert len(d) == 1, d
v = d[0]
assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", v["uuid"]), v
assert v["gpu"] == 0 and v["type"] == "H200-35C" and v["vram"] == 35 << 30, v
assert v["weight"] > 0 and v["min"] == 0 and v["max"] == 100 and v["open"] is False, v
assert set(v["stats"]) == {"run", "slices", "preemptions", "work", "packets", "wait-max"}, v
print(v["uuid"])
PY
)
[ $rc -eq 0 ] && [ -n "$U2" ] && [ -d "$MDEV/$U2" ] &&
	sysfs_is "$TYPES/gpuvirt_sim-H200-35C/available_instances" 2
ktap_result $? "vgpu add -j without uuid: random v4 UUID, JSON in base units"

# 16: show, text and JSON, all and one: they agree with each other, sysfs
# and the core's debugfs
"$CTL" -j vgpu show >"$T/vgpus.json" 2>"$T/err" &&
	"$CTL" vgpu show >"$T/vgpus.txt" 2>"$T/err" &&
	"$CTL" -j vgpu show uuid "$U1" >"$T/v1.json" 2>"$T/err"
rc=$?
diag_file "$T/vgpus.txt"
[ $rc -eq 0 ] && python3 - "$T" "$U1" "$U2" "$CORE/sim0/vgpus" <<'PY'
import json, sys
t_, u1, u2, core = sys.argv[1:]
d = json.load(open(f"{t_}/vgpus.json"))["vgpu"]
by = {v["uuid"]: v for v in d}
assert sorted(by) == sorted([u1, u2]), by
def size(s):
    m = {"K": 10, "M": 20, "G": 30, "T": 40}
    return int(s[:-1]) << m[s[-1]] if s[-1] in m else int(s)
lines = open(f"{t_}/vgpus.txt").read().splitlines()
assert len(lines) == 2, lines
for line in lines:
    w = line.split(" ")
    t = {w[i]: w[i + 1] for i in range(0, len(w), 2)}
    v = by[t["vgpu"]]
    assert int(t["gpu"]) == v["gpu"] and t["type"] == v["type"], (t, v)
    for k in ("weight", "min", "max", "ctx"):
        assert int(t[k]) == v[k], (k, t, v)
    assert size(t["vram"]) == v["vram"] and size(t["vram-offset"]) == v["vram-offset"], (t, v)
    assert t["open"] == "false" and v["open"] is False, (t, v)
    for k in ("slices", "preemptions", "packets"):
        assert int(t[k]) == v["stats"][k], (k, t, v)
    for k in ("run", "work", "wait-max"):
        assert (t[k] == "0") == (v["stats"][k] == 0), (k, t, v)
for u, v in by.items():
    g = lambda f: int(open(f"/sys/bus/mdev/devices/{u}/gpuvirt/{f}").read())
    assert (v["weight"], v["min"], v["max"]) == (g("weight"), g("min_pct"), g("max_pct")), v
    hw = dict(l.split(": ", 1) for l in open(f"{core}/{u}/sched").read().splitlines())
    assert v["ctx"] == int(hw["ctx"]) and v["open"] == (hw["open"] == "1"), (v, hw)
    assert v["weight"] == int(hw["weight"]), (v, hw)
    s = v["stats"]
    assert s["packets"] == int(hw["packets"]) == 0 and s["work"] == int(hw["work_ns"]) == 0, (s, hw)
assert by[u1]["weight"] == 300
assert by[u1]["ctx"] != by[u2]["ctx"] and by[u1]["vram-offset"] != by[u2]["vram-offset"], by
assert json.load(open(f"{t_}/v1.json"))["vgpu"] == [by[u1]]
PY
ktap_result $? "vgpu show: text and JSON agree, with sysfs and debugfs too"

# 17: by GPU; unknown UUID; an upper-case UUID; bad UUID; uuid with gpu
run -j vgpu show gpu 5
read -r l <"$T/out"
[ $rc -eq 0 ] && [ "$l" = '{"vgpu":[]}' ]
ok=$?
run vgpu show uuid "$U4"
[ $ok -eq 0 ] && [ $rc -eq 1 ] && [ ! -s "$T/out" ] &&
	has "$T/err" 'no vGPU with this UUID (attribute "uuid"'
ok=$?
run -j vgpu show uuid "${U1^^}"
[ $ok -eq 0 ] && [ $rc -eq 0 ] && has "$T/out" "\"uuid\":\"$U1\""
ok=$?
run vgpu show uuid not-a-uuid
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" '"uuid" expects a UUID'
ok=$?
run vgpu show uuid "$U1" gpu 0
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" '"uuid" and "gpu" cannot be given together'
ktap_result $? "vgpu show: gpu 5 empty, unknown UUID exit 1, upper case accepted, bad UUID and uuid+gpu usage errors"

# --- vgpu set ---------------------------------------------------------------

# 18: set all three; sysfs, debugfs and show agree
run vgpu set uuid "$U1" weight 50 min 20 max 60
[ $rc -eq 0 ] && [ ! -s "$T/out" ] &&
	sysfs_is "$MDEV/$U1/gpuvirt/weight" 50 && sysfs_is "$MDEV/$U1/gpuvirt/min_pct" 20 &&
	sysfs_is "$MDEV/$U1/gpuvirt/max_pct" 60 &&
	debugfs_is "$CORE/sim0/vgpus/$U1/sched" weight 50 &&
	run vgpu show uuid "$U1" && has "$T/out" " weight 50 min 20 max 60 "
ktap_result $? "vgpu set weight min max: applied, seen in sysfs, debugfs and show"

# 18b: the display's frame rate limiter, off and on again; the scheduling
# parameters stay as they were
run vgpu set uuid "$U1" frame-rate-limiter off
[ $rc -eq 0 ] && [ ! -s "$T/out" ] &&
	sysfs_is "$MDEV/$U1/gpuvirt/frame_rate_limiter" 0 &&
	debugfs_is "$CORE/sim0/vgpus/$U1/display" frame_rate_limiter 0 &&
	sysfs_is "$MDEV/$U1/gpuvirt/weight" 50 &&
	run -j vgpu show uuid "$U1" && has "$T/out" '"frame-rate-limiter":false'
ok=$?
run vgpu set uuid "$U1" frame-rate-limiter on
[ $ok -eq 0 ] && [ $rc -eq 0 ] && sysfs_is "$MDEV/$U1/gpuvirt/frame_rate_limiter" 1 &&
	debugfs_is "$CORE/sim0/vgpus/$U1/display" frame_rate_limiter 1 &&
	run vgpu set uuid "$U1" frame-rate-limiter 0
[ $? -eq 0 ] && [ $rc -eq 2 ] &&
	has "$T/err" '"frame-rate-limiter" expects one of on, off, got "0"' &&
	sysfs_is "$MDEV/$U1/gpuvirt/frame_rate_limiter" 1
ktap_result $? "vgpu set frame-rate-limiter off/on: sysfs, debugfs and show follow; bad value refused"

# 19: min above max is refused by the kernel, nothing changes
run vgpu set uuid "$U1" min 70 weight 99
[ $rc -eq 1 ] && [ ! -s "$T/out" ] &&
	has "$T/err" 'Invalid argument: min-pct must not be above max-pct (attribute "min"' &&
	sysfs_is "$MDEV/$U1/gpuvirt/min_pct" 20 && sysfs_is "$MDEV/$U1/gpuvirt/weight" 50
ok=$?
run vgpu set uuid "$U1" min 80 max 30
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" "min-pct must not be above max-pct" &&
	sysfs_is "$MDEV/$U1/gpuvirt/min_pct" 20 && sysfs_is "$MDEV/$U1/gpuvirt/max_pct" 60
ktap_result $? "vgpu set min > max: exit 1 with the kernel's message, nothing changed"

# 20: minimums past 100 % are refused (ENOSPC), nothing changes
read -r w2 <"$MDEV/$U2/gpuvirt/weight"
run vgpu set uuid "$U2" min 90 weight 7
[ $rc -eq 1 ] &&
	has "$T/err" "No space left on device: the minimums of the GPU's vGPUs would add up past 100%" &&
	sysfs_is "$MDEV/$U2/gpuvirt/min_pct" 0 && sysfs_is "$MDEV/$U2/gpuvirt/weight" "$w2"
ktap_result $? "vgpu set min sum > 100: ENOSPC message, nothing changed"

# 21: usage errors, nothing sent
run vgpu set uuid "$U1"
[ $rc -eq 2 ] && has "$T/err" 'give at least one of "weight", "min", "max"'
ok=$?
run vgpu set uuid "$U1" weight 0
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" '"weight" expects a number from 1 to 10000, got "0"'
ok=$?
run vgpu set uuid "$U1" max 101
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" '"max" expects a number from 1 to 100, got "101"' &&
	sysfs_is "$MDEV/$U1/gpuvirt/weight" 50 && sysfs_is "$MDEV/$U1/gpuvirt/max_pct" 60
ok=$?
run vgpu set uuid "$U4" weight 5
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" 'no vGPU with this UUID (attribute "uuid"'
ktap_result $? "vgpu set: nothing to set, out-of-range values: usage errors; unknown UUID: exit 1"

# --- vgpu add errors: nothing left half-made -----------------------------------

# 22: parameters the kernel refuses: the new vGPU is removed again
run vgpu add gpu 0 type H200-35C uuid "$U3" min 90
[ $rc -eq 1 ] && [ ! -s "$T/out" ] && has "$T/err" "would add up past 100%" &&
	has "$T/err" "removed the new vGPU $U3 again" && [ ! -e "$MDEV/$U3" ] &&
	sysfs_is "$TYPES/gpuvirt_sim-H200-35C/available_instances" 2
ktap_result $? "vgpu add min sum > 100: kernel message, vGPU removed again"

# 23: the same with min above max
run vgpu add gpu 0 type H200-35C uuid "$U3" min 50 max 20 weight 10
[ $rc -eq 1 ] && has "$T/err" "min-pct must not be above max-pct" &&
	has "$T/err" "removed the new vGPU $U3 again" && [ ! -e "$MDEV/$U3" ]
ok=$?
run vgpu show uuid "$U3"
[ $ok -eq 0 ] && [ $rc -eq 1 ] && sysfs_is "$TYPES/gpuvirt_sim-H200-35C/available_instances" 2
ktap_result $? "vgpu add min > max: rolled back, the vGPU does not exist"

# 24: a bad weight is refused before anything is created
run vgpu add gpu 0 type H200-35C uuid "$U3" weight 10001
[ $rc -eq 2 ] && has "$T/err" '"weight" expects a number from 1 to 10000' &&
	[ ! -e "$MDEV/$U3" ] && sysfs_is "$TYPES/gpuvirt_sim-H200-35C/available_instances" 2
ktap_result $? "vgpu add bad weight: usage error, no vGPU exists afterwards"

# 25: unknown GPU, unknown type, another type (homogeneous), UUID taken
run vgpu add gpu 9 type H200-35C
[ $rc -eq 1 ] && has "$T/err" 'no GPU with this id (attribute "gpu"'
ok=$?
run vgpu add gpu 0 type H200-36C
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" 'the GPU has no type of this name (attribute "type"'
ok=$?
run vgpu add gpu 0 type H200-4C uuid "$U3"
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" "another type" && [ ! -e "$MDEV/$U3" ]
ok=$?
run vgpu add gpu 0 type H200-35C uuid "$U1"
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" "exists already" &&
	sysfs_is "$MDEV/$U1/gpuvirt/weight" 50
ok=$?
run vgpu add gpu 0
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" 'missing argument "type"'
ktap_result $? "vgpu add: unknown GPU or type, busy GPU, UUID taken: exit 1 with the reason; no type: usage"

# --- sched ------------------------------------------------------------------

# 26: show, one and all, matches sysfs and the core's debugfs
"$CTL" -j sched show gpu 0 >"$T/sched0.json" 2>"$T/err" &&
	"$CTL" -j sched show >"$T/sched.json" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && python3 - "$T" "$SCHED_SYSFS" "$CORE/sim0/sched" <<'PY'
import json, sys
t_, sysfs, core = sys.argv[1:]
d = json.load(open(f"{t_}/sched0.json"))["sched"]
assert len(d) == 1, d
s = d[0]
rd = lambda f: open(f"{sysfs}/{f}").read().strip()
hw = dict(l.split(": ", 1) for l in open(core).read().splitlines())
assert s["gpu"] == 0 and s["policy"] == rd("sched_policy") == hw["policy"], (s, hw)
assert s["timeslice"] == int(rd("sched_slice_us")) * 1000 == 0, s
assert s["timeslice-effective"] == int(hw["slice_ns"]) > 0, (s, hw)
assert s["vgpus"] == int(hw["vgpus"]) == 2, (s, hw)
for k in ("busy", "idle", "switch", "switches", "lag"):
    assert isinstance(s[k], int) and s[k] >= 0, (k, s)
# the engine is idle: its lag stands still, and is what debugfs says
assert s["lag"] == int(hw["lag_ns"]) - int(hw["caught_up_ns"]), (s, hw)
all_ = json.load(open(f"{t_}/sched.json"))["sched"]
assert sorted(x["gpu"] for x in all_) == [0, 5], all_
assert [x["vgpus"] for x in sorted(all_, key=lambda x: x["gpu"])] == [2, 0], all_
PY
ktap_result $? "-j sched show: gpu 0 matches sysfs and debugfs; the dump has both GPUs"

# 27: text form
read -r policy <"$SCHED_SYSFS/sched_policy"
run sched show gpu 0
[ $rc -eq 0 ] &&
	line "$T/out" "gpu 0 policy $policy timeslice 0 effective [0-9.]+[mu]s vgpus 2 busy [0-9.a-z]+ idle [0-9.a-z]+ switch [0-9.a-z]+ switches [0-9]+ lag [0-9.a-z]+"
ktap_result $? "sched show gpu 0: text line"

# 28: set policy and time slice; sysfs and debugfs follow
run sched set gpu 0 policy weighted timeslice 500
[ $rc -eq 0 ] && [ ! -s "$T/out" ] &&
	sysfs_is "$SCHED_SYSFS/sched_policy" weighted && sysfs_is "$SCHED_SYSFS/sched_slice_us" 500 &&
	debugfs_is "$CORE/sim0/sched" policy weighted && debugfs_is "$CORE/sim0/sched" slice_ns 500000 &&
	run sched show gpu 0 && has "$T/out" "gpu 0 policy weighted timeslice 500us effective 500us "
ktap_result $? "sched set policy weighted timeslice 500: sysfs, debugfs and show agree"

# 29: policy alone, then timeslice 0, back to the default
run sched set gpu 0 policy fixed-share
[ $rc -eq 0 ] && sysfs_is "$SCHED_SYSFS/sched_policy" fixed-share &&
	sysfs_is "$SCHED_SYSFS/sched_slice_us" 500
ok=$?
run sched set gpu 0 timeslice 0
[ $ok -eq 0 ] && [ $rc -eq 0 ] && sysfs_is "$SCHED_SYSFS/sched_slice_us" 0 &&
	debugfs_is "$CORE/sim0/sched" policy fixed-share &&
	run sched show gpu 0 && has "$T/out" "gpu 0 policy fixed-share timeslice 0 effective "
ktap_result $? "sched set policy alone, timeslice 0 alone"

# 30: usage errors and the kernel's refusals change nothing
run sched set gpu 0 policy fair
[ $rc -eq 2 ] &&
	has "$T/err" '"policy" expects one of best-effort, equal-share, fixed-share, weighted, got "fair"'
ok=$?
run sched set gpu 0 timeslice 50
[ $ok -eq 0 ] && [ $rc -eq 2 ] &&
	has "$T/err" '"timeslice" expects 0 or a number from 100 to 100000, got "50"'
ok=$?
run sched set gpu 0
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" 'give at least one of "policy", "timeslice"'
ok=$?
run sched set gpu 9 policy weighted
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" 'no GPU with this id (attribute "gpu"' &&
	sysfs_is "$SCHED_SYSFS/sched_policy" fixed-share && sysfs_is "$SCHED_SYSFS/sched_slice_us" 0
ktap_result $? "sched set: bad policy, bad timeslice, nothing to set: usage errors; unknown GPU: exit 1; nothing changed"

# --- vgpu del -----------------------------------------------------------------

# 31: del removes it; again: a clear error
run vgpu del uuid "$U2"
[ $rc -eq 0 ] && [ ! -e "$MDEV/$U2" ] &&
	sysfs_is "$TYPES/gpuvirt_sim-H200-35C/available_instances" 3
ok=$?
run vgpu del uuid "$U2"
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" 'no vGPU with this UUID (attribute "uuid"'
ok=$?
run vgpu del
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" 'missing argument "uuid"'
ktap_result $? "vgpu del: removed; again: exit 1, no such vGPU; no uuid: usage error"

# --- monitor -----------------------------------------------------------------

# 32-34: monitor sees GPU, vGPU and scheduler events, in order. Until both
# monitors have printed one, a "sched set" on GPU 5 that changes nothing
# probes whether they are subscribed; the checks leave those events out.
"$CTL" -j monitor >"$T/mon" 2>"$T/monerr" &
MON_PID=$!
"$CTL" monitor >"$T/mont" 2>"$T/monterr" &
MONT_PID=$!
for _ in $(seq 50); do
	"$CTL" sched set gpu 5 timeslice 0 || break
	[ -s "$T/mon" ] && [ -s "$T/mont" ] && break
	[ -s "$T/monerr" ] || [ -s "$T/monterr" ] && break
	sleep 0.2
done
echo "7 a100-40gb" >$BUS/new_device && echo 7 >$BUS/del_device &&
	"$CTL" vgpu add gpu 0 type H200-35C uuid "$U3" >/dev/null &&
	"$CTL" sched set gpu 0 policy equal-share &&
	"$CTL" vgpu set uuid "$U3" weight 42 &&
	"$CTL" vgpu del uuid "$U3"
ktap_result $? "GPU 7 created and removed; vGPU added, set and removed; scheduler set"
for _ in $(seq 50); do
	last_has "$T/mon" "\"del\",\"vgpu\":{\"uuid\":\"$U3\"" &&
		last_has "$T/mont" "[vgpu del] vgpu $U3 " && break
	sleep 0.2
done
kill "$MON_PID" "$MONT_PID" 2>/dev/null
wait "$MON_PID" "$MONT_PID" 2>/dev/null
MON_PID=
MONT_PID=
diag_file "$T/mon"
diag_file "$T/monerr"
diag_file "$T/mont"
diag_file "$T/monterr"
python3 - "$T/mon" "$U3" <<'PY'
import json, sys
u = sys.argv[2]
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
probe = lambda e: e["event"] == "change" and e.get("sched", {}).get("gpu") == 5
assert ev and probe(ev[0]), ev
ev = [e for e in ev if not probe(e)]
kinds = [(next(k for k in e if k != "event"), e["event"]) for e in ev]
assert kinds == [("gpu", "add"), ("gpu", "del"), ("vgpu", "add"),
                 ("sched", "change"), ("vgpu", "change"), ("vgpu", "del")], kinds
assert ev[0]["gpu"]["id"] == 7 and ev[1]["gpu"]["id"] == 7, ev
assert ev[0]["gpu"]["model"] == "a100-40gb", ev
assert all(e["vgpu"]["uuid"] == u and e["vgpu"]["type"] == "H200-35C" for e in (ev[2], ev[4], ev[5])), ev
assert ev[3]["sched"]["gpu"] == 0 and ev[3]["sched"]["policy"] == "equal-share", ev
assert ev[3]["sched"]["timeslice"] == 0 and ev[3]["sched"]["vgpus"] == 2, ev
assert ev[4]["vgpu"]["weight"] == 42, ev
assert isinstance(ev[5]["vgpu"]["stats"]["run"], int), ev
PY
ktap_result $? "monitor -j: gpu add/del, vgpu add, sched change, vgpu change, vgpu del, in order"

mapfile -t mont <"$T/mont"
ev=()
for l in "${mont[@]}"; do
	[[ $l == "[sched change] gpu 5 "* ]] || ev+=("$l")
done
[[ ${mont[0]} == "[sched change] gpu 5 policy "*" timeslice 0 effective "* ]] &&
	[ ${#ev[@]} -eq 6 ] &&
	[[ ${ev[0]} == "[gpu add] gpu 7 name sim7 dev 8007:00:00.0 model a100-40gb "* ]] &&
	[[ ${ev[1]} == "[gpu del] gpu 7 name sim7 "* ]] &&
	[[ ${ev[2]} == "[vgpu add] vgpu $U3 gpu 0 type H200-35C weight "* ]] &&
	[[ ${ev[3]} == "[sched change] gpu 0 policy equal-share timeslice 0 effective "* ]] &&
	[[ ${ev[4]} == "[vgpu change] vgpu $U3 gpu 0 type H200-35C weight 42 "* ]] &&
	[[ ${ev[5]} == "[vgpu del] vgpu $U3 gpu 0 "* ]]
ktap_result $? "monitor text: one tagged line per event, in order"

# 35: the earlier GPUs are untouched
"$CTL" -j gpu show >"$T/json2" 2>/dev/null
cmp -s "$T/json" "$T/json2"
ktap_result $? "GPUs 0 and 5 unchanged by the monitor test"

# 36: help lists the new objects; an unknown command of one is a usage error
"$CTL" help >"$T/out" 2>&1 && has "$T/out" "OBJECT := { gpu | type | vgpu | sched | monitor | stats" &&
	"$CTL" vgpu help >"$T/out" && has "$T/out" "vgpu show [ uuid UUID | gpu ID ]" &&
	run sched frob && [ $rc -eq 2 ] && has "$T/err" 'unknown command "frob"'
ktap_result $? "help lists the objects and commands; sched frob: usage error"

# stats: the Prometheus text format, each family announced once, every
# sample a well-formed line, the vGPU's counters there with its labels
run stats --prometheus
ok=$rc
bad=0
while IFS= read -r l; do
	case $l in
	"# HELP gpuvirt_"* | "# TYPE gpuvirt_"*" counter" | "# TYPE gpuvirt_"*" gauge") ;;
	*) [[ $l =~ ^gpuvirt_[a-z_]+\{[a-z]+=\"[^\"]*\"(,[a-z]+=\"[^\"]*\")*\}\ [0-9.e+-]+$ ]] ||
		{ echo "# not a metric line: $l"; bad=1; } ;;
	esac
done <"$T/out"
[ $ok -eq 0 ] && [ $bad -eq 0 ] &&
	line "$T/out" "gpuvirt_vgpu_weight\{gpu=\"0\",uuid=\"$U1\",type=\"H200-35C\"\} [0-9]+" &&
	line "$T/out" 'gpuvirt_gpu_info\{gpu="0",name="sim0",model="h200-141gb"\} 1' &&
	[ "$(grep -c '^# TYPE gpuvirt_vgpu_run_seconds_total counter$' "$T/out")" = 1 ]
ktap_result $? "stats --prometheus: well-formed families and samples, with the vGPU"

run stats --prometheus file "$T/gpuvirt.prom"
[ $rc -eq 0 ] && [ ! -s "$T/out" ] && [ ! -e "$T/gpuvirt.prom.tmp" ] &&
	has "$T/gpuvirt.prom" "gpuvirt_sched_busy_seconds_total{gpu=\"0\"}"
ktap_result $? "stats file PATH: written whole through a rename, nothing on stdout"

run stats
[ $rc -eq 2 ] && has "$T/err" "--prometheus"
ktap_result $? "stats without --prometheus: a usage error that says what to add"

# 37: the last vGPU goes; nothing is left
run vgpu del uuid "$U1"
ok=$rc
run -j vgpu show
read -r l <"$T/out"
[ $ok -eq 0 ] && [ $rc -eq 0 ] && [ "$l" = '{"vgpu":[]}' ] && [ ! -e "$MDEV/$U1" ]
ktap_result $? "all vGPUs removed: an empty list"

# 38: family goes with the module
rmmod gpuvirt_sim && rmmod gpuvirt
"$CTL" gpu show >/dev/null 2>"$T/err"
[ $? -eq 1 ] && has "$T/err" "not available"
ktap_result $? "after rmmod: the family is gone again"

ktap_finish
