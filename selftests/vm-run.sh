#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run the gpuvirt VM tests in a QEMU guest and report them as KTAP.
#
# Usage: selftests/vm-run.sh [-k KVER] [-o OUTDIR] [-t TIMEOUT_S] [-m MEM]
#                            [-T TEST_TIMEOUT_S] [-a 'KERNEL ARGS']
#                            [--cmd 'shell command'] [TEST...]
#
#   -k KVER     kernel release to boot (default: scripts/kver.sh 6.1)
#   -o OUTDIR   where the logs and results go (default: build/KVER/vm-run);
#               the files listed below are replaced, nothing else is touched
#   -t SECONDS  bound on the whole VM run (default 300); past it QEMU is
#               killed and the run fails with "guest hung"
#   -m MEM      guest memory (default 2G)
#   -T SECONDS  per-test time limit inside the guest (default 120)
#   -a ARGS     extra kernel command line arguments
#   --cmd CMD   also run CMD (bash -c, in the repo) as a test named "cmd";
#               with --cmd and no TEST, only CMD runs
#   TEST        foo.sh = selftests/vm/foo.sh, foo = build/user/selftests/vm/foo;
#               default: every entry of selftests/vm/TESTS
#
# The guest boots /boot/vmlinuz-KVER with an initramfs built by
# selftests/lib/mk-initramfs (cached in build/KVER/vm-initramfs.cpio), uses
# the host's root file system read-only over 9p, and runs
# selftests/lib/guest-suite.sh there (see it for the test environment:
# GPUVIRT_SRC, KVER, GPUVIRT_KO_DIR, GPUVIRT_BIN). Modules are not
# autoloaded in the guest (no udev): tests modprobe/insmod what they need.
#
# The guest kernel is the vmlinux extracted from /boot/vmlinuz-KVER
# (selftests/lib/extract-vmlinux, cached in build/KVER/vmlinux.pvh), booted
# through its PVH entry: 4-7 s faster under TCG than the bzImage.
# Environment knobs: GPUVIRT_VM_BZIMAGE=1 boots the bzImage instead;
# GPUVIRT_VM_BIOS=FILE passes -bios FILE (e.g. qboot.rom) to QEMU.
# A kernel that is not installed (the debug kernel of scripts/debug-kernel.sh):
# GPUVIRT_VM_KERNEL=FILE boots FILE instead of /boot/vmlinuz-KVER, and
# GPUVIRT_VM_MODDIR=DIR takes its modules from DIR instead of
# /lib/modules/KVER (the guest mounts DIR there). GPUVIRT_VM_AFTER_TEST=CMD
# runs CMD in the guest after every test (see selftests/lib/guest-suite.sh).
# The emulator: GPUVIRT_VM_QEMU=auto (the default) runs the guest in the
# QEMU of the Debian 13 root of scripts/trixie-root.sh when that root is
# cached, started with the root's own loader and libraries, else in the
# host's qemu-system-x86_64; =host and =trixie choose (trixie fails when
# the root is missing). QEMU 10's TCG runs these guests about a quarter
# faster than Debian 12's QEMU 7.2 (Documentation/testing.rst, "The
# emulator"). Only the emulator under the guest changes: a test that
# drives QEMU runs the guest root's own (Debian 12's 7.2 with the host's
# root), and the guest's machine is the same q35 with the same devices.
# Another root for the guest (the Debian 13 root of scripts/trixie-root.sh):
# GPUVIRT_VM_ROOT=DIR (default /) makes DIR the guest's root file system,
# read-only as the host's is, and takes the kernel from DIR/boot/vmlinuz-KVER
# and its modules from DIR/lib/modules/KVER (GPUVIRT_VM_KERNEL and
# GPUVIRT_VM_MODDIR still win); -k is then required. The guest finds DIR in
# the host root share, and the repo is bound at its own path in DIR's tree
# (selftests/lib/guest-init), so tests see DIR's binaries and libraries and
# the same repo and build/ as with the host's root.
# The guest's CPU model: QEMU's default (qemu64: no SSE4.2, no PCLMULQDQ,
# no AVX) unless GPUVIRT_VM_CPU=MODEL passes -cpu MODEL (e.g. max, which
# has the instructions every x86-64 host CPU of the last decade has, and
# which the kernel's CRC and copy routines choose by). Tests run on the
# default; the benchmarks use it to show what a real host's CPU changes.
#
# Fixed guest PCI topology (q35, intel-iommu with interrupt remapping and
# caching-mode; intel_iommu=on). Tests may rely on these addresses:
#
#   0000:00:05.0  bochs-display (1234:1111, class 0380), multifunction
#   0000:00:05.1  ich9-intel-hda (8086:293e, class 0403)   -> 05.0 + 05.1 share one
#                 IOMMU group: a GPU with its HDMI audio function
#   0000:00:06.0  pcie-root-port rp1 (chassis 1, slot 1)
#   0000:01:00.0  bochs-display (1234:1111) behind rp1, alone in its IOMMU group,
#                 reset_method "bus"
#   0000:00:07.0  edu (1234:11e8, class 00ff), a plain device
#   0000:00:1d.0  virtio-9p-pci, tag "hostroot": host / read-only (with
#                 GPUVIRT_VM_ROOT too: the guest takes its root from it)
#   0000:00:1e.0  virtio-9p-pci, tag "gvout": OUTDIR/guest read-write
#   (00:00.0 host bridge and 00:1f.x ICH9 LPC/SATA/SMBus come with q35)
#
# Output: KTAP on stdout and in OUTDIR/ktap.log, one line per test plus the
# host's own tests: "kernel-log-clean" (no WARNING/BUG/Oops/lockdep/... in
# the guest's dmesg or serial console, and no taint but O and E; see
# selftests/lib/logscan), and, when it happened, "guest-hung" or
# "guest-died". OUTDIR/counts holds "PASS FAIL SKIP" over the leaf results
# (selftests/lib/ktap-count). Last line: "vm-run: KVER: N passed, N failed,
# N skipped". Exit status 0 only if nothing failed; 2 for usage errors.
#
# OUTDIR files: ktap.log counts console.log (serial console, kept on a
# crash or hang) qemu.log (QEMU's own output) guest/ (the 9p share:
# guest.ktap dmesg tainted started ...).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
LIB=$SRC/selftests/lib

