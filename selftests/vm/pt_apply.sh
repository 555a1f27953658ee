#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Passthrough in the declarative config, end to end in the test VM: "apply"
# assigns the lone display behind a root port (01:00.0) to gpuvirt_vfio_pci,
# a second apply does nothing and "assert" agrees; assert notices a member
# unbound or a udev rule removed behind its back, and apply mends them; a
# change of driver releases and assigns again; --prune releases what the
# file leaves out; the display + audio pair (00:05.0, 00:05.1) moves as one
# group when the file names either; bad entries are refused naming the
# field or the reason, with nothing changed; a failure injected with
# GPUVIRT_PT_FAIL_AT part-way through an apply that also creates a
# simulated GPU and a vGPU undoes all of it.
#
# Runs as root in the test VM (selftests/vm-run.sh), whose fixed PCI
# topology it relies on (see the header of selftests/vm-run.sh). State files
# and udev rules go to a mktemp directory. KTAP.
set -u

cd "${GPUVIRT_SRC:-.}" || exit 1
. selftests/lib/ktap.sh

KODIR=${GPUVIRT_KO_DIR:-build/$(uname -r)}
CORE=$KODIR/kernel/core/gpuvirt.ko
SIM=$KODIR/kernel/sim/gpuvirt_sim.ko
KO=$KODIR/kernel/vfio_pci/gpuvirt_vfio_pci.ko
CTL=${GPUVIRT_BIN:-build/user}/gpuvirtctl
DRV=gpuvirt_vfio_pci
PCI=/sys/bus/pci/devices
MDEV=/sys/bus/mdev/devices
GPU=0000:00:05.0	# bochs-display, with ...
AUD=0000:00:05.1	# ... ich9-intel-hda in the same group
LONE=0000:01:00.0	# bochs-display alone behind root port 00:06.0
U1=5a3c0001-0000-4000-8000-0000000000a1
MARK="gpuvirt pt_apply.sh: start $$"
T=$(mktemp -d)
export GPUVIRT_PT_STATE_DIR=$T/state GPUVIRT_PT_UDEV_DIR=$T/udev
unset GPUVIRT_PT_FAIL_AT
STATE=$GPUVIRT_PT_STATE_DIR
RULE=$GPUVIRT_PT_UDEV_DIR/61-gpuvirt-pt-$LONE.rules

skip_all() {
	echo "TAP version 13"
	echo "1..0 # SKIP $*"
	rm -rf "$T"
	exit 4
}

[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -x "$CTL" ] || skip_all "no $CTL (make user)"
for f in "$CORE" "$SIM" "$KO"; do
	[ -e "$f" ] || skip_all "no module $f (make modules)"
done
[ -n "$(ls /sys/kernel/iommu_groups 2>/dev/null)" ] ||
	skip_all "no IOMMU groups (the guest boots with intel_iommu=on)"
for d in $GPU $AUD $LONE; do
	[ -e "$PCI/$d" ] || skip_all "no $d: not the vm-run.sh topology"
done
[ -d /sys/bus/pci/drivers/$DRV ] && skip_all "$DRV is already loaded"

drv_of() {
	local l
	l=$(readlink "$PCI/$1/driver" 2>/dev/null) || { echo none; return; }
	echo "${l##*/}"
}

declare -A PRE
for d in $GPU $AUD $LONE; do
	PRE[$d]=$(drv_of $d)
done
modprobe -a bochs snd-hda-intel vfio_pci_core vfio_iommu_type1 vfio mdev \
	2>/dev/null
# A test before us may have left them unbound with the modules loaded.
for d in $GPU $AUD $LONE; do
	[ -e "$PCI/$d/driver" ] || echo $d >/sys/bus/pci/drivers_probe
done 2>/dev/null
declare -A ORIG
for d in $GPU $AUD $LONE; do
	ORIG[$d]=$(drv_of $d)
done
[ "${ORIG[$GPU]}" = bochs-drm ] && [ "${ORIG[$AUD]}" = snd_hda_intel ] &&
	[ "${ORIG[$LONE]}" = bochs-drm ] ||
	skip_all "host drivers missing: $GPU ${ORIG[$GPU]}, $AUD ${ORIG[$AUD]}, $LONE ${ORIG[$LONE]}"

