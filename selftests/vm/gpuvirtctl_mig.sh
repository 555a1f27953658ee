#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# gpuvirtctl's mig object and the "mig" section of apply against the real
# modules, on simulated H200s: the profiles, MIG mode on and off, GIs
# created and destroyed (checked in the GI's sysfs files and the core's
# debugfs), a plan that keeps a GI with a vGPU where it is, a plan that
# cannot be, with the planner's reason, "mig apply" ending in the layout
# its plan printed, bad input named by its field, and a configuration file
# with a mig section applied, asserted, dry-run and pruned.
#
# Runs as root in the test VM (selftests/vm-run.sh). Prints KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir
RUN_LOGS_OUT=1

MDEV_BUS=/sys/class/mdev_bus
GPU0=$BUS/devices/sim0/gpu/gpuvirt

U1=5a3c0001-0000-4000-8000-0000000000a1
U2=5a3c0001-0000-4000-8000-0000000000a2

vmt_start_clean gpuvirt_sim gpuvirt
vmt_need_ctl
vmt_need_modules gpuvirt

# gi_is GPU ID PROFILE START SLOTS: GI ID of simGPU is there, per debugfs
# and per its own sysfs files
gi_is() {
	local info=$CORE/sim$1/gis/$2/info dev=$MDEV_BUS/sim$1-gi$2
	debugfs_is "$info" profile "$3" && debugfs_is "$info" start "$4" &&
		debugfs_is "$info" slots "$5" &&
		sysfs_is "$dev/profile" "$3" && sysfs_is "$dev/placement" "$4:$5"
}

# gis_are GPU ID...: the GIs of simGPU in debugfs are exactly these ids
gis_are() {
	local d have=()
	for d in "$CORE/sim$1/gis"/*; do
		[ -e "$d/info" ] && have+=("${d##*/}")
	done
	shift
	[ "${have[*]}" = "$*" ] || {
		echo "# GIs are \"${have[*]}\", not \"$*\""
		return 1
	}
}

# drawing_matches GPU: the drawing of "mig show gpu GPU" (text) puts every
# GI over the memory slots and compute slices debugfs says it holds, "*"
# on the GIs with a vGPU, "--" on free compute slices under a GI's memory,
# "free" elsewhere, and fits 80 columns
drawing_matches() {
	run mig show gpu "$1"
	[ $rc -eq 0 ] || return 1
	python3 - "$T/out" "$CORE/sim$1/gis" <<'PY'
import os, sys
out = open(sys.argv[1]).read().splitlines()
gis = {}
d = sys.argv[2]
for n in sorted(os.listdir(d)):
    kv = dict(l.split(": ", 1) for l in open(os.path.join(d, n, "info")).read().splitlines())
    gis[int(kv["id"])] = {k: int(kv[k]) for k in ("start", "slots", "slices", "vgpus")}
mem = [None] * 8
comp = [None] * 7
for i, g in gis.items():
    for s in range(g["start"], g["start"] + g["slots"]):
        mem[s] = i
    for s in range(g["start"], g["start"] + g["slices"]):
        comp[s] = i
def cells(prefix, n):
    rows = [l for l in out if l.startswith(prefix)]
    assert len(rows) == 1, (prefix, out)
    row = rows[0]
    assert len(row) <= 80, row
    got = []
    for s in range(n):
        col = 10 + 8 * s
        b = row.rindex("[", 0, col + 1)
        got.append(row[b + 1:row.index("]", b)].split(" ")[0] if row[b + 1] != " " else row[b + 1:b + 7].strip())
    return got
def want(owner, other):
    r = []
    for s, o in enumerate(owner):
        if o is None:
            r.append("--" if other is not None and other[s] is not None else "free")
        else:
            r.append("gi%d%s" % (o, "*" if gis[o]["vgpus"] else ""))
    return r
gm, gc = cells("  memory  ", 8), cells("  compute ", 7)
wm, wc = want(mem, None), want(comp, mem)
assert gm == wm, ("memory", gm, wm)
assert gc == wc, ("compute", gc, wc)
PY
}

# layout GPU: "id:profile:start ..." of "mig show -j", for comparing
layout() {
	"$CTL" -j mig show gpu "$1" | python3 -c '
import json, sys
g = json.load(sys.stdin)["mig"][0]
print(" ".join("%d:%s:%d" % (x["id"], x["profile"], x["start"])
               for x in g.get("gi", [])))'
}

