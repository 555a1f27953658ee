# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# What every VM shell test (selftests/vm/*.sh) starts with, written once.
# Source it, then:
#
#   . "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
#   vmt_init                  set -u, cd to the repo, the paths below
#   vmt_tmpdir                $T, a directory removed at exit
#   vmt_start_clean gpuvirt_sim gpuvirt
#   vmt_on_exit cleanup       run at exit (the last registered first)
#   vmt_need_ctl              skip (exit 4) unless gpuvirtctl is built,
#   vmt_need_modules gpuvirt  ... or unless these modules are built
#   ktap_plan N
#   vmt_load gpuvirt gpuvirt_sim && echo "0 h200-141gb" >$BUS/new_device
#   ktap_result $? "modules loaded, a simulated H200"
#
# The runner (selftests/lib/guest-suite.sh) sets GPUVIRT_SRC, KVER,
# GPUVIRT_KO_DIR and GPUVIRT_BIN; vmt_init defaults them as the runner
# would and sets
#   KVER   the running kernel's release
#   KO     the module tree ($GPUVIRT_KO_DIR): kernel/core/gpuvirt.ko, ...
#   BIN    the userspace build ($GPUVIRT_BIN), CTL its gpuvirtctl and
#          VMBIN the VM test programs (selftests/vm/)
#   BUS    the simulated GPUs' bus, /sys/bus/gpuvirt_sim
#   MDEV   the mdev devices, /sys/bus/mdev/devices
#   CORE   the core's debugfs of the GPUs, /sys/kernel/debug/gpuvirt/gpus
#   HW     the simulated GPUs' debugfs, /sys/kernel/debug/gpuvirt_sim
#
# At exit:
#   vmt_on_exit CMD [ARG...] run CMD, before what was registered earlier
#   vmt_reap VAR...          kill the background process whose pid VAR
#                            holds, when it is set, and wait for it
#                            (SIGTERM, then SIGKILL after 10 s)
#   vmt_start_clean MOD...   unload MOD... (what an earlier test left) now;
#                            remove every mdev device and unload them at exit
#
# Background listeners:
#   vmt_wait_listening PID   PID (gpuvirtctl monitor) waits in recvmsg(),
#                            which it calls only once it has joined its
#                            netlink groups; up to 60 s
#   vmt_wait_lines FILE PATTERN N  FILE has N lines matching the extended
#                            regex PATTERN; up to 60 s
#
# Skips, all "1..0 # SKIP REASON" and exit 4:
#   vmt_skip REASON...       skip the whole test
#   vmt_need_ctl             gpuvirtctl is built
#   vmt_need_modules MOD...  each module is built (vmt_ko)
#   vmt_need_cmds CMD...     each command is installed
#   vmt_need_root, vmt_need_iommu, vmt_need_debugfs (mounts it if needed)
#   vmt_need_pci BDF...      each PCI device of selftests/vm-run.sh's guest
#   vmt_need_unloaded MOD    MOD is not loaded
#
# Modules:
#   vmt_ko VAR MOD           VAR = the path of MOD's .ko: gpuvirt,
#                            gpuvirt_sim, gpuvirt_vfio_pci,
#                            gpuvirt_selftest_* (make test-modules), or a
#                            kernel mdev sample (make mdev-samples)
#   vmt_load [-k] MOD...     modprobe the VFIO and mdev modules, then insmod
#                            each MOD in turn; with -k one that is loaded
#                            already is kept; fails at the first failure
#   vmt_loaded MOD           MOD is loaded
#   vmt_unload MOD...        rmmod each, quietly, for cleanups
#   vmt_remove_mdevs [UUID...] remove these mdev devices (all without UUID)
#
# The kernel log: vmt_kmsg_mark writes "gpuvirt TEST: start PID" to it,
# vmt_kmsg prints it from that line on, vmt_kernel_reports the warnings,
# BUGs and Oopses in it, and the check vmt_kernel_quiet fails, quoting
# them, if there are any.
#
# Checks, for "A && B && ...; ktap_result $?" chains; they say why they
# fail as KTAP diagnostics and use shell builtins only: under TCG, often
# next to other VMs, a fork costs a few hundred milliseconds.
#   diag_file FILE           FILE as diagnostics
#   run ARGS...              gpuvirtctl ARGS, stdout in $T/out, stderr in
#                            $T/err, status in $rc; logs the command, its
#                            status and stderr (and stdout when RUN_LOGS_OUT
#                            is 1); returns 0
#   has FILE TEXT            FILE contains the fixed string TEXT
#   lines_are FILE LINE...   FILE holds exactly these lines
#   sysfs_is FILE VALUE      the file's first line is VALUE
#   debugfs_is FILE KEY VAL  the "key: value" file has KEY VAL
#
# Passthrough (PCI devices moved between drivers; BDFs in full):
#   drv_of BDF               the driver bound to BDF, "none" if none
#   drivers_are BDF DRV...   each BDF bound to its DRV; one on a host driver
#                            (not gpuvirt_vfio_pci or vfio-pci) keeps no
#                            driver_override
#   vmt_pt_note MAP BDF...   MAP[BDF] = drv_of BDF (MAP: the caller's
#                            associative array)
#   vmt_pt_found BDF...      note the driver each BDF has now, for:
#   vmt_pt_as_found          each BDF that had no driver then has none again
#   vmt_pt_give_back BDF...  each BDF taken from the VFIO drivers, its
#                            driver_override cleared, probed again