cleanup() {
	local d
	for d in "$MDEV"/*; do
		[ -e "$d/remove" ] && echo 1 >"$d/remove"
	done 2>/dev/null
	for d in $GPU $AUD $LONE; do
		case $(drv_of $d) in
		$DRV|vfio-pci) echo $d >"$PCI/$d/driver/unbind" ;;
		esac
		echo >"$PCI/$d/driver_override"
		[ -e "$PCI/$d/driver" ] || echo $d >/sys/bus/pci/drivers_probe
	done 2>/dev/null
	rmmod $DRV vfio-pci gpuvirt_sim 2>/dev/null
	rmmod gpuvirt 2>/dev/null
	for d in $GPU $AUD $LONE; do
		[ "${PRE[$d]}" = none ] && [ -e "$PCI/$d/driver" ] &&
			echo $d >"$PCI/$d/driver/unbind"
	done 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# run ARGS...: gpuvirtctl; stdout in $T/out, stderr in $T/err, status $rc.
run() {
	"$CTL" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	echo "# gpuvirtctl $*: exit $rc"
	sed 's/^/#   out: /' "$T/out"
	sed 's/^/#   err: /' "$T/err"
}
# has FILE TEXT: FILE contains the fixed string TEXT.
has() {
	grep -qF -- "$2" "$1" || {
		echo "# $1 lacks: $2"
		return 1
	}
}
# is FILE LINE...: FILE holds exactly these lines.
is() {
	local f=$1 ls
	shift
	mapfile -t ls <"$f"
	if [ ${#ls[@]} -ne $# ] || [ "${ls[*]}" != "$*" ]; then
		echo "# $f is not the expected $# lines: $*"
		return 1
	fi
}
# drivers_are D1 DRV1 ...: each device bound to that driver, and a host
# driver with no driver_override left behind.
drivers_are() {
	local ok=0
	while [ $# -gt 1 ]; do
		if [ "$(drv_of "$1")" != "$2" ]; then
			echo "# $1 is bound to $(drv_of "$1"), not $2"
			ok=1
		fi
		if [ "$2" != $DRV ] && [ "$2" != vfio-pci ] &&
		   [ "$(cat "$PCI/$1/driver_override")" != "(null)" ]; then
			echo "# $1 keeps driver_override $(cat "$PCI/$1/driver_override")"
			ok=1
		fi
		shift 2
	done
	return $ok
}
originals() {
	drivers_are $GPU "${ORIG[$GPU]}" $AUD "${ORIG[$AUD]}" \
		$LONE "${ORIG[$LONE]}"
}
# states_are BDF...: the state files are exactly those of these devices.
states_are() {
	local have want=
	have=$(cd "$STATE" 2>/dev/null && ls)
	[ $# -gt 0 ] && want=$(printf '%s.state\n' "$@")
	[ "$have" = "$want" ] || {
		echo "# state files: \"$have\", not \"$want\""
		return 1
	}
}
no_sim() {
	[ ! -e /sys/bus/gpuvirt_sim/devices/sim0 ] &&
		[ -z "$(ls "$MDEV" 2>/dev/null)" ] || {
		echo "# left: $(ls /sys/bus/gpuvirt_sim/devices "$MDEV" 2>/dev/null)"
		return 1
	}
}
# file NAME: write stdin to $T/NAME.yaml
file() {
	cat >"$T/$1.yaml"
}

echo "$MARK" >/dev/kmsg
ktap_plan 22

{ grep -q "^gpuvirt " /proc/modules || insmod "$CORE"; } &&
	insmod "$SIM" && insmod "$KO" && modprobe vfio-pci
ktap_result $? "insmod gpuvirt, gpuvirt_sim and $DRV; modprobe vfio-pci"

file lone <<EOF
passthrough:
  - device: $LONE
EOF

# 2: --dry-run prints the step, changes nothing; JSON names its fields.
run apply -f "$T/lone.yaml" --dry-run
[ $rc = 0 ] && is "$T/out" "+ pt $LONE driver $DRV" && originals && states_are
ok=$?
run -j apply -f "$T/lone.yaml" --dry-run
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["plan"] == [{"action": "add", "pt": {"device": sys.argv[2],
    "driver": "gpuvirt_vfio_pci", "force": False, "persistent": False}}], d
' "$T/out" $LONE && [ $ok = 0 ] && originals
ktap_result $? "apply --dry-run: prints + pt $LONE driver $DRV, changes nothing"

run assert -f "$T/lone.yaml"
[ $rc = 1 ] && has "$T/out" "+ pt $LONE driver $DRV" &&
	has "$T/err" "differs from $T/lone.yaml in 1 place"
ktap_result $? "assert before apply: exit 1, the assignment is missing"

# 4-6: apply, again, assert.
run apply -f "$T/lone.yaml"
[ $rc = 0 ] && is "$T/out" "+ pt $LONE driver $DRV" && drivers_are $LONE $DRV &&
	drivers_are $GPU bochs-drm $AUD snd_hda_intel && states_are $LONE &&
	grep -qx "member $LONE bochs-drm -" "$STATE/$LONE.state" &&
	grep -qx "driver $DRV" "$STATE/$LONE.state" && [ ! -e "$RULE" ]
ktap_result $? "apply: $LONE to $DRV, its state file remembers bochs-drm"

run apply -f "$T/lone.yaml"
[ $rc = 0 ] && is "$T/out" "nothing to do" && drivers_are $LONE $DRV &&
	states_are $LONE
ktap_result $? "a second apply: nothing to do"

run assert -f "$T/lone.yaml"
[ $rc = 0 ] && [ ! -s "$T/out" ] && [ ! -s "$T/err" ]
ktap_result $? "assert: the system matches the file"

# 7-8: a member unbound behind the file's back.
echo $LONE >"$PCI/$LONE/driver/unbind"
run assert -f "$T/lone.yaml"
[ $rc = 1 ] && has "$T/out" "- pt $LONE driver $DRV" &&
	has "$T/out" "+ pt $LONE driver $DRV"
ktap_result $? "assert: notices $LONE unbound from $DRV"
run apply -f "$T/lone.yaml"
[ $rc = 0 ] && drivers_are $LONE $DRV && states_are $LONE &&
	grep -qx "member $LONE bochs-drm -" "$STATE/$LONE.state"
ktap_result $? "apply: binds $LONE again, the original driver still bochs-drm"

# 9-10: persistent, and its udev rule.
file lone_persist <<EOF
passthrough:
  - device: '$LONE'
    driver: gpuvirt_vfio_pci
    persistent: true
EOF
run apply -f "$T/lone_persist.yaml"
[ $rc = 0 ] && is "$T/out" "- pt $LONE driver $DRV" \
	"+ pt $LONE driver $DRV persistent" && drivers_are $LONE $DRV &&
	grep -qx "ACTION==\"add\", SUBSYSTEM==\"pci\", KERNEL==\"$LONE\", ATTR{driver_override}=\"$DRV\", RUN{builtin}+=\"kmod load $DRV\"" "$RULE" &&
	grep -qx "persistent 1" "$STATE/$LONE.state"
ktap_result $? "apply persistent: true: the udev rule is written"
rm -f "$RULE"
run assert -f "$T/lone_persist.yaml"
[ $rc = 1 ] && has "$T/out" "+ pt $LONE driver $DRV persistent"
ok=$?
run apply -f "$T/lone_persist.yaml"
[ $ok = 0 ] && [ $rc = 0 ] && [ -e "$RULE" ] && drivers_are $LONE $DRV
ktap_result $? "assert notices the udev rule gone; apply writes it again"

# 11: a change of driver: release, then assign to vfio-pci.
file lone_vfio <<EOF
passthrough:
  - device: $LONE
    driver: vfio-pci
EOF
run apply -f "$T/lone_vfio.yaml"
[ $rc = 0 ] && is "$T/out" "- pt $LONE driver $DRV persistent" \
	"+ pt $LONE driver vfio-pci" && drivers_are $LONE vfio-pci &&
	grep -qx "driver vfio-pci" "$STATE/$LONE.state" &&
	grep -qx "member $LONE bochs-drm -" "$STATE/$LONE.state" &&
	[ ! -e "$RULE" ]
ktap_result $? "apply driver: vfio-pci: $LONE moves from $DRV to vfio-pci, the rule goes"

# 12-13: a file without the device leaves it; --prune releases it.
file empty <<EOF
passthrough: []
EOF
run apply -f "$T/empty.yaml"
[ $rc = 0 ] && is "$T/out" "nothing to do" && drivers_are $LONE vfio-pci
ktap_result $? "apply of a file without it, no --prune: nothing to do"
run apply -f "$T/empty.yaml" --prune
[ $rc = 0 ] && is "$T/out" "- pt $LONE driver vfio-pci" && originals &&
	states_are
ktap_result $? "apply --prune: $LONE released, bochs-drm back, no state"

# 14-18: bad entries: refused, naming the field or the reason.
file bad_driver <<EOF
passthrough:
  - device: $LONE
    driver: nouveau
EOF
run apply -f "$T/bad_driver.yaml"
[ $rc = 2 ] && has "$T/err" "$T/bad_driver.yaml:3:13: \"driver\" expects one of gpuvirt_vfio_pci, vfio-pci, got \"nouveau\"" &&
	originals && states_are
ktap_result $? "an unknown driver: exit 2, the error names \"driver\" and its line"
file bad_bdf <<EOF
passthrough:
  - device: 0000:01:00.0
  - device: 0000:00:20.0
EOF
run apply -f "$T/bad_bdf.yaml"
[ $rc = 2 ] && has "$T/err" "$T/bad_bdf.yaml:3:13: \"device\" expects a PCI address" &&
	originals && states_are
ktap_result $? "a bad PCI address: exit 2, the error names \"device\" and its line"
file missing <<EOF
passthrough:
  - device: 0000:09:00.0
EOF
run apply -f "$T/missing.yaml"
[ $rc = 1 ] && has "$T/err" "$T/missing.yaml:2: no PCI device 0000:09:00.0" &&
	has "$T/err" "nothing was changed" && originals && states_are
ktap_result $? "a device that does not exist: a conflict, nothing changed"
file console <<EOF
passthrough:
  - device: $LONE
  - device: $GPU
EOF
run apply -f "$T/console.yaml"
[ $rc = 1 ] && has "$T/err" "$T/console.yaml:3: refusing $GPU:" &&
	has "$T/err" "force: the host console (fbcon) draws on $GPU" &&
	has "$T/err" "nothing was changed" && originals && states_are
ktap_result $? "the console's device without force: refused before anything changes"
file split <<EOF
passthrough:
  - device: $GPU
    force: true
  - device: $AUD
    force: true
EOF
run apply -f "$T/split.yaml"
[ $rc = 1 ] && has "$T/err" "$T/split.yaml:4: $AUD is in IOMMU group" &&
	has "$T/err" "with $GPU (line 2)" && originals && states_are
ktap_result $? "two devices of one IOMMU group: refused, naming both"

# 19-20: the pair moves as one group, whichever member the file names.
file pair <<EOF
passthrough:
  - device: $AUD
    force: true
EOF
run apply -f "$T/pair.yaml"
[ $rc = 0 ] && is "$T/out" "+ pt $AUD driver $DRV force" &&
	drivers_are $GPU $DRV $AUD $DRV && states_are $AUD &&
	grep -qx "member $GPU bochs-drm -" "$STATE/$AUD.state"
ok=$?
run assert -f "$T/pair.yaml"
[ $ok = 0 ] && [ $rc = 0 ]
ktap_result $? "apply $AUD force: the display and audio pair move together, assert agrees"
run apply -f "$T/empty.yaml" --prune
[ $rc = 0 ] && is "$T/out" "- pt $AUD driver $DRV" && originals && states_are
ktap_result $? "apply --prune: the pair goes back to bochs-drm and snd_hda_intel"

# 21: a failure injected in the middle of an apply that also makes a GPU
# and a vGPU: the first assignment succeeds (3 sysfs writes and its udev
# rule), the pair's fails at its 5th write (unbinding the audio function);
# all is undone.
file full <<EOF
simulated-gpus:
  - id: 0
    model: h200-141gb
gpus:
  - id: 0
    vgpus:
      - uuid: $U1
        type: H200-35C
passthrough:
  - device: $LONE
    persistent: true
  - device: $GPU
    force: true
EOF
GPUVIRT_PT_FAIL_AT=5 run apply -f "$T/full.yaml"
[ $rc = 1 ] && has "$T/err" "failure injected by GPUVIRT_PT_FAIL_AT" &&
	has "$T/err" "step 4 of 4 failed (+ pt $GPU driver $DRV); undoing the 3 done before it" &&
	has "$T/err" "nothing was changed" && originals && states_are &&
	[ -z "$(ls "$GPUVIRT_PT_UDEV_DIR" 2>/dev/null)" ] && no_sim
ktap_result $? "GPUVIRT_PT_FAIL_AT=5: the pair's failure undoes $LONE, the vGPU and the GPU"

bad=$(dmesg | sed -n "/$MARK/,\$p" |
	grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection')
[ -z "$bad" ] || ktap_diag "$bad"
[ -z "$bad" ]
ktap_result $? "no kernel warning, BUG or Oops"

ktap_finish
