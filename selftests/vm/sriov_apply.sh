#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The sriov vGPU model through the declarative file and the matching verbs:
# "gpuvirtctl apply" makes a simulated GPU, switches it to sriov, enables
# its VFs and types two of them with their scheduling parameters; the
# result is checked in sysfs, netlink (gpuvirtctl -j), the core's debugfs
# and what the simulated GPU was provisioned with (debugfs sim0/vfs).
# Applying again does nothing; assert sees a VF cleared behind its back and
# apply gives it a type again (a new UUID, the kernel's); a file that fails
# part-way is undone; conflicts change nothing; --prune clears what the
# file leaves out but never a VF in use; leaving the model disables the VFs
# first. Then "gpu set", "vgpu add ... vf" and "vgpu del vf". KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir
RUN_LOGS_OUT=1

PF=/sys/bus/pci/devices/8000:00:00.0
SIM=/sys/kernel/debug/gpuvirt_sim/sim0
CORE=/sys/kernel/debug/gpuvirt/gpus/sim0
VF1=8000:00:00.1 VF2=8000:00:00.2 VF3=8000:00:00.3
LPID=

vmt_start_clean gpuvirt_sim gpuvirt
vmt_on_exit vmt_reap LPID
vmt_need_ctl
vmt_need_modules gpuvirt

# is FILE VALUE: the sysfs or debugfs file reads VALUE
is() {
	[ "$(cat "$1" 2>/dev/null)" = "$2" ] ||
		{ ktap_diag "$1 is \"$(cat "$1" 2>&1)\", not \"$2\""; return 1; }
}
vf() { echo "/sys/bus/pci/devices/$1/gpuvirt/$2"; }
type_id() {	# the id VF $1 lists for type $2 in creatable_vgpu_types
	awk -v t="$2" '$1 ~ /^[0-9]+$/ && $3 == t { print $1 }' "$(vf "$1" creatable_vgpu_types)"
}
uuid_of() { cat "$(vf "$1" vgpu_uuid)"; }
# vgpus_json: every vGPU, by VF, as gpuvirtctl -j reports it, into $T/v
vgpus_json() {
	"$CTL" -j vgpu show gpu 0 >"$T/v"
}
json() {	# json FILE PYTHON-EXPR-ON-d
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" ||
		{ ktap_diag "$1 fails: $2" "$(cat "$1")"; return 1; }
}
# state: what apply may change, for before/after comparisons (not the
# vGPUs' counters, which a client's work moves)
state() {
	local f
	echo "model $(cat $PF/gpuvirt/vgpu_model) vfs $(cat $PF/sriov_numvfs)"
	for f in $PF/virtfn*; do
		[ -e "$f" ] && echo "${f##*/} $(cat "$f/gpuvirt/current_vgpu_type") $(cat "$f/gpuvirt/vgpu_uuid")"
	done
	"$CTL" -j vgpu show gpu 0 2>&1 | python3 -c '
import json, sys
for v in json.load(sys.stdin)["vgpu"]:
    print(*(v.get(k) for k in ("uuid", "vf", "type", "weight", "min", "max")))'
}

ktap_plan 15

vmt_load gpuvirt gpuvirt_sim
ktap_result $? "modules loaded"

cat >"$T/base.yaml" <<EOF
simulated-gpus:
  - {id: 0, model: h200-141gb}
gpus:
  - id: 0
    vgpu-model: sriov
    vfs: 4
    sched: {policy: weighted}
    vgpus:
      - {vf: "$VF1", type: H200-35C, weight: 300}
      - {vf: "$VF2", type: H200-35C, min-pct: 20, max-pct: 60}
EOF

# 2: the plan of a new GPU in the sriov model, in order
run apply -f "$T/base.yaml"
[ $rc -eq 0 ] && [ ! -s "$T/err" ] &&
	[ "$(sed -n 2p "$T/out")" = "~ gpu 0 vgpu-model mdev -> sriov" ] &&
	[ "$(sed -n 3p "$T/out")" = "~ gpu 0 vfs 0 -> 4" ] &&
	has "$T/out" "+ vgpu vf $VF1 type H200-35C on gpu 0 weight 300" &&
	has "$T/out" "+ vgpu vf $VF2 type H200-35C on gpu 0 min-pct 20 max-pct 60"