# shellcheck source=selftests/lib/ktap.sh
. "${BASH_SOURCE[0]%/*}/ktap.sh"

VMT_PCI=/sys/bus/pci/devices
VMT_MDEV=/sys/bus/mdev/devices
VMT_AT_EXIT=()
VMT_PT_FOUND=()
RUN_LOGS_OUT=0

# shellcheck disable=SC2034 # the tests use them
vmt_init() {
	set -u
	cd "${GPUVIRT_SRC:-.}" || exit 1
	KVER=${KVER:-$(uname -r)}
	KO=${GPUVIRT_KO_DIR:-build/$KVER}
	BIN=${GPUVIRT_BIN:-build/user}
	CTL=$BIN/gpuvirtctl
	VMBIN=$BIN/selftests/vm
	BUS=/sys/bus/gpuvirt_sim
	MDEV=$VMT_MDEV
	CORE=/sys/kernel/debug/gpuvirt/gpus
	HW=/sys/kernel/debug/gpuvirt_sim
}

# vmt_on_exit CMD [ARG...]: run CMD at exit, before what was registered
# earlier
vmt_on_exit() {
	local cmd

	printf -v cmd '%q ' "$@"
	VMT_AT_EXIT=("$cmd" "${VMT_AT_EXIT[@]}")
	trap vmt_exit EXIT
}

vmt_exit() {
	local cmd

	for cmd in "${VMT_AT_EXIT[@]}"; do
		eval "$cmd"
	done
}

vmt_tmpdir() {
	T=$(mktemp -d) || exit 1
	vmt_on_exit rm -rf "$T"
}

