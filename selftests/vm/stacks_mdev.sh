#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# gpuvirtctl on another vendor's mdev driver next to gpuvirt's own GPUs, in
# the test VM: the kernel's mdev samples mtty (and mdpy and mbochs, when
# they built), from the linux-source package of the running kernel
# (scripts/mdev-samples.sh, "make mdev-samples KVER=..."), stand in for it.
# "gpu show", "type show", "vgpu show|add|del" list and change them as
# sysfs shows, with the stack named; what only gpuvirt offers is refused
# naming the stack; a vGPU whose VFIO group is held open is not removed;
# one configuration file with a simulated GPU's vGPU and mtty's is applied,
# applied again with nothing to do, asserted and pruned; a vendor refusal
# part-way (mtty out of ports) shows the errno and the file and undoes every
# stack's steps in reverse.
#
# Runs as root in the test VM (selftests/vm-run.sh). Prints KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

SAMPLES=$KO/mdev-samples
MT=/sys/class/mdev_bus/mtty/mdev_supported_types
U1=7d2f0001-0000-4000-8000-000000000001
U2=7d2f0001-0000-4000-8000-000000000002
U3=7d2f0001-0000-4000-8000-000000000003
US=7d2f0001-0000-4000-8000-0000000000f0

cleanup() {
	exec 7>&- 2>/dev/null
	vmt_remove_mdevs
	vmt_unload mbochs mdpy mtty gpuvirt_sim gpuvirt
}
vmt_on_exit cleanup

vmt_need_ctl
vmt_need_modules gpuvirt mtty
vmt_unload gpuvirt_sim gpuvirt

is() {
	local txt=
	IFS= read -r -d '' txt <"$1"
	[ "$txt" = "$2" ] || {
		echo "# $1 is \"$txt\", not \"$2\""
		return 1
	}
}
file() {
	cat >"$T/$1.yaml"
}
# mdevs: the mdev devices there are, sorted, on one line
mdevs() {
	local d out=
	for d in "$MDEV"/*; do
		[ -e "$d" ] && out+="${d##*/} "
	done
	echo "$out"
}

ktap_plan 16

# 1: mtty alone, before gpuvirt: listed, gpuvirt's absence said on stderr
vmt_load mtty && run gpu show &&
	[ $rc -eq 0 ] && has "$T/err" "gpuvirt netlink family is not available" &&
	is "$T/out" "stack mdev dev mtty types 2 vgpus 0
"
ktap_result $? "without gpuvirt: gpu show lists mtty, exit 0, and says the family is missing"

# 2
vmt_load gpuvirt gpuvirt_sim && echo "0 h200-141gb" >$BUS/new_device
ktap_result $? "gpuvirt and gpuvirt_sim (sim0) load next to mtty"
EXTRA=
for m in mdpy mbochs; do
	if [ -e "$SAMPLES/$m.ko" ] && insmod "$SAMPLES/$m.ko" 2>"$T/err"; then
		EXTRA+=" $m"
	else
		ktap_diag "$m: not built or not loaded: $(cat "$T/err" 2>/dev/null)"
	fi
done
ktap_diag "mdev samples loaded: mtty$EXTRA"

# 3: every stack in one list; the other parents as sysfs shows them
run -j gpu show
cp "$T/out" "$T/gpus.json"
[ $rc -eq 0 ] && python3 - "$T/gpus.json" mtty $EXTRA <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))["gpu"]
ours = [g for g in d if g["stack"] == "gpuvirt"]
assert [g["name"] for g in ours] == ["sim0"], d
others = {g["dev"]: g for g in d if g["stack"] == "mdev"}
assert sorted(others) == sorted(sys.argv[2:]), (others, sys.argv[2:])
for name, g in others.items():
    n = len(os.listdir(f"/sys/class/mdev_bus/{name}/mdev_supported_types"))
    assert g["types"] == n and g["vgpus"] == 0, (g, n)
    assert "id" not in g and "pf" not in g, g
assert len(d) == 1 + len(others), d
PY
ktap_result $? "gpu show -j: sim0 (gpuvirt) and each mdev sample (mdev), types counted as in sysfs"

# 4: types of mtty as sysfs has them; ours keep their stack
run -j type show
[ $rc -eq 0 ] && python3 - "$T/out" "$MT" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))["type"]
mt = sys.argv[2]
m = [t for t in d if t["stack"] == "mdev" and t["dev"] == "mtty"]
assert [t["id"] for t in m] == ["mtty-1", "mtty-2"], m
for t in m:
    f = lambda n: open(f"{mt}/{t['id']}/{n}").read().strip()
    assert t["name"] == f("name") and t["device-api"] == f("device_api"), t
    assert t["available-instances"] == int(f("available_instances")), t
