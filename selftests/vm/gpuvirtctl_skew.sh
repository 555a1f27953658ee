#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Today's gpuvirtctl against a module older than vgpu-get's omit attribute,
# as on a host whose package was upgraded (DKMS built the new modules)
# while the old module stays loaded until a reboot: the commands that send
# omit (apply, assert, stats, vgpu del) must work there as before, and on
# the current module they must send it.
#
# The old modules are the tree before the commit that added omit, built
# for this kernel from the clone's history by "make skew-modules"
# (scripts/skew-modules.sh, into build/skew/KVER/). Without them the test
# fails: a skip would hide a lost fallback.
#
# The same commands run on each module in turn, in a fresh state each
# time, under selftests/lib/nl_watch.py, which reads every vgpu-get
# request they send and what the kernel answers from an nlmon tap: on the
# old module the first request of a process carries omit, is refused
# (EINVAL, "Unknown attribute type") and is sent once more without it,
# and the process sends no omit after that; on the current one every
# request carries it and no reply has the nests it names. Each command
# prints the same, exits the same, on both. "vgpu show", which prints the
# counters, never sends omit.
#
# Runs as root in the test VM (selftests/vm-run.sh). Prints KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir
RUN_LOGS_OUT=1

SKEW=build/skew/$KVER
KO_NOW=$KO
NLMON=gvskew0
U1=5a3c0002-0000-4000-8000-000000000001
U2=5a3c0002-0000-4000-8000-000000000002
U3=5a3c0002-0000-4000-8000-000000000003
REFUSED="refused=Invalid argument:Unknown attribute type"

vmt_start_clean gpuvirt_sim gpuvirt
vmt_need_ctl
vmt_need_modules gpuvirt gpuvirt_sim
vmt_need_cmds ip python3
tap_del() {
	ip link del "$NLMON" 2>/dev/null
	return 0
}
vmt_on_exit tap_del
vmt_kmsg_mark

cat >"$T/base.yaml" <<EOF
simulated-gpus:
  - id: 0
    model: h200-141gb
gpus:
  - id: 0
    sched:
      policy: equal-share
    vgpus:
      - uuid: $U1
        type: H200-35C
        weight: 100
        min-pct: 10
      - uuid: $U2
        type: H200-35C
        weight: 200
        max-pct: 50
      - uuid: $U3
        type: H200-35C
EOF
cat >"$T/changed.yaml" <<EOF
simulated-gpus:
  - id: 0
    model: h200-141gb
gpus:
  - id: 0
    sched:
      policy: best-effort
    vgpus:
      - uuid: $U1
        type: H200-35C
        weight: 300
      - uuid: $U3
        type: H200-35C
EOF
printf '%s\n' "vgpu del uuid $U1" "vgpu del uuid $U2" "vgpu del uuid $U3" >"$T/del.batch"

# What each module's run does, one command a line for nl_watch.py: NAME
# and the command. "assert2" after the batch finds the vGPUs gone.
cat >"$T/commands" <<EOF
apply $CTL apply -f $T/base.yaml
apply2 $CTL apply -f $T/base.yaml
assert $CTL assert -f $T/base.yaml
dryrun $CTL apply --dry-run --prune -f $T/changed.yaml
stats $CTL stats --prometheus
show $CTL vgpu show
batch $CTL -batch $T/del.batch
assert2 $CTL assert -f $T/base.yaml
EOF
CMDS=(apply apply2 assert dryrun stats show batch assert2)
declare -A WANT_RC=([apply]=0 [apply2]=0 [assert]=0 [dryrun]=0 [stats]=0 [show]=0
	[batch]=0 [assert2]=1)

# phase NAME KO: load the modules of KO, run the commands into $T/NAME/
# under the tap, then remove what they made and unload the modules
phase() {
	local name=$1 ko=$2 ok=0

	mkdir -p "$T/$name"
	if ! KO=$ko vmt_load gpuvirt gpuvirt_sim; then
		vmt_unload gpuvirt_sim gpuvirt
		return 1
	fi
	python3 selftests/lib/nl_watch.py "$TAP" include/uapi/linux/gpuvirt.h \
		"$T/$name" <"$T/commands" || ok=1
	vmt_remove_mdevs
	[ -e "$BUS/devices/sim0" ] && echo 0 >"$BUS/del_device"
	vmt_unload gpuvirt_sim gpuvirt
	vmt_loaded gpuvirt && { echo "# gpuvirt did not unload"; ok=1; }
	return $ok
}