die() {
	echo "vm-run: $*" >&2
	exit 2
}

usage() {
	sed -n '5,8p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

kver=""
outdir=""
vm_timeout=300
mem=2G
test_timeout=120
extra_append=""
cmd=""
have_cmd=0
tests=()
while [ $# -gt 0 ]; do
	case $1 in
	-k) kver=${2:?-k needs a kernel release}; shift 2 ;;
	-o) outdir=${2:?-o needs a directory}; shift 2 ;;
	-t) vm_timeout=${2:?-t needs seconds}; shift 2 ;;
	-m) mem=${2:?-m needs a size}; shift 2 ;;
	-T) test_timeout=${2:?-T needs seconds}; shift 2 ;;
	-a) extra_append=${2?-a needs arguments}; shift 2 ;;
	--cmd) cmd=${2?--cmd needs a command}; have_cmd=1; shift 2 ;;
	-h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--) shift; tests+=("$@"); break ;;
	-*) echo "vm-run: unknown option $1" >&2; usage ;;
	*) tests+=("$1"); shift ;;
	esac
done
for opt in "-t $vm_timeout" "-T $test_timeout"; do
	case ${opt#* } in
	''|*[!0-9]*|0) die "${opt%% *} wants a positive number of seconds, not '${opt#* }'" ;;
	esac
done

vmroot=${GPUVIRT_VM_ROOT:-/}
[ -d "$vmroot" ] || die "GPUVIRT_VM_ROOT: no directory $vmroot"
vmroot=$(cd "$vmroot" && pwd -P)
if [ "$vmroot" != / ]; then
	[ -n "$kver" ] || die "GPUVIRT_VM_ROOT=$vmroot needs -k KVER (e.g. scripts/kver.sh 13-6.12)"
	if [ ! -x "$vmroot/bin/sh" ] || [ ! -x "$vmroot/usr/bin/env" ]; then
		die "GPUVIRT_VM_ROOT: $vmroot is not a root file system (no /bin/sh)"
	fi
fi
if [ -z "$kver" ]; then
	kver=$("$SRC/scripts/kver.sh" 6.1) || die "no 6.1 kernel found (scripts/kver.sh 6.1)"
fi
kroot=${vmroot%/}
kernel=${GPUVIRT_VM_KERNEL:-$kroot/boot/vmlinuz-$kver}
moddir=${GPUVIRT_VM_MODDIR:-$kroot/lib/modules/$kver}
[ -r "$kernel" ] || die "no kernel image $kernel"
[ -d "$moddir" ] || die "no $moddir for the guest"