assert m[0]["name"] == "Single port serial" and m[0]["available-instances"] == 24, m
assert all(t["stack"] == "gpuvirt" for t in d if "gpu" in t), d
assert any(t.get("name") == "H200-35C" and t["stack"] == "gpuvirt" for t in d), d
PY
ktap_result $? "type show -j: mtty-1 and mtty-2 as in sysfs, next to gpuvirt's types"

# 5: names as admins write them; an ambiguous one lists both
run type show dev mtty name 2
is "$T/out" "stack mdev dev mtty type mtty-2 available 12 api vfio-pci name \"Dual port serial\"
" && run type show dev mtty name serial && [ $rc -eq 1 ] &&
	has "$T/err" 'type "serial" is ambiguous on mtty (mdev); the types: "Single port serial" (mtty-1), "Dual port serial" (mtty-2)'
ktap_result $? "type show name: \"2\" finds mtty-2; \"serial\" is ambiguous and both are named"

# 6: add on mtty, as sysfs shows it
run vgpu add dev mtty type "Dual port serial" uuid $U1
[ $rc -eq 0 ] && is "$T/out" "vgpu $U1 stack mdev dev mtty type-id mtty-2 open false type \"Dual port serial\"
" && [ -d "$MDEV/$U1" ] && [ "$(readlink -f "$MDEV/$U1/mdev_type")" = "$(readlink -f "$MT/mtty-2")" ] &&
	sysfs_is "$MT/mtty-1/available_instances" 22
ktap_result $? "vgpu add dev mtty: the mdev device exists with type mtty-2, two ports taken"

# 7
run -j vgpu show uuid $U1
[ $rc -eq 0 ] && is "$T/out" "{\"vgpu\":[{\"uuid\":\"$U1\",\"stack\":\"mdev\",\"dev\":\"mtty\",\"type-id\":\"mtty-2\",\"open\":false,\"type\":\"Dual port serial\"}]}
"
ktap_result $? "vgpu show -j uuid: the mtty vGPU with its stack"

# 8: what only gpuvirt offers is refused, nothing made
before=$(mdevs)
run vgpu add dev mtty type mtty-1 weight 5
[ $rc -eq 2 ] && has "$T/err" '"weight" is not offered by this stack (mdev)' &&
	run vgpu add dev mtty type mtty-1 gi 0 && [ $rc -eq 2 ] &&
	has "$T/err" '"gi" is not offered by this stack (mdev)' &&
	run vgpu add dev mtty type mtty-3 && [ $rc -eq 1 ] &&
	has "$T/err" 'no type "mtty-3" on mtty (mdev); the types: "Single port serial" (mtty-1), "Dual port serial" (mtty-2)' &&
	[ "$(mdevs)" = "$before" ]
ktap_result $? "vgpu add: weight, gi and an unknown type refused, naming the stack or the types; nothing made"

# 9: one of ours, named as another stack's device: the refusal says so
run vgpu add dev sim0 type H200-35C
[ $rc -eq 1 ] && has "$T/err" '"sim0" is one of gpuvirt'"'"'s GPUs: name it by "gpu ID"' &&
	[ "$(mdevs)" = "$before" ]
ktap_result $? "vgpu add dev sim0: refused, naming gpuvirt's own GPU"

# 10: in use (its VFIO group open): not removed; then removed
grp=$(basename "$(readlink "$MDEV/$U1/iommu_group")")
exec 7<>"/dev/vfio/$grp"
run vgpu del uuid $U1
ok=$?
[ $rc -eq 1 ] && has "$T/err" "vGPU $U1 is in use" && [ -d "$MDEV/$U1" ]
ok=$?
exec 7>&-
run vgpu del uuid $U1
[ $ok -eq 0 ] && [ $rc -eq 0 ] && [ ! -e "$MDEV/$U1" ] &&
	sysfs_is "$MT/mtty-1/available_instances" 24
ktap_result $? "vgpu del: refused while /dev/vfio/$grp is held open; removed once closed"

# 11-13: one file for both stacks: apply, again (nothing), assert
file mixed <<EOF
gpus:
  - id: 0
    vgpus:
      - uuid: $US
        type: H200-35C
        weight: 200
  - device: mtty
    vgpus:
      - uuid: $U1
        type: mtty-2
      - uuid: $U2
        type: Single port serial