# vmt_alive PID: the process runs (exists and is not a zombie)
vmt_alive() {
	local st=

	{ read -r st <"/proc/$1/stat"; } 2>/dev/null
	st=${st##*) }
	st=${st%% *}
	[ -n "$st" ] && [ "$st" != Z ]
}

vmt_reap() {
	local v p end

	for v; do
		p=${!v:-}
		[ -n "$p" ] || continue
		kill "$p" 2>/dev/null
		# a process that ignores SIGTERM gets 10 s, then SIGKILL: the
		# wait below must not outlast the test's own time limit
		end=$((SECONDS + 10))
		while vmt_alive "$p" && [ $SECONDS -lt $end ]; do
			sleep 0.1
		done
		if vmt_alive "$p"; then
			echo "# vmt_reap: $v (pid $p) outlived SIGTERM by 10 s: SIGKILL"
			kill -KILL "$p" 2>/dev/null
		fi
		wait "$p" 2>/dev/null
	done
	return 0
}

vmt_wait_listening() {
	local i sc

	for ((i = 0; i < 600; i++)); do
		read -r sc _ <"/proc/$1/syscall" 2>/dev/null || return 1
		[ "$sc" = 47 ] && return 0	# x86-64 recvmsg
		sleep 0.1
	done
	return 1
}

vmt_wait_lines() {
	local i

	for ((i = 0; i < 600; i++)); do
		[ "$(grep -Ec "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

vmt_start_clean() {
	vmt_unload "$@"
	vmt_on_exit vmt_unload "$@"
	vmt_on_exit vmt_remove_mdevs
}

# --- skips -------------------------------------------------------------------

vmt_skip() {
	echo "TAP version 13"
	echo "1..0 # SKIP $*"
	exit 4
}

vmt_need_ctl() {
	[ -x "$CTL" ] || vmt_skip "no $CTL (make user)"
}

vmt_need_modules() {
	local m ko

	for m; do
		vmt_ko ko "$m"
		[ -e "$ko" ] && continue
		case $m in
		gpuvirt_selftest_*) vmt_skip "no module $ko (make test-modules)" ;;
		gpuvirt*) vmt_skip "no module $ko (make modules)" ;;
		*) vmt_skip "no module $ko (make mdev-samples KVER=$KVER)" ;;
		esac
	done
}

vmt_need_cmds() {
	local c

	for c; do
		command -v "$c" >/dev/null || vmt_skip "no $c"
	done
}

vmt_need_root() {
	[ "$(id -u)" = 0 ] || vmt_skip "needs root"
}

vmt_need_iommu() {
	local g

	for g in /sys/kernel/iommu_groups/*; do
		[ -e "$g" ] && return 0
	done
	vmt_skip "no IOMMU groups (the guest boots with intel_iommu=on)"
}

vmt_need_debugfs() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null ||
		vmt_skip "no debugfs"
}

vmt_need_pci() {
	local d

	for d; do
		[ -e "$VMT_PCI/$d" ] || vmt_skip "no $d: not the vm-run.sh topology"
	done
}

vmt_need_unloaded() {
	vmt_loaded "$1" && vmt_skip "$1 is already loaded"
	return 0
}

# --- modules -----------------------------------------------------------------

vmt_ko() {
	local dir

	case $2 in
	gpuvirt) dir=kernel/core ;;
	gpuvirt_sim) dir=kernel/sim ;;
	gpuvirt_vfio_pci) dir=kernel/vfio_pci ;;
	gpuvirt_selftest_*) dir=selftests/modules/${2#gpuvirt_selftest_} ;;
	*) dir=mdev-samples ;;
	esac
	printf -v "$1" %s "$KO/$dir/$2.ko"
}

vmt_loaded() {
	[ -d "/sys/module/$1" ]
}

vmt_load() {
	local keep=0 m ko

	[ "${1:-}" = -k ] && { keep=1; shift; }
	modprobe -qa vfio vfio_iommu_type1 mdev || return 1
	for m; do
		[ $keep = 1 ] && vmt_loaded "$m" && continue
		vmt_ko ko "$m"
		insmod "$ko" || return 1
	done
}

# One rmmod a module: kmod 34 (Debian 13) stops at the first module that
# is not loaded, where kmod 30 (Debian 12) went on to the next.
vmt_unload() {
	local m

	for m; do
		rmmod "$m" 2>/dev/null
	done
	return 0
}

vmt_remove_mdevs() {
	local d

	if [ $# -eq 0 ]; then
		set -- "$VMT_MDEV"/*
	else
		set -- "${@/#/$VMT_MDEV/}"
	fi
	for d; do
		[ -e "$d/remove" ] && echo 1 >"$d/remove"
	done 2>/dev/null
	return 0
}

# --- the kernel log ----------------------------------------------------------

vmt_kmsg_mark() {
	VMT_MARK="gpuvirt ${0##*/}: start $$"
	echo "$VMT_MARK" >/dev/kmsg
}

