#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# gpuvirtctl apply and assert against the real modules: a file with a
# simulated GPU, its scheduler and three vGPUs is applied and the result
# checked in sysfs, the core's debugfs and gpuvirtctl -j; applying it again
# does nothing; --dry-run prints the changes and makes none; assert notices
# a change made behind its back; a file that fails part-way (a vGPU that
# does not fit, settings the kernel refuses, a type a new GPU lacks) is
# undone to the state before it; --prune removes what the file leaves out;
# a file with an unknown key or a conflict changes nothing.
#
# Runs as root in the test VM (selftests/vm-run.sh). Prints KTAP. The files
# it applies are written to a mktemp directory in the guest's /tmp.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir
RUN_LOGS_OUT=1

GPU0=$BUS/devices/sim0/gpu/gpuvirt
TYPES0=/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types

U1=5a3c0001-0000-4000-8000-000000000001
U2=5a3c0001-0000-4000-8000-000000000002
U3=5a3c0001-0000-4000-8000-000000000003
U4=5a3c0001-0000-4000-8000-000000000004
U5=5a3c0001-0000-4000-8000-000000000005
U6=5a3c0001-0000-4000-8000-000000000006
U7=5a3c0001-0000-4000-8000-000000000007
U8=5a3c0001-0000-4000-8000-000000000008

vmt_start_clean gpuvirt_sim gpuvirt
vmt_need_ctl
vmt_need_modules gpuvirt

# Helpers use shell builtins where they can: a fork is slow under TCG.

# vgpus_are UUID...: the vGPUs of the host are exactly these
vgpus_are() {
	local d have=()
	for d in "$MDEV"/*; do
		[ -e "$d" ] && have+=("${d##*/}")
	done
	[ "${have[*]}" = "$*" ] || {
		echo "# vGPUs are \"${have[*]}\", not \"$*\""
		return 1
	}
}

# snapshot NAME: what apply may change, for a later cmp
snapshot() {
	"$CTL" -j vgpu show >"$T/$1.vgpu" 2>/dev/null &&
		"$CTL" -j sched show >"$T/$1.sched" 2>/dev/null &&
		python3 - "$T/$1" <<'PY'
import json, sys
p = sys.argv[1]
v = [{k: x[k] for k in ("uuid", "gpu", "type", "weight", "min", "max")}
     for x in json.load(open(p + ".vgpu"))["vgpu"]]
s = [{k: x[k] for k in ("gpu", "policy", "timeslice")}
     for x in json.load(open(p + ".sched"))["sched"]]
json.dump({"vgpu": sorted(v, key=lambda x: x["uuid"]), "sched": s},
          open(p + ".state", "w"), sort_keys=True)
PY
}

# same_state A B: the snapshots A and B agree
same_state() {
	cmp -s "$T/$1.state" "$T/$2.state" || {
		echo "# state changed:"
		diag_file "$T/$1.state"
		diag_file "$T/$2.state"
		return 1
	}
}

ktap_plan 24

vmt_load gpuvirt gpuvirt_sim
ktap_result $? "modules load"

# --- apply a file, check the result ------------------------------------------

cat >"$T/base.yaml" <<EOF
# one simulated H200, shared equally by three compute vGPUs
simulated-gpus:
  - id: 0
    model: h200-141gb
gpus:
  - id: 0
    vgpu-mode: homogeneous
    sched:
      policy: equal-share
      timeslice-us: 2000
    vgpus:
      - uuid: $U1
        type: H200-35C
        weight: 100
        min-pct: 10
      - uuid: $U2
        type: H200-35C
        weight: 200
        min-pct: 20
        max-pct: 50
      - uuid: $U3
        type: H200-35C
EOF

# 2: the plan, then the changes
run apply -f "$T/base.yaml"
[ $rc -eq 0 ] && [ ! -s "$T/err" ] && lines_are "$T/out" \
	"+ simulated-gpu 0 model h200-141gb" \
	"~ sched gpu 0 policy best-effort -> equal-share timeslice-us 0 -> 2000" \
	"+ vgpu $U1 type H200-35C on gpu 0 weight 100 min-pct 10" \
	"+ vgpu $U2 type H200-35C on gpu 0 weight 200 min-pct 20 max-pct 50" \
	"+ vgpu $U3 type H200-35C on gpu 0"
ktap_result $? "apply: prints the plan of a new GPU, its scheduler and 3 vGPUs, exit 0"