ktap_result $? "apply: GPU, vgpu-model, vfs, scheduler and two VF vGPUs, in that order"

# 3: what sysfs, netlink, the core and the simulated GPU say
id35=$(type_id $VF3 H200-35C)
is $PF/gpuvirt/vgpu_model sriov && is $PF/sriov_numvfs 4 &&
	is "$(vf $VF1 current_vgpu_type)" "$id35" && is "$(vf $VF2 current_vgpu_type)" "$id35" &&
	is "$(vf $VF3 current_vgpu_type)" 0 &&
	vgpus_json && json "$T/v" 'sorted((v["vf"], v["type"], v["weight"], v["min"], v["max"]) for v in d["vgpu"]) == [("8000:00:00.1", "H200-35C", 300, 0, 100), ("8000:00:00.2", "H200-35C", 100, 20, 60)]' &&
	grep -q "^weight: 300$" "$CORE/vgpus/$(uuid_of $VF1)/sched" &&
	grep -q "^vf 0: type H200-35C " $SIM/vfs && grep -q "^vf 1: type H200-35C " $SIM/vfs &&
	! grep -q "^vf 2: type" $SIM/vfs && grep -q "provisions: 2" $SIM/vfs &&
	"$CTL" stats --prometheus >"$T/prom" &&
	has "$T/prom" "gpuvirt_vgpu_weight{gpu=\"0\",uuid=\"$(uuid_of $VF1)\",type=\"H200-35C\",vf=\"$VF1\"} 300"
ktap_result $? "sysfs, gpuvirtctl -j and stats, core and sim debugfs: VFs 1 and 2 typed with their settings, VF 3 free"

# 4: again: nothing to do, and assert agrees
U2=$(uuid_of $VF2)
run apply -f "$T/base.yaml"
ok=$rc
grep -qx "nothing to do" "$T/out"
ok2=$?
run assert -f "$T/base.yaml"
[ $ok -eq 0 ] && [ $ok2 -eq 0 ] && [ $rc -eq 0 ] && [ "$(uuid_of $VF2)" = "$U2" ]
ktap_result $? "apply again: nothing to do; assert exit 0; VF 2 keeps its vGPU"

# 5: --dry-run of a changed weight prints it by VF and changes nothing
sed "s/weight: 300/weight: 500/" "$T/base.yaml" >"$T/w500.yaml"
state >"$T/s0"
run apply -f "$T/w500.yaml" --dry-run
state >"$T/s1"
[ $rc -eq 0 ] && has "$T/out" "~ vgpu vf $VF1 weight 300 -> 500" && cmp -s "$T/s0" "$T/s1"
ktap_result $? "apply --dry-run: \"~ vgpu vf $VF1 weight 300 -> 500\", nothing changed"

# 6: a VF cleared behind apply's back: assert sees it, apply types it again
run vgpu del vf $VF2
ok=$rc
run assert -f "$T/base.yaml"
ok2=$rc
has "$T/out" "+ vgpu vf $VF2 type H200-35C on gpu 0 min-pct 20 max-pct 60"
ok3=$?
run apply -f "$T/base.yaml"
[ $ok -eq 0 ] && [ $ok2 -ne 0 ] && [ $ok3 -eq 0 ] && [ $rc -eq 0 ] &&
	is "$(vf $VF2 current_vgpu_type)" "$id35" && [ "$(uuid_of $VF2)" != "$U2" ] &&
	grep -q "^min_ppm: 200000$" "$CORE/vgpus/$(uuid_of $VF2)/sched" &&
	grep -q "releases: 1" $SIM/vfs
ktap_result $? "vgpu del vf; assert reports it missing; apply gives VF 2 its type again (new UUID, min 20)"