vmt_kmsg() {
	dmesg | sed -n "/$VMT_MARK/,\$p"
}

vmt_kernel_reports() {
	vmt_kmsg | grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection'
}

vmt_kernel_quiet() {
	local bad

	bad=$(vmt_kernel_reports)
	[ -z "$bad" ] || { ktap_diag "$bad"; return 1; }
}

# --- checks ------------------------------------------------------------------

diag_file() {
	local l

	while IFS= read -r l; do
		echo "# $l"
	done <"$1"
}

run() {
	"$CTL" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	echo "# gpuvirtctl $*: exit $rc"
	[ "$RUN_LOGS_OUT" = 1 ] && diag_file "$T/out"
	diag_file "$T/err"
	return 0
}

has() {
	local txt=

	IFS= read -r -d '' txt <"$1"
	[[ $txt == *"$2"* ]] || {
		echo "# $1 lacks: $2"
		return 1
	}
}

lines_are() {
	local f=$1 ls

	shift
	mapfile -t ls <"$f"
	if [ ${#ls[@]} -ne $# ] || [ "${ls[*]}" != "$*" ]; then
		echo "# $f is not the expected $# lines:"
		printf '#   %s\n' "$@"
		return 1
	fi
}

sysfs_is() {
	local v=

	read -r v 2>/dev/null <"$1"
	[ "$v" = "$2" ] || {
		echo "# $1 is \"$v\", not \"$2\""
		return 1
	}
}

debugfs_is() {
	local l ls

	mapfile -t ls 2>/dev/null <"$1"
	for l in "${ls[@]}"; do
		[ "${l%%: *}" = "$2" ] && [ "${l#*: }" = "$3" ] && return 0
	done
	echo "# $1 has no \"$2: $3\""
	return 1
}

# --- passthrough -------------------------------------------------------------

drv_of() {
	local l

	l=$(readlink "$VMT_PCI/$1/driver" 2>/dev/null) || { echo none; return; }
	echo "${l##*/}"
}

drivers_are() {
	local ok=0 have over

	while [ $# -gt 1 ]; do
		have=$(drv_of "$1")
		if [ "$have" != "$2" ]; then
			echo "# $1 is bound to $have, not $2"
			ok=1
		fi
		case $2 in
		gpuvirt_vfio_pci|vfio-pci) ;;
		*)	over=
			read -r over <"$VMT_PCI/$1/driver_override"
			if [ "$over" != "(null)" ]; then
				echo "# $1 keeps driver_override $over"
				ok=1
			fi ;;
		esac
		shift 2
	done
	return $ok
}

vmt_pt_note() {
	local map=$1 d

	shift
	for d; do
		declare -g "${map}[$d]=$(drv_of "$d")"
	done
}

vmt_pt_found() {
	local d

	for d; do
		VMT_PT_FOUND+=("$d $(drv_of "$d")")
	done
}

vmt_pt_give_back() {
	local d

	for d; do
		case $(drv_of "$d") in
		gpuvirt_vfio_pci|vfio-pci) echo "$d" >"$VMT_PCI/$d/driver/unbind" ;;
		esac
		echo >"$VMT_PCI/$d/driver_override"
		[ -e "$VMT_PCI/$d/driver" ] || echo "$d" >/sys/bus/pci/drivers_probe
	done 2>/dev/null
	return 0
}

vmt_pt_as_found() {
	local d drv

	for d in "${VMT_PT_FOUND[@]}"; do
		drv=${d#* } d=${d%% *}
		[ "$drv" = none ] && [ -e "$VMT_PCI/$d/driver" ] &&
			echo "$d" >"$VMT_PCI/$d/driver/unbind"
	done 2>/dev/null
	return 0
}