# planned: the same of the "mig plan -j" output in $T/out, kept and created
planned() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
gis = [x for x in d["keep"]] + [x for x in d["plan"] if x.get("action") == "create"]
print(" ".join("%d:%s:%d" % (x["gi"], x["profile"], x["start"])
               for x in sorted(gis, key=lambda x: x["gi"])))' "$T/out"
}

ktap_plan 24

vmt_load gpuvirt gpuvirt_sim &&
	echo "0 h200-141gb" >$BUS/new_device &&
	echo "1 custom 4G 4" >$BUS/new_device
ktap_result $? "modules load, an H200 and a small custom GPU"

# --- profiles ------------------------------------------------------------------

# 2
run mig profiles gpu 0
[ $rc -eq 0 ] && [ "$(wc -l <"$T/out")" -eq 7 ] &&
	has "$T/out" "profile 1g.18gb slices 1 slots 1 max 7 starts 0,1,2,3,4,5,6" &&
	has "$T/out" "profile 3g.71gb slices 3 slots 4 max 2 starts 0,4" &&
	has "$T/out" "type H200-3-71C" && has "$T/out" "profile 1g.18gb+me" &&
	has "$T/out" "media true" &&
	run -j mig profiles gpu 0 && [ $rc -eq 0 ] &&
	python3 -c '
import json, sys
p = {x["name"]: x for x in json.load(open(sys.argv[1]))["profile"]}
assert p["2g.35gb"]["starts"] == [0, 2, 4], p["2g.35gb"]
assert p["7g.141gb"]["slots"] == 8 and p["7g.141gb"]["max"] == 1
assert p["1g.35gb"]["type"] == "H200-1-35C"' "$T/out"
ktap_result $? "mig profiles: the 7 H200 profiles with their starts and vGPU types, text and JSON"

# 3: not capable, not found
run mig profiles gpu 1
ok=$rc
has "$T/err" "GPU 1 (sim1, custom) is not MIG capable"
ok=$((ok == 1 ? $? : 1))
run mig profiles gpu 9
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" '"gpu"' &&
	run mig mode gpu 1 on && [ $rc -eq 1 ] && has "$T/err" "mig mode:" &&
	sysfs_is "$BUS/devices/sim1/gpu/gpuvirt/mig_mode" 0
ktap_result $? "a GPU without profiles and a missing GPU are refused, naming the GPU"

# --- plan before MIG mode, mode ---------------------------------------------------

# 4
run mig plan gpu 0 3g.71gb 2g.35gb 1g.18gbx2
[ $rc -eq 0 ] && lines_are "$T/out" \
	"~ gpu 0 mode timesliced -> mig" \
	"+ gi 0 profile 3g.71gb placement 4:4" \
	"+ gi 1 profile 2g.35gb placement 0:2" \
	"+ gi 2 profile 1g.18gb placement 2:1" \
	"+ gi 3 profile 1g.18gb placement 3:1" &&
	has "$T/err" "not in MIG mode" && sysfs_is "$GPU0/mig_mode" 0
ktap_result $? "mig plan on a time-sliced GPU: the balanced layout, mode first, nothing changed"

# 5
run mig mode gpu 0 on
[ $rc -eq 0 ] && sysfs_is "$GPU0/mig_mode" 1 &&
	[ "$(cat $BUS/devices/sim0/gpu/mdev_supported_types/gpuvirt_sim-H200-35C/available_instances)" = 0 ] &&
	run mig show gpu 0 && [ $rc -eq 0 ] &&
	lines_are "$T/out" "gpu 0 name sim0 model h200-141gb mode mig gis 0" \
	"           0       1       2       3       4       5       6       7" \
	"  memory  [ free ][ free ][ free ][ free ][ free ][ free ][ free ][ free ]" \
	"  compute [ free ][ free ][ free ][ free ][ free ][ free ][ free ]" &&
	run mig show && has "$T/out" "gpu 1 name sim1 model custom mode timesliced capable false"
ktap_result $? "mig mode on: sysfs mig_mode 1, time-sliced types offer nothing, mig show"

# --- create, destroy -----------------------------------------------------------------

# 6
run mig create gpu 0 profile 3g.71gb
ok=$rc
has "$T/out" "gpu 0 gi 0 profile 3g.71gb placement 0:4 slices 3"
ok=$((ok == 0 ? $? : 1))
run mig create gpu 0 profile 1g.35gb start 4
[ $ok -eq 0 ] && [ $rc -eq 0 ] && has "$T/out" "gi 1 profile 1g.35gb placement 4:2" &&
	gi_is 0 0 3g.71gb 0 4 && gi_is 0 1 1g.35gb 4 2 && gis_are 0 0 1 &&
	debugfs_is "$CORE/sim0/gis/0/info" vgpu_type H200-3-71C &&
	[ -d "$MDEV_BUS/sim0-gi0/mdev_supported_types/gpuvirt_gi-H200-3-71C" ]