# 3: sysfs and the core's debugfs
[ -d "$BUS/devices/sim0" ] && vgpus_are "$U1" "$U2" "$U3" &&
	sysfs_is "$GPU0/sched_policy" equal-share && sysfs_is "$GPU0/sched_slice_us" 2000 &&
	sysfs_is "$GPU0/vgpu_mode" homogeneous &&
	debugfs_is "$CORE/sim0/sched" policy equal-share &&
	debugfs_is "$CORE/sim0/sched" slice_ns 2000000 &&
	debugfs_is "$CORE/sim0/sched" vgpus 3 &&
	sysfs_is "$MDEV/$U1/gpuvirt/weight" 100 && sysfs_is "$MDEV/$U1/gpuvirt/min_pct" 10 &&
	sysfs_is "$MDEV/$U1/gpuvirt/max_pct" 100 &&
	sysfs_is "$MDEV/$U2/gpuvirt/weight" 200 && sysfs_is "$MDEV/$U2/gpuvirt/min_pct" 20 &&
	sysfs_is "$MDEV/$U2/gpuvirt/max_pct" 50 &&
	debugfs_is "$CORE/sim0/vgpus/$U2/sched" weight 200 &&
	sysfs_is "$TYPES0/gpuvirt_sim-H200-35C/available_instances" 1
ktap_result $? "the GPU, scheduler and vGPUs are in sysfs and debugfs"

# 4: and gpuvirtctl -j agrees
snapshot applied
python3 - "$T/applied.state" "$U1" "$U2" "$U3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
u1, u2, u3 = sys.argv[2:]
assert d["sched"] == [{"gpu": 0, "policy": "equal-share", "timeslice": 2000000}], d
want = [
    {"uuid": u1, "gpu": 0, "type": "H200-35C", "weight": 100, "min": 10, "max": 100},
    {"uuid": u2, "gpu": 0, "type": "H200-35C", "weight": 200, "min": 20, "max": 50},
    {"uuid": u3, "gpu": 0, "type": "H200-35C", "weight": 100, "min": 0, "max": 100},
]
assert d["vgpu"] == want, d["vgpu"]
PY
ktap_result $? "gpuvirtctl -j vgpu show and sched show match the file"

# 5: again: nothing to do, nothing changes
run apply -f "$T/base.yaml"
ok=$rc
snapshot again
[ $ok -eq 0 ] && lines_are "$T/out" "nothing to do" && [ ! -s "$T/err" ] &&
	same_state applied again
ktap_result $? "apply again: \"nothing to do\", exit 0, no change"

# 6: the same in JSON: an empty plan
run -j apply -f "$T/base.yaml"
[ $rc -eq 0 ] && lines_are "$T/out" '{"plan":[]}'
ktap_result $? "apply -j again: {\"plan\":[]}"

# 7: assert passes, quietly
run assert -f "$T/base.yaml"
[ $rc -eq 0 ] && [ ! -s "$T/out" ] && [ ! -s "$T/err" ]
ktap_result $? "assert: the system matches, exit 0"

# --- dry run --------------------------------------------------------------------

sed -e 's/policy: equal-share/policy: weighted/' -e 's/weight: 200/weight: 250/' \
	"$T/base.yaml" >"$T/changed.yaml"
cat >>"$T/changed.yaml" <<EOF
      - uuid: $U4
        type: H200-35C
EOF

# 8: text
run apply -f "$T/changed.yaml" --dry-run
ok=$rc
snapshot dry
[ $ok -eq 0 ] && lines_are "$T/out" \
	"~ sched gpu 0 policy equal-share -> weighted" \
	"~ vgpu $U2 weight 200 -> 250" \
	"+ vgpu $U4 type H200-35C on gpu 0" &&
	same_state applied dry && [ ! -e "$MDEV/$U4" ]
ktap_result $? "apply --dry-run: prints the three changes, makes none"

# 9: JSON
run -j -p apply --dry-run -f "$T/changed.yaml"
[ $rc -eq 0 ] && python3 - "$T/out" "$U2" "$U4" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))["plan"]
u2, u4 = sys.argv[2:]
assert plan == [
    {"action": "change", "sched": {"gpu": 0, "policy": "weighted"},
     "old": {"policy": "equal-share"}},
    {"action": "change", "vgpu": {"uuid": u2, "weight": 250}, "old": {"weight": 200}},
    {"action": "add", "vgpu": {"uuid": u4, "type": "H200-35C", "gpu": 0}},
], plan
PY
ktap_result $? "apply -j --dry-run: the same plan as JSON"

# --- assert -------------------------------------------------------------------------