# The emulator the guest runs in (GPUVIRT_VM_QEMU, "The emulator" above).
qemu_cmd=(qemu-system-x86_64)
qemu_what="the host's QEMU"
case ${GPUVIRT_VM_QEMU:=auto} in
host) ;;
auto|trixie)
	troot=""
	if st=$("$SRC/scripts/trixie-root.sh" --status 2>/dev/null); then
		troot=${st#cached }
	fi
	if [ -n "$troot" ] && [ -x "$troot/usr/bin/qemu-system-x86_64" ] &&
	   [ -e "$troot/lib64/ld-linux-x86-64.so.2" ]; then
		# The root's loader and libraries; the root's firmware first
		# (-L) and its modules: the binary's own paths name the host's.
		qemu_cmd=(env "QEMU_MODULE_DIR=$troot/usr/lib/x86_64-linux-gnu/qemu"
			  "$troot/lib64/ld-linux-x86-64.so.2"
			  --library-path "$troot/usr/lib/x86_64-linux-gnu"
			  "$troot/usr/bin/qemu-system-x86_64" -L "$troot/usr/share/qemu")
		qemu_what="the trixie root's QEMU"
	elif [ "$GPUVIRT_VM_QEMU" = trixie ]; then
		die "GPUVIRT_VM_QEMU=trixie: the trixie root is not built, or has no QEMU (scripts/trixie-root.sh)"
	fi ;;
*) die "GPUVIRT_VM_QEMU is host, trixie or auto, not '$GPUVIRT_VM_QEMU'" ;;
esac
[ "${qemu_cmd[0]}" != qemu-system-x86_64 ] || command -v qemu-system-x86_64 >/dev/null ||
	die "qemu-system-x86_64 not found; run scripts/deps.sh"
qemu_ver=$("${qemu_cmd[@]}" --version 2>/dev/null | sed -n '1s/^QEMU emulator version \([^ ]*\).*/\1/p')
[ -n "$qemu_ver" ] || die "$qemu_what does not start (${qemu_cmd[*]} --version)"
case $SRC in
*[[:space:]]*) die "the repo path '$SRC' contains white space; the guest cannot use it" ;;
esac
case $vmroot in
*[[:space:]]*) die "the root path '$vmroot' contains white space; the guest cannot use it" ;;
esac