ktap_result $? "mig create: GIs at the lowest start and at a given one, in debugfs and sysfs"

# 6b
drawing_matches 0 && has "$T/out" \
	"  memory  [gi0 3g.71gb                   ][gi1 1g.35gb   ][ free ][ free ]" &&
	has "$T/out" "  compute [gi0 3 slices          ][  --  ][gi1   ][  --  ][ free ]"
ktap_result $? "mig show draws the GIs over the memory slots and compute slices debugfs gives them"

# 7
run -j mig show gpu 0
[ $rc -eq 0 ] && python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["mig"][0]
assert g["mode"] == "mig" and g["gis"] == 2, g
a, b = g["gi"]
assert (a["id"], a["start"], a["slots"], a["slices"]) == (0, 0, 4, 3), a
assert a["type"] == "H200-3-71C" and a["vgpus"] == 0 and a["vram-offset"] == 0
assert b["vram-offset"] == a["vram"] and b["engines"] != 0, b
assert "busy" in a and "idle" in a' "$T/out"
ktap_result $? "mig show -j: placement, slices, VRAM range, engines, type, vGPUs, busy and idle"

# 8: refusals
run mig create gpu 0 profile 9g.1gb
ok=$rc
has "$T/err" 'GPU 0 (h200-141gb) has no profile "9g.1gb"' && has "$T/err" "expected one of 1g.18gb"
ok=$((ok == 1 ? $? : 1))
run mig create gpu 0 profile 2g.35gb start 9
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" '"start" expects'
ok=$?
run mig create gpu 0 profile 3g.71gb start 2
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" '"start"'
ok=$?
run mig create gpu 0 profile 2g.35gb start 4
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" "No space left on device" && gis_are 0 0 1
ktap_result $? "mig create refuses an unknown profile, a bad start, an illegal start, a taken place"

# 9
run mig destroy gpu 0 gi 5
ok=$rc
has "$T/err" '"gi"'
ok=$((ok == 1 ? $? : 1))
run mig create gpu 0 profile 1g.18gb
[ $ok -eq 0 ] && [ $rc -eq 0 ] && gis_are 0 0 1 2 &&
	run mig destroy gpu 0 gi 2 && [ $rc -eq 0 ] && gis_are 0 0 1 &&
	[ ! -e "$MDEV_BUS/sim0-gi2" ]
ktap_result $? "mig destroy: a GI goes from debugfs and sysfs; a missing one is named"

# --- plans around a busy GI ---------------------------------------------------------

# 10
# a MIG-backed vGPU through "vgpu add ... gi N"; a GI without it is named
run vgpu add gpu 0 type H200-3-71C gi 5 uuid "$U1"
[ $rc -ne 0 ] && has "$T/err" "no GI with this id" && [ ! -e "/sys/bus/mdev/devices/$U1" ] &&
	run vgpu add gpu 0 type H200-3-71C gi 0 uuid "$U1" && [ $rc -eq 0 ] &&
	[ -e "$MDEV_BUS/sim0-gi0/mdev_supported_types/gpuvirt_gi-H200-3-71C/devices/$U1" ] &&
	run vgpu show uuid "$U1" && has "$T/out" "gi 0" &&
	debugfs_is "$CORE/sim0/gis/0/info" vgpus 1 &&
	run mig plan gpu 0 3g.71gb 2g.35gb 1g.18gb && [ $rc -eq 0 ] && lines_are "$T/out" \
	"- gi 1 profile 1g.35gb placement 4:2" \
	"+ gi 1 profile 2g.35gb placement 4:2" \
	"+ gi 2 profile 1g.18gb placement 6:1" \
	"= gi 0 profile 3g.71gb placement 0:4 busy true" && gis_are 0 0 1
ktap_result $? "vgpu add gi: a MIG-backed vGPU; mig plan keeps its GI in place and replaces an idle one"

# 11
run mig plan gpu 0 3g.71gb 2g.35gb 1g.18gbx2
ok=$rc
[ ! -s "$T/out" ] && has "$T/err" "no plan for GPU 0: busy GI 0 (3g.71gb) leaves no room for the wanted GIs together"
ok=$((ok == 1 ? $? : 1))
run mig plan gpu 0 2g.35gbx3
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" "GI 0 (3g.71gb) is busy and not wanted"
ok=$?
run mig plan gpu 0 7g.141gb 1g.18gb
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" "no plan for GPU 0:"
ktap_result $? "impossible plans say why: no room around the busy GI, busy GI not wanted, too much"