# 10: a change behind apply's back
echo 777 >"$MDEV/$U1/gpuvirt/weight"
run assert -f "$T/base.yaml"
[ $rc -eq 1 ] && lines_are "$T/out" "~ vgpu $U1 weight 777 -> 100" &&
	has "$T/err" "the system differs from $T/base.yaml in 1 place"
ktap_result $? "assert after a sysfs write: exit 1, names the weight"

# 11: apply puts it back
run apply -f "$T/base.yaml"
[ $rc -eq 0 ] && lines_are "$T/out" "~ vgpu $U1 weight 777 -> 100" &&
	sysfs_is "$MDEV/$U1/gpuvirt/weight" 100 &&
	run assert -f "$T/base.yaml" && [ $rc -eq 0 ]
ktap_result $? "apply restores the weight; assert passes again"

# --- undo on failure -----------------------------------------------------------------

# 12: a fifth H200-35C does not fit (max 4): everything before it is undone
sed -e 's/policy: equal-share/policy: fixed-share/' -e 's/weight: 100/weight: 150/' \
	"$T/base.yaml" >"$T/full.yaml"
cat >>"$T/full.yaml" <<EOF
      - uuid: $U4
        type: H200-35C
      - uuid: $U5
        type: H200-35C
EOF
run apply -f "$T/full.yaml"
ok=$rc
snapshot full
[ $ok -eq 1 ] && lines_are "$T/out" \
	"~ sched gpu 0 policy equal-share -> fixed-share" \
	"~ vgpu $U1 weight 100 -> 150" \
	"+ vgpu $U4 type H200-35C on gpu 0" \
	"+ vgpu $U5 type H200-35C on gpu 0" &&
	has "$T/err" "cannot create vGPU $U5 of type H200-35C on GPU 0: no room left on the GPU" &&
	has "$T/err" "step 4 of 4 failed (+ vgpu $U5 type H200-35C on gpu 0); undoing the 3 done before it" &&
	has "$T/err" "nothing was changed" &&
	same_state applied full && vgpus_are "$U1" "$U2" "$U3" &&
	sysfs_is "$GPU0/sched_policy" equal-share &&
	sysfs_is "$TYPES0/gpuvirt_sim-H200-35C/available_instances" 1
ktap_result $? "a vGPU that does not fit: exit 1, names it, the state is as before"

# 13: the kernel refuses a setting: its message, and the undo
cat >"$T/min.yaml" <<EOF
gpus:
  - id: 0
    sched: {policy: weighted}
    vgpus:
      - {uuid: $U4, type: H200-35C, min-pct: 90}
EOF
run apply -f "$T/min.yaml"
ok=$rc
snapshot min
[ $ok -eq 1 ] &&
	has "$T/err" "No space left on device: the minimums of the GPU's vGPUs would add up past 100% (attribute \"min-pct\"" &&
	has "$T/err" "removed the new vGPU $U4 again" &&
	has "$T/err" "step 2 of 2 failed (+ vgpu $U4 type H200-35C on gpu 0)" &&
	has "$T/err" "nothing was changed" &&
	same_state applied min && [ ! -e "$MDEV/$U4" ]
ktap_result $? "a minimum the kernel refuses: its extack message, undone"

# 14: a new GPU whose vGPU cannot be made: the GPU goes again
cat >"$T/newgpu.yaml" <<EOF
simulated-gpus:
  - {id: 4, model: a100-40gb}
gpus:
  - id: 4
    sched: {policy: weighted}
    vgpus:
      - {uuid: $U8, type: A100-99C}
EOF
run apply -f "$T/newgpu.yaml"
ok=$rc
snapshot newgpu
[ $ok -eq 1 ] && has "$T/out" "+ simulated-gpu 4 model a100-40gb" &&
	has "$T/err" "has no mdev type \"A100-99C\"" &&
	has "$T/err" "step 3 of 3 failed" && has "$T/err" "nothing was changed" &&
	[ ! -e "$BUS/devices/sim4" ] && same_state applied newgpu &&
	run gpu show id 4 && [ $rc -eq 1 ]
ktap_result $? "a new GPU's vGPU fails: the new GPU is deleted again"

# --- conflicts and bad files change nothing ---------------------------------------------

# 15: an unknown key, with its line
{ cat "$T/base.yaml"; printf 'mig-layout:\n  - gpu: 0\n'; } >"$T/later.yaml"
sed -i 's/weight: 200/weight: 222/' "$T/later.yaml"
run apply -f "$T/later.yaml"
ok=$rc
snapshot later
[ $ok -eq 2 ] && [ ! -s "$T/out" ] &&
	has "$T/err" "gpuvirtctl: apply: $T/later.yaml:23:1: unknown key \"mig-layout\" in the file (expected simulated-gpus, gpus, passthrough)" &&
	same_state applied later