# rc_of NAME CMD: the exit status of command CMD of phase NAME, "none"
# if it did not run
rc_of() {
	local rc=none

	{ read -r rc <"$T/$1/$2.rc"; } 2>/dev/null
	echo "$rc"
}

# exits NAME: each command of phase NAME exited as it should
exits() {
	local c rc ok=0

	for c in "${CMDS[@]}"; do
		rc=$(rc_of "$1" "$c")
		[ "$rc" = "${WANT_RC[$c]}" ] && continue
		echo "# $1: $c exited $rc, not ${WANT_RC[$c]}"
		[ -e "$T/$1/$c.err" ] && diag_file "$T/$1/$c.err"
		ok=1
	done
	return $ok
}

# wire NAME CMD LINE...: what nl_watch.py saw command CMD of phase NAME
# send, one line a vgpu-get request
wire() {
	local p=$1 c=$2

	shift 2
	[ -e "$T/$p/$c.nl" ] || {
		echo "# $p: no record of what $c sent"
		return 1
	}
	lines_are "$T/$p/$c.nl" "$@" || {
		echo "# $p: $c sent:"
		diag_file "$T/$p/$c.nl"
		return 1
	}
}

# wire_each NAME LINE... : apply2, assert and dryrun of phase NAME each
# sent these
wire_each() {
	local p=$1 c

	shift
	for c in apply2 assert dryrun; do
		wire "$p" "$c" "$@" || return 1
	done
}

# On the old module: each command's first request carries omit and is
# refused, and the one after it asks for everything
old_refused_once() {
	wire old apply \
		"vgpu-get dump omit=3 $REFUSED replies=0 stats=0 migration=0" \
		"vgpu-get dump omit=- ok replies=0 stats=0 migration=0" &&
		wire_each old \
			"vgpu-get dump omit=3 $REFUSED replies=0 stats=0 migration=0" \
			"vgpu-get dump omit=- ok replies=3 stats=3 migration=3" &&
		wire old assert2 \
			"vgpu-get dump omit=3 $REFUSED replies=0 stats=0 migration=0" \
			"vgpu-get dump omit=- ok replies=0 stats=0 migration=0" &&
		wire old stats \
			"vgpu-get dump omit=2 $REFUSED replies=0 stats=0 migration=0" \
			"vgpu-get dump omit=- ok replies=3 stats=3 migration=3"
}

old_batch_remembers() {
	wire old batch \
		"vgpu-get do omit=3 $REFUSED replies=0 stats=0 migration=0" \
		"vgpu-get do omit=- ok replies=1 stats=1 migration=1" \
		"vgpu-get do omit=- ok replies=1 stats=1 migration=1" \
		"vgpu-get do omit=- ok replies=1 stats=1 migration=1" &&
		wire old show "vgpu-get dump omit=- ok replies=3 stats=3 migration=3"
}

# On the current module: omit on every request but vgpu show's, and the
# replies without the nests it names
now_omits() {
	wire now apply "vgpu-get dump omit=3 ok replies=0 stats=0 migration=0" &&
		wire_each now "vgpu-get dump omit=3 ok replies=3 stats=0 migration=0" &&
		wire now assert2 "vgpu-get dump omit=3 ok replies=0 stats=0 migration=0" &&
		wire now stats "vgpu-get dump omit=2 ok replies=3 stats=3 migration=0" &&
		wire now batch \
			"vgpu-get do omit=3 ok replies=1 stats=0 migration=0" \
			"vgpu-get do omit=3 ok replies=1 stats=0 migration=0" \
			"vgpu-get do omit=3 ok replies=1 stats=0 migration=0" &&
		wire now show "vgpu-get dump omit=- ok replies=3 stats=3 migration=3"
}