# 7: a file failing part-way is undone: VF 3 cannot take the whole GPU
cat "$T/w500.yaml" - >"$T/fail.yaml" <<EOF
      - {vf: "$VF3", type: H200-141C}
EOF
state >"$T/s0"
run apply -f "$T/fail.yaml"
state >"$T/s1"
[ $rc -ne 0 ] && has "$T/err" "cannot give VF $VF3 of GPU 0 (8000:00:00.0) the type H200-141C" &&
	has "$T/err" "nothing was changed" && cmp -s "$T/s0" "$T/s1" &&
	grep -q "^weight: 300$" "$CORE/vgpus/$(uuid_of $VF1)/sched"
ktap_result $? "a VF type that does not fit: the weight set before it is undone, state as before"

# 8: conflicts refuse the file before anything changes
cat >"$T/conflict.yaml" <<EOF
gpus:
  - id: 0
    vgpus:
      - {uuid: 5a3c0001-0000-4000-8000-000000000001, type: H200-35C}
      - {vf: "8000:00:00.7", type: H200-35C}
      - {vf: "$VF1", type: H200-18C}
  - {id: 1, vgpu-model: sriov}
EOF
state >"$T/s0"
run apply -f "$T/conflict.yaml"
state >"$T/s1"
[ $rc -ne 0 ] && cmp -s "$T/s0" "$T/s1" &&
	has "$T/err" "GPU 0 has the sriov vGPU model, whose vGPUs are VFs listed by \"vf\"" &&
	has "$T/err" "8000:00:00.7 is not one of the 4 VFs GPU 0 (8000:00:00.0) will have (set \"vfs\")" &&
	has "$T/err" "VF $VF1 has a vGPU of type H200-35C, not H200-18C; clear it first" &&
	has "$T/err" "GPU 1 does not exist"
ktap_result $? "conflicts (a UUID in sriov, a VF the GPU lacks, a VF of another type, a missing GPU): nothing changed"

# 9: the VF count does not change under VF vGPUs
sed "s/vfs: 4/vfs: 6/" "$T/base.yaml" >"$T/vfs6.yaml"
run apply -f "$T/vfs6.yaml"
[ $rc -ne 0 ] && has "$T/err" "GPU 0 has 4 VFs, not 6: the kernel changes the count only through 0, which ends every VF, and 2 of them keep a vGPU" &&
	is $PF/sriov_numvfs 4
ktap_result $? "vfs 4 -> 6 with two typed VFs: refused, 4 VFs kept"

# 10: --prune never takes a VF from its user: the whole file is undone
cat >"$T/one.yaml" <<EOF
gpus:
  - id: 0
    vgpus:
      - {vf: "$VF1", type: H200-35C, weight: 300}
EOF
"$VMBIN/vgpu_load" $VF2 --seconds 0 --quiet &
LPID=$!
for _ in $(seq 50); do
	vgpus_json && json "$T/v" 'any(v.get("open") for v in d["vgpu"])' >/dev/null 2>&1 && break
	sleep 0.2
done
state >"$T/s0"
run apply -f "$T/one.yaml" --prune
state >"$T/s1"
kill $LPID
wait $LPID 2>/dev/null
LPID=
[ $rc -ne 0 ] && has "$T/err" "cannot remove vGPU $VF2" && has "$T/err" "the VF is open" &&
	cmp -s "$T/s0" "$T/s1" && is "$(vf $VF2 current_vgpu_type)" "$id35"
ktap_result $? "apply --prune while VF 2 is open: refused by the kernel, nothing changed"

# 11: closed, --prune clears VF 2 and leaves the VF count alone
run apply -f "$T/one.yaml" --prune
[ $rc -eq 0 ] && has "$T/out" "- vgpu vf $VF2 type H200-35C on gpu 0" &&
	is "$(vf $VF2 current_vgpu_type)" 0 && is "$(vf $VF1 current_vgpu_type)" "$id35" &&
	is $PF/sriov_numvfs 4 && vgpus_json && json "$T/v" 'len(d["vgpu"]) == 1'