ktap_result $? "an unknown key: exit 2 with file, line and column; nothing changed"

# 16: what the plan cannot do: a vGPU of another type, a model, a GPU
cat >"$T/conflict.yaml" <<EOF
simulated-gpus:
  - {id: 0, model: a100-40gb}
gpus:
  - id: 0
    sched: {policy: weighted}
    vgpus:
      - {uuid: $U1, type: H200-17C}
  - id: 9
EOF
run apply -f "$T/conflict.yaml"
ok=$rc
snapshot conflict
[ $ok -eq 1 ] && [ ! -s "$T/out" ] &&
	has "$T/err" "$T/conflict.yaml:2: simulated GPU 0 exists with model h200-141gb, not a100-40gb" &&
	has "$T/err" "$T/conflict.yaml:7: vGPU $U1 exists with type H200-35C, not H200-17C" &&
	has "$T/err" "$T/conflict.yaml:8: GPU 9 does not exist" &&
	same_state applied conflict
ok=$?
run assert -f "$T/conflict.yaml"
[ $ok -eq 0 ] && [ $rc -eq 1 ] &&
	has "$T/out" "~ sched gpu 0 policy equal-share -> weighted" &&
	has "$T/out" "! $T/conflict.yaml:8: GPU 9 does not exist" &&
	has "$T/err" "differs from $T/conflict.yaml in 4 places"
ktap_result $? "conflicts: apply refuses them all and changes nothing; assert lists them"

# --- prune ------------------------------------------------------------------------------

cat >"$T/two.yaml" <<EOF
gpus:
  - id: 0
    vgpus:
      - {uuid: $U1, type: H200-35C}
      - {uuid: $U2, type: H200-35C}
EOF

# 17: without --prune an unlisted vGPU stays
run apply -f "$T/two.yaml"
[ $rc -eq 0 ] && lines_are "$T/out" "nothing to do" && vgpus_are "$U1" "$U2" "$U3"
ok=$?
run apply -f "$T/two.yaml" --prune --dry-run
[ $ok -eq 0 ] && [ $rc -eq 0 ] && lines_are "$T/out" "- vgpu $U3 type H200-35C on gpu 0" &&
	vgpus_are "$U1" "$U2" "$U3"
ktap_result $? "without --prune nothing is removed; --prune --dry-run shows the removal"

# 18: a removal is undone too: the vGPU comes back with its settings
cat >"$T/prune-fail.yaml" <<EOF
gpus:
  - id: 0
    vgpus:
      - {uuid: $U1, type: H200-35C}
      - {uuid: $U2, type: H200-35C}
      - {uuid: $U4, type: H200-35C, min-pct: 80}
EOF
echo 333 >"$MDEV/$U3/gpuvirt/weight" && echo 40 >"$MDEV/$U3/gpuvirt/max_pct"
run apply -f "$T/prune-fail.yaml" --prune
[ $rc -eq 1 ] && lines_are "$T/out" \
	"- vgpu $U3 type H200-35C on gpu 0" \
	"+ vgpu $U4 type H200-35C on gpu 0 min-pct 80" &&
	has "$T/err" "would add up past 100%" && has "$T/err" "nothing was changed" &&
	vgpus_are "$U1" "$U2" "$U3" && sysfs_is "$MDEV/$U3/gpuvirt/weight" 333 &&
	sysfs_is "$MDEV/$U3/gpuvirt/max_pct" 40 && sysfs_is "$MDEV/$U3/gpuvirt/min_pct" 0
ok=$?
echo 100 >"$MDEV/$U3/gpuvirt/weight" && echo 100 >"$MDEV/$U3/gpuvirt/max_pct"
snapshot unpruned
[ $ok -eq 0 ] && same_state applied unpruned
ktap_result $? "a failed --prune apply makes the removed vGPU again, with its settings"

# 19: --prune removes it
run apply -f "$T/two.yaml" --prune
[ $rc -eq 0 ] && lines_are "$T/out" "- vgpu $U3 type H200-35C on gpu 0" &&
	vgpus_are "$U1" "$U2" && sysfs_is "$MDEV/$U1/gpuvirt/weight" 100 &&
	sysfs_is "$TYPES0/gpuvirt_sim-H200-35C/available_instances" 2
ktap_result $? "apply --prune removes the unlisted vGPU, keeps the others"