EOF
run apply -f "$T/mixed.yaml"
[ $rc -eq 0 ] && has "$T/out" "+ vgpu $US" &&
	has "$T/out" "+ vgpu $U1 type mtty-2 on device mtty stack mdev" &&
	has "$T/out" "+ vgpu $U2 type mtty-1 on device mtty stack mdev" &&
	[ -d "$MDEV/$US" ] && sysfs_is "$MDEV/$US/gpuvirt/weight" 200 &&
	[ "$(readlink -f "$MDEV/$U2/mdev_type")" = "$(readlink -f "$MT/mtty-1")" ] &&
	sysfs_is "$MT/mtty-1/available_instances" 21
ktap_result $? "apply of a mixed file: sim0's vGPU with its weight, and two mtty vGPUs"
run apply -f "$T/mixed.yaml"
[ $rc -eq 0 ] && is "$T/out" "nothing to do
"
ktap_result $? "apply again: nothing to do"
run assert -f "$T/mixed.yaml"
[ $rc -eq 0 ] && echo 1 >"$MDEV/$U2/remove" && run assert -f "$T/mixed.yaml" &&
	[ $rc -eq 1 ] && has "$T/out" "+ vgpu $U2 type mtty-1 on device mtty stack mdev" &&
	run apply -f "$T/mixed.yaml" && [ $rc -eq 0 ] && [ -d "$MDEV/$U2" ]
ktap_result $? "assert agrees; notices an mtty vGPU removed behind its back; apply mends it"

# 14: --prune removes the mtty vGPU the file leaves out, not ours
echo $U3 >"$MT/mtty-1/create"
run apply --prune -f "$T/mixed.yaml"
[ $rc -eq 0 ] && is "$T/out" "- vgpu $U3 type mtty-1 on device mtty stack mdev
" && [ ! -e "$MDEV/$U3" ] && [ -d "$MDEV/$U1" ] && [ -d "$MDEV/$U2" ] && [ -d "$MDEV/$US" ]
ktap_result $? "apply --prune: the unlisted mtty vGPU goes, the listed ones stay"

# 15: more dual-port vGPUs than mtty has room for: a conflict, nothing
# done. Then 12 of them (24 ports) and one single-port one after them: the
# plan counts each type's instances apart, mtty refuses the last create at
# run time (out of ports), and every stack's steps are undone in reverse.
for d in "$MDEV"/*; do
	[ -e "$d/remove" ] && echo 1 >"$d/remove"
done
# full N: a file with sim0's vGPU, N dual-port mtty vGPUs and one single
full() {
	local i
	echo "gpus:"
	echo "  - id: 0"
	echo "    vgpus:"
	echo "      - uuid: $US"
	echo "        type: H200-35C"
	echo "  - device: mtty"
	echo "    vgpus:"
	for i in $(seq 10 $((9 + $1))); do
		echo "      - uuid: 7d2f0001-0000-4000-8000-0000000000$i"
		echo "        type: mtty-2"
	done
	echo "      - uuid: $U3"
	echo "        type: mtty-1"
}
full 13 >"$T/full13.yaml"
run apply -f "$T/full13.yaml"
[ $rc -eq 1 ] && has "$T/err" "no room for vGPU 7d2f0001-0000-4000-8000-000000000022 of type Dual port serial on mtty" &&
	has "$T/err" "nothing was changed" && [ -z "$(mdevs)" ]
ok=$?
full 12 >"$T/full12.yaml"
run apply -f "$T/full12.yaml"
[ $ok -eq 0 ] && [ $rc -eq 1 ] &&
	has "$T/err" "step 14 of 14 failed (+ vgpu $U3 type mtty-1 on device mtty)" &&
	has "$T/err" "/sys/class/mdev_bus/mtty/mdev_supported_types/mtty-1/create failed: No space left on device (ENOSPC)" &&
	has "$T/err" "nothing was changed" && [ -z "$(mdevs)" ] &&
	sysfs_is "$MT/mtty-1/available_instances" 24
ktap_result $? "a vendor refusal at the last step: errno and file shown, both stacks undone in reverse"

# 16
for m in mbochs mdpy; do rmmod $m 2>/dev/null; done
rmmod mtty && rmmod gpuvirt_sim && rmmod gpuvirt
ktap_result $? "the modules unload"