# the output of a command on both modules; the schedulers' clocks move
# between the two, so stats is compared without them
same_output() {
	local c ok=0 a b

	for c in "${CMDS[@]}"; do
		a=$(rc_of old "$c")
		b=$(rc_of now "$c")
		if [ "$a" = none ] || [ "$b" = none ]; then
			echo "# $c did not run on both modules"
			ok=1
			continue
		fi
		if [ "$c" = stats ]; then
			grep -v '^gpuvirt_sched_' "$T/old/$c.out" >"$T/old/$c.cmp"
			grep -v '^gpuvirt_sched_' "$T/now/$c.out" >"$T/now/$c.cmp"
		else
			cp "$T/old/$c.out" "$T/old/$c.cmp" && cp "$T/now/$c.out" "$T/now/$c.cmp"
		fi
		if [ "$a" != "$b" ] || ! cmp -s "$T/old/$c.cmp" "$T/now/$c.cmp" ||
		   ! cmp -s "$T/old/$c.err" "$T/now/$c.err"; then
			echo "# $c differs: exit $a on the old module, $b on the current one"
			diff "$T/old/$c.cmp" "$T/now/$c.cmp" | sed 's/^/# /'
			diff "$T/old/$c.err" "$T/now/$c.err" | sed 's/^/# /'
			ok=1
		fi
	done
	return $ok
}

ktap_plan 11

# 1: the old modules, and that they are older than omit
ok=0
for m in kernel/core/gpuvirt.ko kernel/sim/gpuvirt_sim.ko; do
	[ -e "$SKEW/ko/$m" ] && continue
	echo "# no $SKEW/ko/$m: make skew-modules KVER=$KVER builds it from the commit before vgpu-get's omit, which must be in the clone's history (scripts/skew-modules.sh)"
	ok=1
done
if [ $ok = 0 ]; then
	read -r rev <"$SKEW/rev" && echo "# old modules: $rev"
	if grep -q GPUVIRT_A_VGPU_OMIT "$SKEW/src/include/uapi/linux/gpuvirt.h"; then
		echo "# $SKEW/src knows omit: not a module older than it"
		ok=1
	fi
fi
ktap_result $ok "the modules of the commit before omit are built for $KVER"
have_old=$ok

# 2: the tap. Debian's kernels have nlmon (selftests/config); the debug
# kernel, where check-full runs this too, has not: there the checks of
# what went over the wire are skipped, and counted so.
TAP=$NLMON
if modprobe -q nlmon && ip link add "$NLMON" type nlmon && ip link set "$NLMON" up; then
	ktap_result 0 "an nlmon tap to watch the requests"
elif ! modinfo nlmon >/dev/null 2>&1; then
	TAP=-
	ktap_skip "an nlmon tap to watch the requests" "$KVER has no nlmon (CONFIG_NLMON)"
else
	TAP=-
	ktap_result 1 "an nlmon tap to watch the requests"
fi

# wire_check DESC CMD...: a check of what went over the wire, skipped
# without the tap
wire_check() {
	local desc=$1

	shift
	if [ "$TAP" = - ]; then
		ktap_skip "$desc" "no nlmon tap"
		return
	fi
	"$@"
	ktap_result $? "$desc"
}

# 3-6: the old module
if [ $have_old = 0 ]; then
	phase old "$SKEW/ko"
	ktap_result $? "old module: loaded, the commands ran, unloaded"
else
	ktap_result 1 "old module: loaded, the commands ran, unloaded (no old modules)"
fi
exits old
ktap_result $? "old module: every command exits as before omit"

wire_check "old module: apply, assert and stats send omit, are refused, and ask once more without it" \
	old_refused_once
# a batch is one process: one refusal, then no omit for the other vGPUs
wire_check "old module: a batch of vgpu del is refused once and remembers; vgpu show sends no omit" \
	old_batch_remembers

# 7-9: the current module
phase now "$KO_NOW"
ktap_result $? "current module: loaded, the commands ran, unloaded"
exits now
ktap_result $? "current module: every command exits as on the old one"

wire_check "current module: omit is sent and the replies leave out what it names; vgpu show sends none" \
	now_omits

# 10: the same output either way
same_output
ktap_result $? "each command prints the same with omit as without it"

# 11
vmt_kernel_quiet
ktap_result $? "no kernel warnings"

ktap_finish