# 20: assert names the missing vGPU; apply brings it back
run assert -f "$T/base.yaml"
[ $rc -eq 1 ] && lines_are "$T/out" "+ vgpu $U3 type H200-35C on gpu 0"
ok=$?
run apply -f "$T/base.yaml"
snapshot back
[ $ok -eq 0 ] && [ $rc -eq 0 ] && same_state applied back
ktap_result $? "assert: a missing vGPU is a difference; apply makes it again"

# --- a second GPU in mixed mode, from JSON ------------------------------------------------

# 21: a new A100 switched to mixed mode, with two sizes of vGPU
cat >"$T/mixed.json" <<EOF
{"simulated-gpus": [{"id": 2, "model": "a100-40gb"}],
 "gpus": [{"id": 2, "vgpu-mode": "mixed",
           "vgpus": [{"uuid": "$U6", "type": "A100-20C", "weight": 300},
                     {"uuid": "$U7", "type": "A100-10C"}]}]}
EOF
run apply -f "$T/mixed.json"
[ $rc -eq 0 ] && lines_are "$T/out" \
	"+ simulated-gpu 2 model a100-40gb" \
	"~ gpu 2 vgpu-mode homogeneous -> mixed" \
	"+ vgpu $U6 type A100-20C on gpu 2 weight 300" \
	"+ vgpu $U7 type A100-10C on gpu 2" &&
	sysfs_is "$BUS/devices/sim2/gpu/gpuvirt/vgpu_mode" mixed &&
	sysfs_is "$MDEV/$U6/gpuvirt/weight" 300 && [ -e "$MDEV/$U7" ] &&
	run assert -f "$T/mixed.json" && [ $rc -eq 0 ] &&
	run assert -f "$T/base.yaml" && [ $rc -eq 0 ]
ktap_result $? "a JSON file: new GPU in mixed mode with two types; both files assert"

# 22: --prune only touches the GPUs the file lists
run apply -f "$T/two.yaml" --prune --dry-run
[ $rc -eq 0 ] && lines_are "$T/out" "- vgpu $U3 type H200-35C on gpu 0"
ktap_result $? "--prune leaves the vGPUs of GPUs the file does not list"

# 23: usage
run apply
[ $rc -eq 2 ] && has "$T/err" 'missing argument "-f"'
ok=$?
run assert -f "$T/nonexistent.yaml"
[ $ok -eq 0 ] && [ $rc -eq 2 ] && has "$T/err" "cannot read $T/nonexistent.yaml: No such file or directory"
ok=$?
run help
[ $ok -eq 0 ] && has "$T/out" "gpuvirtctl apply -f FILE [ --dry-run ] [ --prune ]"
ktap_result $? "no -f, a missing file: usage errors; help shows apply"

# 24: the example of the documentation, on fresh modules
vmt_remove_mdevs
rmmod gpuvirt_sim gpuvirt && vmt_load gpuvirt gpuvirt_sim
ok=$?
run apply -f Documentation/examples/gpuvirt.yaml
[ $ok -eq 0 ] && [ $rc -eq 0 ] && [ ! -s "$T/err" ] &&
	has "$T/out" "~ gpu 1 vgpu-mode homogeneous -> mixed" &&
	vgpus_are 5a3c0001-0000-4000-8000-00000000000{1,2,3} 5a3c0001-0000-4000-8000-0000000000{11,12,21} &&
	[ -e /sys/class/mdev_bus/sim2-gi0/mdev_supported_types/gpuvirt_gi-H200-3-71C/devices/5a3c0001-0000-4000-8000-000000000021 ] &&
	sysfs_is "$BUS/devices/sim1/gpu/gpuvirt/sched_policy" weighted &&
	sysfs_is /sys/bus/pci/devices/8003:00:00.0/gpuvirt/vgpu_model sriov &&
	sysfs_is /sys/bus/pci/devices/8003:00:00.0/sriov_numvfs 4 &&
	sysfs_is /sys/bus/pci/devices/8003:00:00.1/gpuvirt/weight 300 &&
	sysfs_is /sys/bus/pci/devices/8003:00:00.3/gpuvirt/current_vgpu_type 0 &&
	"$CTL" -j vgpu show gpu 3 >"$T/v3" &&
	python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))["vgpu"]; sys.exit(sorted(x["vf"] for x in v) != ["8003:00:00.1", "8003:00:00.2"])' "$T/v3" &&
	run assert -f Documentation/examples/gpuvirt.yaml && [ $rc -eq 0 ]
ktap_result $? "Documentation/examples/gpuvirt.yaml applies on fresh modules and asserts"

ktap_finish