ktap_result $? "apply --prune: VF 2's type cleared, VF 1 and the 4 VFs kept"

# 12: leaving the model: the vGPU goes, then the VFs, then the model
cat >"$T/mdev.yaml" <<EOF
gpus:
  - {id: 0, vgpu-model: mdev}
EOF
run apply -f "$T/mdev.yaml" --prune
[ $rc -eq 0 ] && [ "$(sed -n 1p "$T/out")" = "- vgpu vf $VF1 type H200-35C on gpu 0" ] &&
	[ "$(sed -n 2p "$T/out")" = "~ gpu 0 vfs 4 -> 0" ] &&
	[ "$(sed -n 3p "$T/out")" = "~ gpu 0 vgpu-model sriov -> mdev" ] &&
	is $PF/gpuvirt/vgpu_model mdev && is $PF/sriov_numvfs 0 && [ ! -e $PF/virtfn0 ]
ktap_result $? "apply --prune of vgpu-model mdev: VF vGPU cleared, VFs disabled, model mdev"

# 13: gpu set, as the file does it by hand
run gpu set id 0 vgpu-model sriov vfs 2
ok=$rc
run -j gpu show id 0
[ $ok -eq 0 ] && json "$T/out" 'd["gpu"][0]["vgpu-model"] == "sriov" and d["gpu"][0]["vfs"] == 2' &&
	is $PF/sriov_numvfs 2 && run gpu set id 0 vfs 3 && [ $rc -eq 0 ] && is $PF/sriov_numvfs 3
ktap_result $? "gpu set id 0 vgpu-model sriov vfs 2, then vfs 3 (through 0): sysfs and netlink agree"

# 14: vgpu add ... vf picks that VF; vgpu del vf clears it
run vgpu add gpu 0 type H200-35C vf $VF2 weight 250
ok=$rc
is "$(vf $VF2 current_vgpu_type)" "$id35" && is "$(vf $VF1 current_vgpu_type)" 0 &&
	grep -q "^weight: 250$" "$CORE/vgpus/$(uuid_of $VF2)/sched"
ok2=$?
run -j vgpu show vf $VF2
[ $rc -eq 0 ] && json "$T/out" 'd["vgpu"][0]["vf"] == "8000:00:00.2" and d["vgpu"][0]["weight"] == 250' &&
	run vgpu show vf $VF1 && [ $rc -ne 0 ] && has "$T/err" "no vGPU on VF $VF1"
ok5=$?
run gpu set id 0 vfs 1
ok3=$rc
has "$T/err" "a VF has a vGPU"
ok4=$?
run vgpu del vf $VF2
[ $ok -eq 0 ] && [ $ok2 -eq 0 ] && [ $ok3 -ne 0 ] && [ $ok4 -eq 0 ] && [ $ok5 -eq 0 ] && [ $rc -eq 0 ] &&
	is "$(vf $VF2 current_vgpu_type)" 0 && is $PF/sriov_numvfs 3
ktap_result $? "vgpu add gpu 0 ... vf $VF2 weight 250; vgpu show vf; gpu set vfs refused while typed; vgpu del vf"

# 15: the verbs' refusals name what is wrong
run vgpu add gpu 0 type H200-35C vf 8000:00:00.7
ok=$rc
has "$T/err" "there is no such VF"
ok2=$?
run gpu set id 0 vgpu-model mdev vfs 0
ok3=$rc
run vgpu add gpu 0 type H200-35C vf $VF1
[ $ok -ne 0 ] && [ $ok2 -eq 0 ] && [ $ok3 -eq 0 ] && [ $rc -eq 2 ] &&
	has "$T/err" "GPU 0 has the mdev vGPU model, whose vGPUs are no VFs" &&
	is $PF/gpuvirt/vgpu_model mdev && is $PF/sriov_numvfs 0
ktap_result $? "vgpu add on a missing VF and on an mdev GPU refused, naming why; gpu set back to mdev"

ktap_finish