# 12: bad input
run mig plan gpu 0 5g.50gb
ok=$rc
has "$T/err" 'unknown profile "5g.50gb" (expected one of 1g.18gb, 1g.18gb+me'
ok=$((ok == 2 ? $? : 1))
run mig plan gpu 0 1g.18gbx0
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" '"1g.18gbx0": the count after "x" must be from 1 to 7'
ok=$?
run mig plan gpu 0 1g.18gbxx
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" "expected PROFILE or PROFILExCOUNT"
ok=$?
run mig plan gpu 0
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" "missing argument PROFILE[xCOUNT]..."
ok=$?
run mig plan gpu 9 1g.18gb
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" '"gpu"'
ok=$?
run mig plan gpu 1 1g.18gb
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" "not MIG capable"
ok=$?
run mig mode gpu 0 maybe
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" "expects one of on, off"
ktap_result $? "bad input: profile, count, form, none, missing GPU, GPU without MIG, mode"

# --- apply -------------------------------------------------------------------------

# 13
run mig apply gpu 0 3g.71gb 2g.35gb 1g.18gb dry-run
[ $rc -eq 0 ] && has "$T/out" "+ gi 1 profile 2g.35gb placement 4:2" &&
	gi_is 0 1 1g.35gb 4 2 && gis_are 0 0 1
ktap_result $? "mig apply dry-run prints the plan and changes nothing"

# 14
run -j mig plan gpu 0 3g.71gb 2g.35gb 1g.18gb
want=$(planned)
run mig apply gpu 0 3g.71gb 2g.35gb 1g.18gb
[ $rc -eq 0 ] && [ "$(layout 0)" = "$want" ] &&
	[ "$want" = "0:3g.71gb:0 1:2g.35gb:4 2:1g.18gb:6" ] &&
	gi_is 0 0 3g.71gb 0 4 && gi_is 0 1 2g.35gb 4 2 && gi_is 0 2 1g.18gb 6 1 &&
	[ -e "$MDEV/$U1" ] && debugfs_is "$CORE/sim0/gis/0/info" vgpus 1
ktap_result $? "mig apply: the layout is the plan's, the busy GI and its vGPU untouched"

# 14b
drawing_matches 0 && has "$T/out" "[gi0* 3g.71gb"
ktap_result $? "mig show draws the applied layout, the GI with a vGPU marked"

# 15
run mig apply gpu 0 3g.71gb 2g.35gb 1g.18gb
[ $rc -eq 0 ] && lines_are "$T/out" \
	"= gi 0 profile 3g.71gb placement 0:4 busy true" \
	"= gi 1 profile 2g.35gb placement 4:2" \
	"= gi 2 profile 1g.18gb placement 6:1"
ktap_result $? "mig apply of the layout in place does nothing"

# 16: mode off refused while GIs exist, a failed apply says what it did not do
run mig mode gpu 0 off
ok=$rc
sysfs_is "$GPU0/mig_mode" 1
ok=$((ok == 1 ? $? : 1))
echo "2 h200-141gb" >$BUS/new_device
echo "$U2" >$BUS/devices/sim2/gpu/mdev_supported_types/gpuvirt_sim-H200-35C/create
run mig apply gpu 2 3g.71gb 1g.18gb
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" "step 1 of 3 failed (~ gpu 2 mode mig)" &&
	has "$T/err" "nothing was changed" &&
	has "$T/err" "not done: + gi 1 profile 1g.18gb start 4" &&
	sysfs_is "$BUS/devices/sim2/gpu/gpuvirt/mig_mode" 0 && [ -e "$MDEV/$U2" ]
ok=$?
echo 1 >"$MDEV/$U2/remove"
echo 2 >$BUS/del_device
[ $ok -eq 0 ]
ktap_result $? "mode off with GIs and apply on a GPU with vGPUs are refused, saying what was not done"

# --- the declarative mig section ------------------------------------------------------

cat >"$T/mig.yaml" <<EOF
simulated-gpus:
  - id: 2
    model: h200-141gb
gpus:
  - id: 2
    mig:
      mode: on
      instances: [3g.71gb, 2g.35gb, 1g.18gbx2]
    vgpus:
      - uuid: $U2
        type: H200-3-71C
EOF