# Test selection, resolved here so that the host knows what should run.
if [ ${#tests[@]} -eq 0 ] && [ $have_cmd -eq 0 ]; then
	[ -r "$SRC/selftests/vm/TESTS" ] || die "no TEST given and no selftests/vm/TESTS"
	mapfile -t tests < <(sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' \
		-e '/^$/d' "$SRC/selftests/vm/TESTS")
	[ ${#tests[@]} -gt 0 ] || die "selftests/vm/TESTS lists no test"
fi
for t in "${tests[@]}"; do
	case $t in
	*/*|.*|*[[:space:]]*|'') die "bad test name '$t' (want foo.sh or foo, see -h)" ;;
	esac
done
selected=("${tests[@]}")
[ $have_cmd -eq 0 ] || selected+=("cmd")

outdir=${outdir:-$SRC/build/$kver/vm-run}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd -P)
# One run per OUTDIR at a time; runs with different OUTDIRs go in parallel.
exec 9>"$outdir/.lock"
if ! flock -n 9; then
	echo "vm-run: $outdir is in use by another vm-run; waiting (or pass -o DIR)" >&2
	flock 9
fi
gdir=$outdir/guest
rm -rf "$gdir"
rm -f "$outdir"/{ktap.log,counts,console.log,qemu.log}
mkdir -p "$gdir"
echo "$SRC" > "$gdir/repo"
printf '%s\n' "${tests[@]}" > "$gdir/tests"
echo "$test_timeout" > "$gdir/test-timeout"
[ $have_cmd -eq 0 ] || printf '%s\n' "$cmd" > "$gdir/cmd"
[ -z "${GPUVIRT_VM_MODDIR:-}" ] || (cd "$moddir" && pwd -P) > "$gdir/moddir"
[ -z "${GPUVIRT_VM_AFTER_TEST:-}" ] || printf '%s\n' "$GPUVIRT_VM_AFTER_TEST" > "$gdir/after-test"

# The initramfs and the PVH image are cached per kernel and shared by
# parallel runs: one run at a time makes or checks them.
mkdir -p "$SRC/build/$kver"
exec 8>"$SRC/build/$kver/.vm-cache.lock"
flock 8
initramfs=$(GPUVIRT_VM_MODDIR=$moddir "$LIB/mk-initramfs" "$kver" "$SRC/build/$kver/vm-initramfs.cpio") ||
	die "could not build the initramfs for $kver"

# Boot the uncompressed vmlinux through its PVH entry when it has one: the
# bzImage's firmware setup and xz decompression cost 4-7 s under TCG.
# Cached in build/KVER/vmlinux.pvh; GPUVIRT_VM_BZIMAGE=1 boots the bzImage.
boot_image=$kernel
if [ -z "${GPUVIRT_VM_BZIMAGE:-}" ]; then
	pvh=$SRC/build/$kver/vmlinux.pvh
	pvh_key=$(stat -L -c '%n %s %Y' "$kernel" "$LIB/extract-vmlinux" | sha256sum | cut -d' ' -f1)
	if [ -s "$pvh" ] && [ "$(cat "$pvh.key" 2>/dev/null)" = "$pvh_key" ]; then
		boot_image=$pvh
	elif "$LIB/extract-vmlinux" "$kernel" "$pvh"; then
		echo "$pvh_key" > "$pvh.key"
		boot_image=$pvh
	else
		echo "vm-run: booting the bzImage $kernel (slower)" >&2
	fi
fi
exec 8>&-

# no_timer_check: under TCG on a busy host the IO-APIC timer check can fail
# and panic 6.1 ("timer doesn't work through Interrupt-remapped IO-APIC").
bios=()
[ -z "${GPUVIRT_VM_BIOS:-}" ] || bios=(-bios "$GPUVIRT_VM_BIOS")
cpu=()
[ -z "${GPUVIRT_VM_CPU:-}" ] || cpu=(-cpu "$GPUVIRT_VM_CPU")
# iomem=strict: user space may not map busy, exclusive I/O memory, as on
# Debian's kernels (CONFIG_STRICT_DEVMEM); the debug kernel, built from
# tinyconfig, has no /dev/mem and would not check (sim_pci.sh relies on it)
append="console=ttyS0,115200 panic=-1 intel_iommu=on log_buf_len=4M no_timer_check iomem=strict"
append+=" printk.devkmsg=on rdinit=/init"
# gvroot=DIR: the guest's root is DIR of the host root share (guest-init).
[ "$vmroot" = / ] || append+=" gvroot=$vmroot"
append+=" $extra_append"

qemu=("${qemu_cmd[@]}" ${bios[@]+"${bios[@]}"} ${cpu[@]+"${cpu[@]}"}
	-nodefaults -no-user-config -no-reboot
	-machine pc-q35-7.2 -accel tcg,thread=single -smp 2 -m "$mem"
	-display none -monitor none -serial "file:$outdir/console.log"
	-kernel "$boot_image" -initrd "$initramfs" -append "$append"
	-device intel-iommu,intremap=on,caching-mode=on
	-device bochs-display,addr=0x5.0,multifunction=on
	-device ich9-intel-hda,addr=0x5.1
	-device pcie-root-port,id=rp1,bus=pcie.0,chassis=1,slot=1,addr=0x6.0
	-device bochs-display,bus=rp1,addr=0x0.0
	-device edu,addr=0x7.0
	-fsdev local,id=hr,path=/,security_model=none,readonly=on,multidevs=remap
	-device virtio-9p-pci,fsdev=hr,mount_tag=hostroot,addr=0x1d.0
	-fsdev "local,id=gvout,path=$gdir,security_model=none"
	-device virtio-9p-pci,fsdev=gvout,mount_tag=gvout,addr=0x1e.0
)

rootnote=""
[ "$vmroot" = / ] || rootnote=" with root $vmroot"
[ ${#cpu[@]} = 0 ] || rootnote+=", CPU model $GPUVIRT_VM_CPU"
echo "vm-run: booting $kver from ${boot_image#"$SRC"/}$rootnote in $qemu_what $qemu_ver (${#selected[@]} test(s), bound ${vm_timeout} s, logs in $outdir)" >&2
t0=$(date +%s)
set +e
timeout -k 5 "$vm_timeout" "${qemu[@]}" > "$outdir/qemu.log" 2>&1 < /dev/null
qrc=$?
set -e
elapsed=$(($(date +%s) - t0))
echo "vm-run: guest ran ${elapsed} s (qemu exit $qrc)" >&2

# What happened to the guest.
state=done
why=""
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	state=hung
	why="guest hung: killed after ${vm_timeout} s"
elif [ ! -e "$gdir/started" ]; then
	state=died
	why="guest died before the tests started (qemu exit $qrc)"
	if [ -s "$gdir/init-error" ]; then
		why+=": $(head -c 300 "$gdir/init-error")"
	elif [ -s "$gdir/init-done" ]; then
		why+=": the suite driver failed to start (exit $(cat "$gdir/init-done"))"
	elif grep -q 'Kernel panic' "$outdir/console.log" 2>/dev/null; then
		why+=": kernel panic"
	fi
elif [ ! -e "$gdir/suite.done" ] || [ ! -e "$gdir/init-done" ]; then
	state=died
	why="guest died during the tests (qemu exit $qrc)"
	grep -q 'Kernel panic' "$outdir/console.log" 2>/dev/null && why+=": kernel panic"
elif [ $qrc -ne 0 ]; then
	state=died
	why="qemu failed (exit $qrc) after the tests; see $outdir/qemu.log"
fi
if [ $state = hung ] && [ -e "$gdir/init-done" ]; then
	why="guest hung after the tests (poweroff?): killed after ${vm_timeout} s"
fi

# Assemble the KTAP report.
body=$outdir/ktap.body
: > "$body"
ran=0
if [ -e "$gdir/guest.ktap" ]; then
	cat "$gdir/guest.ktap" >> "$body"
	ran=$(grep -cE '^(not )?ok [0-9]+' "$gdir/guest.ktap" || true)
fi
n=$ran
if [ $state != done ]; then
	if [ -s "$gdir/current" ]; then
		read -r _cn cname < "$gdir/current"
		n=$((n + 1))
		echo "    # vm-run: the guest never finished this test: $why" >> "$body"
		echo "not ok $n $cname" >> "$body"
	fi
	for ((i = n; i < ${#selected[@]}; i++)); do
		n=$((n + 1))
		echo "ok $n ${selected[i]} # SKIP not run: $why" >> "$body"
	done
	n=$((n + 1))
	echo "    # vm-run: $why" >> "$body"
	echo "    # vm-run: serial console log: $outdir/console.log" >> "$body"
	if [ -s "$outdir/console.log" ]; then
		tail -n 15 "$outdir/console.log" | tr -d '\r' | sed 's/^/    # console: /' >> "$body"
	fi
	echo "not ok $n guest-$state" >> "$body"
fi

scan_files=()
[ -s "$gdir/dmesg" ] && scan_files+=("$gdir/dmesg")
[ -s "$outdir/console.log" ] && scan_files+=("$outdir/console.log")
scan_args=()
taint=""
if [ -s "$gdir/tainted" ]; then
	read -r taint < "$gdir/tainted"
	scan_args+=(--taint "$taint")
fi
n=$((n + 1))
scan_rc=0
if [ ${#scan_files[@]} -eq 0 ] && [ -z "$taint" ]; then
	echo "    # vm-run: no kernel log at all (empty console log)" >> "$body"
	scan_rc=1
else
	"$LIB/logscan" "${scan_args[@]}" "${scan_files[@]}" > "$outdir/logscan.out" 2>&1 || scan_rc=$?
	sed 's/^/    # /' "$outdir/logscan.out" >> "$body"
	if [ -z "$taint" ]; then
		echo "    # vm-run: taint not checked: the guest did not save it" >> "$body"
	fi
fi
if [ $scan_rc -eq 0 ]; then
	echo "ok $n kernel-log-clean" >> "$body"
else
	echo "not ok $n kernel-log-clean" >> "$body"
fi

{
	echo "TAP version 13"
	echo "1..$n"
	cat "$body"
} > "$outdir/ktap.log"
rm -f "$body"
cat "$outdir/ktap.log"

"$LIB/ktap-count" "$outdir/ktap.log" > "$outdir/counts" || die "ktap-count failed"
read -r pass fail skip < "$outdir/counts"
# Belt and braces: a top-level failure always counts.
if [ "$fail" -eq 0 ] && grep -q '^not ok ' "$outdir/ktap.log"; then
	fail=1
	echo "$pass $fail $skip" > "$outdir/counts"
fi
[ $state = done ] || echo "vm-run: $kver: $why" >&2
[ $scan_rc -eq 0 ] || echo "vm-run: $kver: kernel log not clean:" \
	"$(head -n 3 "$outdir/logscan.out" | tr '\n' ' ')" >&2
echo "vm-run: $kver: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