# 17
run apply -f "$T/mig.yaml" --dry-run
[ $rc -eq 0 ] && lines_are "$T/out" \
	"+ simulated-gpu 2 model h200-141gb" \
	"~ gpu 2 mig off -> on" \
	"+ gi 0 profile 3g.71gb placement 4:4 on gpu 2" \
	"+ gi 1 profile 2g.35gb placement 0:2 on gpu 2" \
	"+ gi 2 profile 1g.18gb placement 2:1 on gpu 2" \
	"+ gi 3 profile 1g.18gb placement 3:1 on gpu 2" \
	"+ vgpu $U2 type H200-3-71C on gpu 2 gi 0" && [ ! -e "$BUS/devices/sim2" ]
ktap_result $? "apply --dry-run of a mig section: mode, GIs in plan order, the vGPU on its GI"

# 18
run apply -f "$T/mig.yaml"
[ $rc -eq 0 ] && gis_are 2 0 1 2 3 && gi_is 2 0 3g.71gb 4 4 && gi_is 2 1 2g.35gb 0 2 &&
	gi_is 2 3 1g.18gb 3 1 && [ -e "$MDEV_BUS/sim2-gi0/mdev_supported_types/gpuvirt_gi-H200-3-71C/devices/$U2" ] &&
	debugfs_is "$CORE/sim2/gis/0/info" vgpus 1 &&
	run assert -f "$T/mig.yaml" && [ $rc -eq 0 ] &&
	run apply -f "$T/mig.yaml" && [ $rc -eq 0 ] && lines_are "$T/out" "nothing to do"
ktap_result $? "apply: the GIs and the vGPU on GI 0; assert passes; applying again does nothing"

# 19
sed -i 's/instances: .*/instances: [3g.71gb, 2g.35gb]/' "$T/mig.yaml"
run apply -f "$T/mig.yaml" --dry-run
ok=$rc
lines_are "$T/out" "nothing to do"
ok=$((ok == 0 ? $? : 1))
run apply -f "$T/mig.yaml" --prune --dry-run
[ $ok -eq 0 ] && [ $rc -eq 0 ] && lines_are "$T/out" \
	"- gi 2 profile 1g.18gb placement 2:1 on gpu 2" \
	"- gi 3 profile 1g.18gb placement 3:1 on gpu 2" &&
	run apply -f "$T/mig.yaml" --prune && [ $rc -eq 0 ] && gis_are 2 0 1 &&
	[ -e "$MDEV/$U2" ]
ktap_result $? "GIs the file leaves out stay without --prune, go with it"

# 20
sed -i 's/instances: .*/instances: [2g.35gb]/' "$T/mig.yaml"
run apply -f "$T/mig.yaml" --prune
[ $rc -eq 1 ] && has "$T/err" "GPU 2: no MIG layout holds these instances: GI 0 (3g.71gb) is busy and not wanted" &&
	has "$T/err" "nothing was changed" && gis_are 2 0 1
ktap_result $? "--prune never destroys a GI with a vGPU: refused with the reason"

# 21
echo 1 >"$MDEV/$U2/remove"
sed -i 's/instances: .*/instances: [3g.71gb, 2g.35gb]/' "$T/mig.yaml"
run mig destroy gpu 2 gi 1
run assert -f "$T/mig.yaml"
[ $rc -eq 1 ] && has "$T/out" "+ gi 1 profile 2g.35gb placement 0:2 on gpu 2" &&
	has "$T/out" "+ vgpu $U2 type H200-3-71C on gpu 2 gi 0"
ktap_result $? "assert notices a GI and a vGPU gone"

# 22
cat >"$T/bad.yaml" <<EOF
gpus:
  - id: 2
    mig:
      instances: [3g.71gb, 1g.5gb]
EOF
cat >"$T/bad2.yaml" <<EOF
gpus:
  - id: 2
    mig: { instances: [3g.71gb, 2g.35gb] }
    vgpus:
      - uuid: $U2
        type: H200-3-71C
        gi: 1
EOF
run apply -f "$T/bad.yaml"
ok=$rc
has "$T/err" "bad.yaml:4: GPU 2 (h200-141gb) has no GI profile 1g.5gb"
ok=$((ok == 1 ? $? : 1))
run apply -f "$T/bad2.yaml"
[ $ok -eq 0 ] && [ $rc -eq 1 ] && has "$T/err" "needs a GI of profile 3g.71gb, and GI 1 is 2g.35gb" &&
	gis_are 2 0
ktap_result $? "a profile the model lacks, a vGPU pinned to a GI of another profile: refused"

ktap_finish
