#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-package: the Debian package path of a hypervisor host, end to
# end, on this machine (Debian 12, as root). Prints KTAP.
#
#   build     copy the worktree (uncommitted work included, build/ and .git
#             left out) to build/package/src and run dpkg-buildpackage -b
#             there; the packages land in build/package/
#   lintian   no error or warning on the .changes (overrides are in
#             debian/*.lintian-overrides, each with its reason)
#   install   apt-get install gpuvirt-dkms and gpuvirt-tools; DKMS builds
#             the modules for the 6.1 and 6.12 kernels' headers, and
#             "dkms status" lists both as installed; systemd-analyze
#             verify accepts the installed unit
#   modules   for each kernel: modinfo and modprobe resolve the three
#             modules to updates/dkms, every parameter has a description,
#             and the dependencies (gpuvirt_sim -> gpuvirt,
#             gpuvirt_vfio_pci -> vfio-pci-core) come from modules.dep
#   vm        boot each kernel of GPUVIRT_PACKAGE_VM_LINES (default "6.1
#             6.12"; make check boots 6.1 alone) with the host's root
#             shared read-only (selftests/vm-run.sh): plain "modprobe
#             gpuvirt_sim" loads the DKMS
#             modules, the installed unit's ExecStart applies the installed
#             example configuration and the installed gpuvirtctl asserts it
#             (this script with --guest, inside the VM)
#   purge     apt-get purge both; no module is left under
#             /lib/modules/*/updates, DKMS knows no gpuvirt, none of the
#             files dpkg listed is left, and nothing new is left on the host
#
# The packages are purged on exit, whatever happened. The script refuses to
# run when gpuvirt-dkms or gpuvirt-tools is already installed: it must not
# take an administrator's installation away. Logs and the packages stay in
# build/package/ (build.log, lintian.log, install.log, purge.log, vm-KVER/).
#
# With --trixie, the same path on Debian 13, in the cached root of
# scripts/trixie-root.sh (which must exist), nothing installed on the host:
#   build     dpkg-buildpackage -b in the root (trixie-root.sh --run), with
#             trixie's debhelper and gcc-14; packages in build/package-trixie/
#   lintian   trixie's lintian (in the root): no error or warning
#   install   apt-get install both in an overlay on the root; DKMS builds
#             the modules for trixie's 6.12 and the newest 7.x (kver.sh
#             13-6.12 and 7), "dkms status" lists both, trixie's
#             systemd-analyze verify accepts the unit
#   modules   as above, with the root's kmod, for each kernel
#   vm        boot the newest 7.x with that overlay as the guest's root
#             (GPUVIRT_VM_ROOT): the same --guest checks
#   purge     apt-get purge both, the checks above, and nothing in the
#             whole root is new, changed or gone but what dpkg, apt,
#             man-db and DKMS keep of their own (TRIXIE_ALLOWED)
# How the installed state reaches the VM, and why nothing can leak to the
# host or the cache, is told at trixie() below. Logs in build/package-trixie/.
#
# Usage: scripts/check-package.sh            (as root, on the host)
#        scripts/check-package.sh --trixie   (as root, on the host)
#        scripts/check-package.sh --guest    (inside the test VM only)
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd -P)
. "$SRC/selftests/lib/ktap.sh"

PKGS=(gpuvirt-dkms gpuvirt-tools)
MODS=(gpuvirt gpuvirt_sim gpuvirt_vfio_pci)
# The unit, where the package puts it: /lib/systemd/system on Debian 12,
# /usr/lib/systemd/system from Debian 13 on (debian/rules).
UNIT_RE='/systemd/system/gpuvirt-apply\.service$'
EXAMPLE=/usr/share/doc/gpuvirt-tools/examples/gpuvirt.yaml

# The build ID of a module file, .ko or .ko.xz, as hex.
ko_build_id() {
	local f=$1 tmp id
	case $f in
	*.xz)
		tmp=$(mktemp)
		xz -dc "$f" >"$tmp"
		id=$(readelf -n "$tmp" | sed -n 's/^ *Build ID: *//p')
		rm -f "$tmp"
		;;
	*) id=$(readelf -n "$f" | sed -n 's/^ *Build ID: *//p') ;;
	esac
	echo "$id"
}

# The build ID of a loaded module, from its notes in sysfs: the note's
# descriptor is the last 20 bytes (SHA-1) of .note.gnu.build-id.
sysfs_build_id() {
	local n=/sys/module/$1/notes/.note.gnu.build-id
	[ -r "$n" ] || return 1
	tail -c 20 "$n" | od -An -tx1 | tr -d ' \n'
}

# params_described KO: every parameter in .modinfo has a description.
params_described() {
	local ko=$1 tmp names n rc=0
	tmp=$(mktemp)
	case $ko in
	*.xz) xz -dc "$ko" >"$tmp" ;;
	*) cp "$ko" "$tmp" ;;
	esac
	objcopy -O binary --only-section=.modinfo "$tmp" "$tmp.mi"
	names=$(tr '\0' '\n' <"$tmp.mi" | sed -n 's/^parmtype=\([^:]*\):.*/\1/p')
	for n in $names; do
		if ! tr '\0' '\n' <"$tmp.mi" | grep -E "^parm=$n:.+" >/dev/null; then
			ktap_diag "$(basename "$ko"): parameter $n has no MODULE_PARM_DESC"
			rc=1
		fi
	done
	tr '\0' '\n' <"$tmp.mi" | sed -n "s/^parm=/# $(basename "$ko") parm: /p"
	rm -f "$tmp" "$tmp.mi"
	return $rc
}

# in_dkms_tree PATH KVER MODULE: PATH is MODULE as DKMS installs it for
# KVER, under /lib/modules (or /usr/lib/modules, where kmod says so).
in_dkms_tree() {
	case $1 in
	"/lib/modules/$2/updates/dkms/$3.ko"* | "/usr/lib/modules/$2/updates/dkms/$3.ko"*) return 0 ;;
	esac
	return 1
}

# ---------------------------------------------------------------- guest
# Runs inside the VM, chrooted into the host's root (read-only), with the
# packages installed on the host; or, with --trixie, into the Debian 13
# root with the packages installed in it. No systemd or udev runs there.
guest() {
	local kver m f u want got ok exec_start cmdline n mnt=0 argv=() UNIT
	kver=$(uname -r)
	UNIT=$(dpkg-query -L gpuvirt-tools 2>/dev/null | grep -m1 -E "$UNIT_RE")

	cleanup_guest() {
		local d
		for d in /sys/bus/mdev/devices/*; do
			[ -e "$d/remove" ] && echo 1 >"$d/remove" 2>/dev/null
		done
		modprobe -r gpuvirt_vfio_pci gpuvirt_sim gpuvirt 2>/dev/null
		[ "$mnt" -eq 1 ] && umount /etc/gpuvirt
	}
	trap cleanup_guest EXIT

	ktap_plan 10

	ok=0
	for m in "${MODS[@]}"; do
		if [ -e "/sys/module/$m" ]; then
			ktap_diag "$m is loaded already"
			ok=1
		fi
	done
	ktap_result $ok "$kver: no gpuvirt module is loaded before modprobe"

	modprobe gpuvirt_sim
	ktap_result $? "$kver: modprobe gpuvirt_sim"

	[ -e /sys/module/gpuvirt ] && [ -e /sys/module/gpuvirt_sim ]
	ktap_result $? "$kver: modprobe gpuvirt_sim loaded gpuvirt too"

	# The modules that run are the files DKMS installed, byte for byte as
	# far as the linker's build ID tells.
	ok=0
	for m in gpuvirt gpuvirt_sim; do
		f=$(modinfo -n "$m" 2>/dev/null)
		if ! in_dkms_tree "$f" "$kver" "$m"; then
			ktap_diag "$m: modinfo -n says '$f', not updates/dkms"
			ok=1
			continue
		fi
		want=$(ko_build_id "$f")
		got=$(sysfs_build_id "$m")
		ktap_diag "$m: $f, build ID $want, loaded $got"
		[ -n "$want" ] && [ "$want" = "$got" ] || ok=1
	done
	ktap_result $ok "$kver: the loaded gpuvirt and gpuvirt_sim are the DKMS-installed files"

	ok=0
	if modprobe gpuvirt_vfio_pci; then
		[ -e /sys/module/vfio_pci_core ] || { ktap_diag "vfio_pci_core is not loaded"; ok=1; }
		f=$(modinfo -n gpuvirt_vfio_pci 2>/dev/null)
		want=$(ko_build_id "$f")
		got=$(sysfs_build_id gpuvirt_vfio_pci)
		ktap_diag "gpuvirt_vfio_pci: $f, build ID $want, loaded $got"
		[ -n "$want" ] && [ "$want" = "$got" ] || ok=1
		modprobe -r gpuvirt_vfio_pci || ok=1
	else
		ok=1
	fi
	ktap_result $ok "$kver: modprobe gpuvirt_vfio_pci loads the DKMS file and pulls in vfio_pci_core"

	# The unit as systemd would run it: its condition, then its ExecStart,
	# with the installed example as /etc/gpuvirt/gpuvirt.yaml (a tmpfs over
	# the package's empty directory; the root is read-only here).
	exec_start="" cmdline=""
	if [ -n "$UNIT" ]; then
		exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT")
		cmdline=$(sed -n 's/^ConditionPathExists=//p' "$UNIT")
	fi
	ktap_diag "${UNIT:-no gpuvirt-apply.service in dpkg -L gpuvirt-tools}: ExecStart=$exec_start" \
		"ConditionPathExists=$cmdline"
	ok=1
	if [ -n "$UNIT" ] && [ -n "$exec_start" ] && [ "$cmdline" = /etc/gpuvirt/gpuvirt.yaml ] &&
		mount -t tmpfs -o size=1m gpuvirt-etc /etc/gpuvirt; then
		mnt=1
		if [ -e "$EXAMPLE" ]; then
			cp "$EXAMPLE" /etc/gpuvirt/gpuvirt.yaml
		else
			zcat "$EXAMPLE.gz" >/etc/gpuvirt/gpuvirt.yaml
		fi
		# ExecStart is a plain command line: no quoting, no specifiers.
		read -r -a argv <<<"$exec_start"
		"${argv[@]}" 2>&1 | sed 's/^/# apply: /'
		ok=${PIPESTATUS[0]}
	fi
	ktap_result "$ok" "$kver: the unit's ExecStart applies the installed example configuration"

	/usr/sbin/gpuvirtctl assert -f /etc/gpuvirt/gpuvirt.yaml 2>&1 | sed 's/^/# assert: /'
	ktap_result "${PIPESTATUS[0]}" "$kver: gpuvirtctl assert -f /etc/gpuvirt/gpuvirt.yaml"

	# A second run, as at the next boot or from the udev rule, changes
	# nothing and still succeeds.
	"${argv[@]}" >/tmp/apply2.out 2>&1
	ok=$?
	sed 's/^/# apply again: /' /tmp/apply2.out
	ktap_result $ok "$kver: applying again succeeds (idempotent)"

	# Seen from sysfs too, not only through gpuvirtctl: every vGPU the
	# file lists is an mdev device.
	/usr/sbin/gpuvirtctl vgpu show 2>&1 | sed 's/^/# /'
	ok=0
	n=0
	for u in $(sed -n 's/^[[:space:]-]*uuid:[[:space:]]*\([0-9a-f-]*\).*/\1/p' /etc/gpuvirt/gpuvirt.yaml); do
		n=$((n + 1))
		[ -e "/sys/bus/mdev/devices/$u" ] || { ktap_diag "no mdev device $u"; ok=1; }
	done
	[ $n -gt 0 ] || { ktap_diag "no uuid found in the example"; ok=1; }
	ktap_result $ok "$kver: the example's $n vGPUs are mdev devices"

	# and every VF vGPU it lists is a VF with a type
	ok=0
	n=0
	for vf in $(sed -n 's/^[[:space:]-]*vf:[[:space:]]*\([0-9a-f:.]*\).*/\1/p' /etc/gpuvirt/gpuvirt.yaml); do
		n=$((n + 1))
		t=$(cat "/sys/bus/pci/devices/$vf/gpuvirt/current_vgpu_type" 2>/dev/null)
		[ -n "$t" ] && [ "$t" != 0 ] || { ktap_diag "VF $vf has no type"; ok=1; }
	done
	[ $n -gt 0 ] || { ktap_diag "no vf found in the example"; ok=1; }
	ktap_result $ok "$kver: the example's $n VF vGPUs are typed VFs"

	ktap_finish
}

# ---------------------------------------------------------------- trixie
# trixie(), for --trixie: the same path on Debian 13, in the cached root of
# scripts/trixie-root.sh, with the packages built and linted by trixie's
# tools (trixie-root.sh --run). The script runs in a mount namespace of its
# own (it re-executes itself under unshare as --trixie-ns), where, after the
# build, build/package-trixie/root is an overlay: the cached root below, a
# tmpfs above, as --run makes, but living as long as the script. The packages
# installed in it are still there when a VM boots with it as its root
# (GPUVIRT_VM_ROOT: QEMU is a child of the script, so its 9p export of /
# sees the overlay), and when they are purged; the overlay's upper
# directory then holds exactly what the run changed in the root. The cache
# never changes, and nothing stays mounted on the host: the mounts go with
# the namespace, however the script ends.

# The VM boots the newest kernel; DKMS builds for both.
TRIXIE_LINES=(13-6.12 7)
TRIXIE_VM_LINES=(7)

# What may differ in the root after the purge, and why; anything else new,
# changed or removed anywhere in it is left behind (or damage).
TRIXIE_ALLOWED=(
	# dpkg's and apt's own records and logs of the install and the purge
	# (apt keeps what it knows of local .deb files in lists/auxfiles)
	'/var/lib/dpkg/(status|status-old|available|lock|lock-frontend|triggers/.*)'
	'/var/lib/apt/extended_states'
	'/var/lib/apt/lists/auxfiles'
	'/var/cache/apt/(pkgcache|srcpkgcache)\.bin'
	'/var/cache/debconf/(config|templates|passwords)\.dat(-old)?'
	'/var/log/(dpkg\.log|alternatives\.log|apt/(history\.log|term\.log|eipp\.log\.xz))'
	# man-db's index, which its trigger updates for gpuvirtctl(8), and the
	# cat page man leaves when systemd-analyze verify looks the page up
	'/var/cache/man(/.*)?'
	# DKMS makes its module-signing key pair on its first build on a
	# machine, whichever package asks, and keeps it for every later one
	'/var/lib/dkms/mok\.(key|pub)'
)

# skip_rest WHY: the tests after a fatal failure, as skipped ($ntests is
# the plan), then the end of the run.
skip_rest() {
	while [ "$KTAP_N" -lt "$ntests" ]; do
		ktap_skip "not run" "$1"
	done
	echo "# check-package: took $(($(date +%s) - T0)) s"
	ktap_finish
}

# build_debs NAME RUNNER...: test 1, NAME, the packages built from a copy of
# the worktree in $OUT/src (dpkg-buildpackage writes to its parent, $OUT).
# RUNNER... is a command that runs dpkg-buildpackage in the directory given
# as its last argument. Sets ver, arch, debs and changes; a failure skips
# the rest.
build_debs() {
	local name=$1 s rc f
	shift
	s=$(date +%s)
	mkdir -p "$OUT/src"
	tar -C "$SRC" --exclude=./build --exclude=./.git -cf - . | tar -C "$OUT/src" -xf - &&
		"$@" "$OUT/src" >"$OUT/build.log" 2>&1
	rc=$?
	[ $rc -ne 0 ] && tail -n 25 "$OUT/build.log" | sed 's/^/# /'
	ver=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
	arch=$(dpkg --print-architecture)
	debs=("$OUT/gpuvirt-dkms_${ver}_all.deb" "$OUT/gpuvirt-tools_${ver}_${arch}.deb")
	changes=$OUT/gpuvirt_${ver}_${arch}.changes
	for f in "${debs[@]}" "$changes"; do
		[ -e "$f" ] || { ktap_diag "missing: $f"; rc=1; }
	done
	ktap_result $rc "$name ($(($(date +%s) - s)) s)"
	[ $rc -eq 0 ] || skip_rest "the packages did not build"
	for f in "$OUT"/*.deb; do
		ktap_diag "$(basename "$f"): $(stat -c %s "$f") bytes, Installed-Size $(dpkg-deb -f "$f" Installed-Size) KiB"
	done
}

# modules_found NAME KVER FSROOT RUNNER...: test NAME, what the module tools
# (run through RUNNER..., which may be empty) make of the DKMS modules for
# KVER installed under FSROOT (/ for the host).
modules_found() {
	local name=$1 k=$2 fsroot=$3 ok=0 m f vm deps
	shift 3
	for m in "${MODS[@]}"; do
		f=$("$@" modinfo -k "$k" -n "$m" 2>/dev/null)
		if ! in_dkms_tree "$f" "$k" "$m"; then
			ktap_diag "$k: modinfo -n $m says '$f'"
			ok=1
			continue
		fi
		vm=$("$@" modinfo -k "$k" -F vermagic "$m" | cut -d' ' -f1)
		[ "$vm" = "$k" ] || { ktap_diag "$k: $m has vermagic $vm"; ok=1; }
		params_described "${fsroot%/}$f" || ok=1
	done
	deps=$("$@" modprobe -S "$k" --show-depends gpuvirt_sim 2>&1)
	echo "$deps" | sed "s/^/# $k: modprobe --show-depends gpuvirt_sim: /"
	# (here-strings: echo writes a line at a time, and grep -q leaving
	# after the line it wanted gives echo SIGPIPE, a failure under pipefail)
	grep -q "/updates/dkms/gpuvirt\.ko" <<<"$deps" ||
		{ ktap_diag "$k: gpuvirt_sim's dependencies name no DKMS gpuvirt.ko"; ok=1; }
	deps=$("$@" modprobe -S "$k" --show-depends gpuvirt_vfio_pci 2>&1)
	echo "$deps" | sed "s/^/# $k: modprobe --show-depends gpuvirt_vfio_pci: /"
	grep -q "/vfio-pci-core\.ko" <<<"$deps" ||
		{ ktap_diag "$k: gpuvirt_vfio_pci's dependencies name no vfio-pci-core.ko"; ok=1; }
	grep -q "/updates/dkms/gpuvirt_vfio_pci\.ko" <<<"$deps" ||
		{ ktap_diag "$k: modprobe does not resolve gpuvirt_vfio_pci to the DKMS module"; ok=1; }
	ktap_result $ok "$name"
}

# vm_package_test NAME KVER ROOT: test NAME, a VM booted on KVER with ROOT
# as its root (/ for the host's) running this script's --guest checks
# against the packages installed there; skipped when they did not install.
vm_package_test() {
	local name=$1 k=$2 root=$3 s rc
	if [ "$install_rc" -ne 0 ]; then
		ktap_skip "$name" "the packages did not install"
		return
	fi
	s=$(date +%s)
	GPUVIRT_VM_ROOT=$root "$SRC/selftests/vm-run.sh" -k "$k" -o "$OUT/vm-$k" -t 900 -T 600 \
		--cmd 'scripts/check-package.sh --guest' >"$OUT/vm-$k.log" 2>&1
	rc=$?
	sed -n '/^\(TAP version\|1\.\.[0-9]\|ok \|not ok \|    \|#\)/p' "$OUT/vm-$k.log" | sed 's/^/    /'
	grep '^vm-run:' "$OUT/vm-$k.log" | sed 's/^/# /'
	ktap_result $rc "$name ($(($(date +%s) - s)) s)"
}

# dpkg-buildpackage in DIR, on the host.
host_buildpackage() {
	(cd "$1" && exec dpkg-buildpackage -us -uc -b)
}

# dpkg-buildpackage in DIR, in the trixie root.
trixie_buildpackage() {
	# shellcheck disable=SC2016 # expanded in the root
	nice -n 19 "$SRC/scripts/trixie-root.sh" --run \
		sh -c 'cd "$1" && exec dpkg-buildpackage -us -uc -b' build "$1"
}

# trixie_inroot [--nice] CMD...: CMD chrooted in the overlay $M, with proc,
# sys, dev, tmpfs on /tmp, /var/tmp and /run, and $OUT (the packages) bound
# at /run/gvpkg, in a mount namespace of its own: nothing it mounts is left
# in the overlay, which the VM takes as its root. --nice: at nice 19 (the
# DKMS builds).
trixie_inroot() {
	local nice=0
	[ "$1" = --nice ] && { nice=19; shift; }
	# shellcheck disable=SC2016 # expanded by the namespace's sh
	nice -n $nice unshare -m -- /bin/sh -c '
		m=$1 pkg=$2; shift 2
		mount -t proc proc "$m/proc" &&
		mount -t sysfs sysfs "$m/sys" &&
		mount --rbind /dev "$m/dev" &&
		mount -t tmpfs -o mode=1777 tmpfs "$m/tmp" &&
		mount -t tmpfs -o mode=1777 tmpfs "$m/var/tmp" &&
		mount -t tmpfs -o mode=755 tmpfs "$m/run" &&
		mkdir "$m/run/gvpkg" && mount --bind "$pkg" "$m/run/gvpkg" || exit 125
		exec chroot "$m" /usr/bin/env -i \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 TERM=dumb TMPDIR=/tmp \
			DEBIAN_FRONTEND=noninteractive "$@"' inroot "$M" "$OUT" "$@"
}

# trixie_changes: what the run changed in the root, one "new PATH",
# "changed PATH" or "removed PATH" a line, from the overlay's upper
# directory: a path there is new if the cached root lacks it, changed if its
# content (or link target) differs from the cached one; a path of the cached
# root that the overlay no longer shows (a whiteout, an opaque directory) is
# removed. Directories copied up unchanged, and files whose content is the
# same (depmod's output after the purge, say), are not changes.
trixie_changes() {
	local t p d e
	(cd "$up" && find . -mindepth 1 -printf '%y %P\n') | sort -k2 |
		while read -r t p; do
			if [ "$t" = d ]; then
				[ -d "$troot/$p" ] || { echo "new /$p/"; continue; }
			elif [ "$t" = c ] && [ ! -e "$M/$p" ] && [ ! -L "$M/$p" ]; then
				continue	# a whiteout: seen below, from its directory
			elif [ ! -e "$troot/$p" ] && [ ! -L "$troot/$p" ]; then
				echo "new /$p"
				continue
			elif [ "$t" = l ]; then
				[ "$(readlink "$up/$p")" = "$(readlink "$troot/$p")" ] || echo "changed /$p"
				continue
			elif [ "$t" = f ]; then
				[ -f "$troot/$p" ] && cmp -s "$up/$p" "$troot/$p" || echo "changed /$p"
				continue
			else
				echo "changed /$p"
				continue
			fi
			# a directory of the cached root: is all of it still there?
			for e in "$troot/$p"/* "$troot/$p"/.[!.]* "$troot/$p"/..?*; do
				[ -e "$e" ] || [ -L "$e" ] || continue
				d=${e##*/}
				[ -e "$M/$p/$d" ] || [ -L "$M/$p/$d" ] || echo "removed /$p/$d"
			done
		done
}

trixie() {
	local OUT=$SRC/build/package-trixie troot tdir M up k line kvers=() vm_kvers=()
	local ver arch debs changes rc lrc ok s f m vm deps lver ntests install_rc
	local listed unit re allowed n new
	T0=$(date +%s)

	troot=$("$SRC/scripts/trixie-root.sh" --print) || exit 1
	if ! "$SRC/scripts/trixie-root.sh" --status >/dev/null; then
		echo "check-package: no Debian 13 root in the cache; build it: scripts/trixie-root.sh (as root)" >&2
		exit 1
	fi
	tdir=$(dirname "$troot")
	for line in "${TRIXIE_LINES[@]}"; do
		k=$("$SRC/scripts/kver.sh" "$line") || exit 1
		kvers+=("$k")
	done
	for line in "${TRIXIE_VM_LINES[@]}"; do
		k=$("$SRC/scripts/kver.sh" "$line") || exit 1
		vm_kvers+=("$k")
	done

	mkdir -p "$OUT"
	exec 9>"$OUT/.lock"
	if ! flock -n 9; then
		echo "check-package: another --trixie run holds $OUT; waiting" >&2
		flock 9
	fi
	rm -rf "$OUT/src" "$OUT"/*.deb "$OUT"/*.changes "$OUT"/*.buildinfo "$OUT"/*.log \
		"$OUT"/vm-*/guest "$OUT/changes" "$OUT/dpkg-files" "$OUT/deb-paths" "$OUT/existed-before"
	: >"$OUT/purge.log"

	ntests=$((9 + ${#kvers[@]} + ${#vm_kvers[@]}))
	ktap_plan "$ntests"


	# 1. build, in the root, from a copy of the worktree.
	ktap_diag "$(grep -E '^(debhelper|dpkg-dev|dh-dkms|gcc-14) ' "$tdir/packages" | tr '\n' ' ')"
	build_debs "trixie: dpkg-buildpackage -us -uc -b in the Debian 13 root" trixie_buildpackage

	# 2. trixie's lintian, as in the Debian 12 mode.
	lver=$(sed -n 's/^lintian //p' "$tdir/packages")
	s=$(date +%s)
	nice -n 19 "$SRC/scripts/trixie-root.sh" --run lintian --display-info --pedantic \
		--display-experimental --show-overrides "$changes" >"$OUT/lintian.log" 2>&1
	lrc=$?
	grep -v '^running with root privileges' "$OUT/lintian.log" | sed 's/^/# lintian: /'
	! grep -qE '^[EW]: ' "$OUT/lintian.log" && [ $lrc -eq 0 ]
	ktap_result $? "trixie: lintian $lver: no errors or warnings ($(($(date +%s) - s)) s)"

	# The overlay the rest runs in.
	M=$OUT/root
	up=$OUT/ovl/upper
	mkdir -p "$M" "$OUT/ovl"
	if ! { mount -t tmpfs -o mode=755 gpuvirt-package "$OUT/ovl" &&
		mkdir "$up" "$OUT/ovl/work" &&
		mount -t overlay overlay \
			-o "lowerdir=$troot,upperdir=$up,workdir=$OUT/ovl/work" "$M"; }; then
		skip_rest "cannot mount an overlay on $troot at $M"
	fi

	# 3. install, the way a host does. Before it: which of the packages'
	# paths exist in the root already (directories such as /usr/lib/udev).
	for f in "${debs[@]}"; do
		dpkg-deb --fsys-tarfile "$f" | tar -t
	done | sed -e 's|^\./$|/.|' -e 's|^\.||' -e 's|/$||' | sort -u >"$OUT/deb-paths"
	# shellcheck disable=SC2016 # expanded in the root
	trixie_inroot sh -c 'while IFS= read -r f; do
		if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi; done' <"$OUT/deb-paths" >"$OUT/existed-before"
	rc=0
	for p in "${PKGS[@]}"; do
		# shellcheck disable=SC2016 # a dpkg-query format
		if trixie_inroot dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
			ktap_diag "$p is in the cached root already"
			rc=1
		fi
	done
	s=$(date +%s)
	[ $rc -eq 0 ] &&
		trixie_inroot --nice apt-get install -y -q --no-install-recommends \
			"/run/gvpkg/${debs[0]##*/}" "/run/gvpkg/${debs[1]##*/}" >"$OUT/install.log" 2>&1
	rc=$?
	grep -E '^(Building|Done|Skipped|Module build|Error|E:)|dkms' "$OUT/install.log" | sed 's/^/# /'
	ktap_result $rc "trixie: apt-get install ./gpuvirt-dkms ./gpuvirt-tools in the root ($(($(date +%s) - s)) s)"
	install_rc=$rc

	ok=0
	trixie_inroot dkms status -m gpuvirt 2>/dev/null | sed 's/^/# dkms status: /'
	for k in "${kvers[@]}"; do
		# DKMS's log of each command of the build, with its time
		f=$M/var/lib/dkms/gpuvirt/$ver/$k/$(uname -m)/log/make.log
		[ -r "$f" ] || f=$M/var/lib/dkms/gpuvirt/$ver/build/make.log
		[ -r "$f" ] && awk -v k="$k" '
			/^# command: / { c = substr($0, 12) }
			/^# exit code: / { e = $4 }
			/^# elapsed time: / { printf "# %s: DKMS ran %s: exit %s, %s\n", k, c, e, $4 }' "$f"
		if ! trixie_inroot dkms status -m gpuvirt -v "$ver" -k "$k" 2>/dev/null | grep ': installed' >/dev/null; then
			ktap_diag "gpuvirt/$ver is not installed for $k"
			[ -r "$f" ] && tail -n 25 "$f" | sed "s/^/# $k make.log: /"
			ok=1
		fi
	done
	ktap_result $ok "trixie: dkms status: gpuvirt/$ver installed for ${kvers[*]}"

	# The unit as trixie's systemd reads it (the root has libvirt's units).
	unit=$(trixie_inroot dpkg-query -L gpuvirt-tools 2>/dev/null | grep -m1 -E "$UNIT_RE")
	if [ -n "$unit" ]; then
		trixie_inroot systemd-analyze verify "$unit" 2>&1 | sed 's/^/# systemd-analyze: /'
		rc=${PIPESTATUS[0]}
	else
		ktap_diag "dpkg -L gpuvirt-tools lists no gpuvirt-apply.service"
		rc=1
	fi
	ktap_result "$rc" "trixie: systemd-analyze verify ${unit:-gpuvirt-apply.service} in the root"

	# 4. what the root's module tools make of the installed modules.
	for k in "${kvers[@]}"; do
		modules_found "trixie: $k: modinfo and modprobe find the DKMS modules, parameters described, dependencies from modules.dep" \
			"$k" "$M" trixie_inroot
	done

	# 5. the VM, booted with the overlay as its root (read-only there).
	for k in "${vm_kvers[@]}"; do
		vm_package_test "trixie: vm-$k: modprobe, the unit's ExecStart and gpuvirtctl against the packages installed in the root" "$k" "$M"
	done

	# 6. purge, and look for anything left.
	listed=$OUT/dpkg-files
	for p in "${PKGS[@]}"; do
		trixie_inroot dpkg -L "$p" 2>/dev/null
	done | sort -u >"$listed"
	# Nothing installed, nothing to purge: the tests below would pass
	# without having looked at anything.
	[ -s "$listed" ] || skip_rest "no package of ours was installed in the root"
	s=$(date +%s)
	trixie_inroot --nice apt-get purge -y -q "${PKGS[@]}" >>"$OUT/purge.log" 2>&1
	rc=$?
	for p in "${PKGS[@]}"; do
		# shellcheck disable=SC2016 # a dpkg-query format
		if trixie_inroot dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
			ktap_diag "$p is still known to dpkg"
			rc=1
		fi
	done
	ktap_result $rc "trixie: apt-get purge gpuvirt-dkms gpuvirt-tools ($(($(date +%s) - s)) s)"

	# shellcheck disable=SC2016 # expanded in the root
	f=$(trixie_inroot sh -c 'find /lib/modules/*/updates -name "gpuvirt*" 2>/dev/null')
	[ -n "$f" ] && ktap_diag "left under /lib/modules/*/updates:" "$f"
	[ -z "$f" ]
	ktap_result $? "trixie: no gpuvirt module left under /lib/modules/*/updates"

	ok=0
	f=$(trixie_inroot dkms status -m gpuvirt 2>/dev/null)
	[ -n "$f" ] && { ktap_diag "dkms status: $f"; ok=1; }
	for f in /var/lib/dkms/gpuvirt /usr/src/gpuvirt-"$ver"; do
		if [ -e "$M$f" ] || [ -L "$M$f" ]; then ktap_diag "left: $f"; ok=1; fi
	done
	ktap_result $ok "trixie: DKMS knows no gpuvirt, and its source and build trees are gone"

	# What dpkg installed is gone, but for what existed before; and nothing
	# in the whole root is new, changed or gone but dpkg's and apt's
	# records, their logs and caches (TRIXIE_ALLOWED).
	ok=0
	# shellcheck disable=SC2016 # expanded in the root
	new=$(trixie_inroot sh -c 'while IFS= read -r f; do
		if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi; done' <"$listed" |
		grep -vxF -f "$OUT/existed-before")
	if [ -n "$new" ]; then
		ktap_diag "left, from dpkg -L:" "$new"
		ok=1
	fi
	ktap_diag "dpkg -L listed $(wc -l <"$listed") paths"
	trixie_changes >"$OUT/changes"
	re="^(new|changed|removed) ($(IFS='|'; echo "${TRIXIE_ALLOWED[*]}"))/?\$"
	allowed=$(grep -cE "$re" "$OUT/changes")
	new=$(grep -vE "$re" "$OUT/changes")
	n=$(wc -l <"$OUT/changes")
	ktap_diag "the root's upper directory: $n changes, $allowed of them dpkg's, apt's, man-db's or DKMS's own (build/package-trixie/changes)"
	if [ -n "$new" ]; then
		ktap_diag "left in the root:" "$new"
		ok=1
	fi
	ktap_result $ok "trixie: nothing dpkg listed is left, and nothing else in the root is new, changed or gone"

	echo "# check-package: took $(($(date +%s) - T0)) s"
	ktap_finish
}

usage() {
	echo "usage: $0 [--trixie | --guest]" >&2
	exit 2
}
case ${1:-} in
--guest)
	[ "${GPUVIRT_IN_VM:-}" = 1 ] || { echo "check-package: --guest runs in the test VM only" >&2; exit 2; }
	guest
	;;
--trixie | --trixie-ns)
	[ $# -eq 1 ] || usage
	if [ "$(id -u)" -ne 0 ]; then
		echo "TAP version 13"
		echo "1..0 # SKIP needs root (chroot, mounts)"
		exit 4
	fi
	for c in unshare chroot mount flock dpkg-deb dpkg-parsechangelog readelf objcopy xz cmp; do
		if ! command -v "$c" >/dev/null; then
			echo "check-package: $c is missing; run scripts/deps.sh as root" >&2
			exit 1
		fi
	done
	trap 'exit 130' INT TERM
	# --trixie-ns is --trixie in its own mount namespace (see above).
	[ "$1" = --trixie-ns ] || exec unshare -m --propagation private -- "$SRC/scripts/check-package.sh" --trixie-ns
	trixie
	;;
'') ;;
*) usage ;;
esac

# ---------------------------------------------------------------- host
OUT=$SRC/build/package
T0=$(date +%s)

if [ "$(id -u)" -ne 0 ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP needs root (it installs and purges packages)"
	exit 4
fi
for c in dpkg-buildpackage dh dh_dkms lintian dkms readelf; do
	if ! command -v "$c" >/dev/null; then
		echo "check-package: $c is missing; run scripts/deps.sh as root" >&2
		exit 1
	fi
done
kvers=()
for line in 6.1 6.12; do
	k=$("$SRC/scripts/kver.sh" "$line") || exit 1
	kvers+=("$k")
done
# The kernels booted with the packages: GPUVIRT_PACKAGE_VM_LINES, default
# both (make check boots 6.1 alone, check-full both: see scripts/check.sh).
vm_kvers=()
for line in ${GPUVIRT_PACKAGE_VM_LINES:-6.1 6.12}; do
	case $line in
	6.1|6.12) ;;
	*) echo "check-package: GPUVIRT_PACKAGE_VM_LINES: '$line' is not 6.1 or 6.12" >&2; exit 2 ;;
	esac
	k=$("$SRC/scripts/kver.sh" "$line") || exit 1
	vm_kvers+=("$k")
done

installed() {
	dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null | grep -qv '^not-installed$'
}
for p in "${PKGS[@]}"; do
	if installed "$p"; then
		echo "check-package: $p is installed on this host already; not touching it" >&2
		exit 1
	fi
done

export DEBIAN_FRONTEND=noninteractive

purge_all() {
	local p any=()
	for p in "${PKGS[@]}"; do
		installed "$p" && any+=("$p")
	done
	[ ${#any[@]} -eq 0 ] || apt-get purge -y -q -o DPkg::Lock::Timeout=300 "${any[@]}"
}
cleanup() {
	if purge_all >>"$OUT/purge.log" 2>&1; then :; else
		echo "check-package: purging on exit failed, see $OUT/purge.log" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The places a package, dpkg, DKMS or systemd's helper writes to: what is
# new in them after the purge is left behind.
WATCH=(/etc /lib/modprobe.d /lib/systemd /lib/udev /lib/modules /usr/sbin /usr/src
       /usr/share/doc /usr/share/man /usr/share/bash-completion /var/lib/dkms
       /var/lib/dpkg/info /var/lib/systemd)
snapshot() {
	find "${WATCH[@]}" -xdev 2>/dev/null | sort
}

mkdir -p "$OUT"
rm -rf "$OUT/src" "$OUT"/*.deb "$OUT"/*.changes "$OUT"/*.buildinfo "$OUT"/*.log "$OUT"/vm-*/guest
: >"$OUT/purge.log"

ntests=$((9 + ${#kvers[@]} + ${#vm_kvers[@]}))
ktap_plan $ntests

# 1. build, from a copy of the worktree.
build_debs "dpkg-buildpackage -us -uc -b" host_buildpackage

# 2. lintian, with every tag shown down to pedantic and experimental ones
# and the overrides; only errors and warnings fail.
lintian --display-info --pedantic --display-experimental --show-overrides \
	"$changes" >"$OUT/lintian.log" 2>&1
lrc=$?
grep -v '^running with root privileges' "$OUT/lintian.log" | sed 's/^/# lintian: /'
! grep -qE '^[EW]: ' "$OUT/lintian.log" && [ $lrc -eq 0 ]
ktap_result $? "lintian: no errors or warnings"

# 3. install, the way a host does. Before it: the paths on the host, and
# which of the packages' paths exist already (directories such as /etc).
before=$OUT/files.before
snapshot >"$before"
for f in "${debs[@]}"; do
	dpkg-deb --fsys-tarfile "$f" | tar -t
done | sed -e 's|^\./$|/.|' -e 's|^\.||' -e 's|/$||' | sort -u |
	while IFS= read -r f; do
		if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi
	done >"$OUT/existed-before"
s=$(date +%s)
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${debs[@]}" >"$OUT/install.log" 2>&1
rc=$?
grep -E '^(Building|Done|Skipped|Module build|Error|E:)|dkms' "$OUT/install.log" | sed 's/^/# /'
ktap_result $rc "apt-get install ./gpuvirt-dkms ./gpuvirt-tools ($(($(date +%s) - s)) s)"
install_rc=$rc
f=/var/lib/dkms/gpuvirt/$ver/build/make.log
[ $rc -ne 0 ] && [ -e "$f" ] && tail -n 25 "$f" | sed 's/^/# make.log: /'

ok=0
# (dkms status runs readelf on the modules, which complains on stderr.)
dkms status -m gpuvirt 2>/dev/null | sed 's/^/# dkms status: /'
for k in "${kvers[@]}"; do
	if ! dkms status -m gpuvirt -v "$ver" -k "$k" 2>/dev/null | grep ': installed$' >/dev/null; then
		ktap_diag "gpuvirt/$ver is not installed for $k"
		ok=1
	fi
done
ktap_result $ok "dkms status: gpuvirt/$ver installed for ${kvers[*]}"

# The installed unit as systemd reads it: its ExecStart is executable and
# its Documentation= man page is installed. (Before=libvirtd.service may
# name a unit this host lacks; that is allowed.)
UNIT=$(dpkg-query -L gpuvirt-tools 2>/dev/null | grep -m1 -E "$UNIT_RE")
UNIT=${UNIT:-/lib/systemd/system/gpuvirt-apply.service}
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify "$UNIT" 2>&1 | sed 's/^/# systemd-analyze: /'
	ktap_result "${PIPESTATUS[0]}" "systemd-analyze verify $UNIT"
else
	KTAP_N=$((KTAP_N + 1))
	echo "ok $KTAP_N systemd-analyze verify $UNIT # SKIP no systemd-analyze"
fi

# 4. what the host's module tools make of the installed modules.
for k in "${kvers[@]}"; do
	modules_found "$k: modinfo and modprobe find the DKMS modules, parameters described, dependencies from modules.dep" \
		"$k" /
done

# 5. the kernels in a VM, with the packages as installed on this host.
for k in "${vm_kvers[@]}"; do
	vm_package_test "vm-$k: modprobe, the unit's ExecStart and gpuvirtctl against the installed packages" "$k" /
done

# 6. purge, and look for anything left.
listed=$OUT/dpkg-files
for p in "${PKGS[@]}"; do
	dpkg -L "$p"
done | sort -u >"$listed"
s=$(date +%s)
apt-get purge -y -q -o DPkg::Lock::Timeout=300 "${PKGS[@]}" >>"$OUT/purge.log" 2>&1
rc=$?
for p in "${PKGS[@]}"; do
	if installed "$p"; then
		ktap_diag "$p is still known to dpkg: $(dpkg-query -W -f='${db:Status-Abbrev}' "$p")"
		rc=1
	fi
done
ktap_result $rc "apt-get purge gpuvirt-dkms gpuvirt-tools ($(($(date +%s) - s)) s)"

left=$(find /lib/modules/*/updates -name 'gpuvirt*' 2>/dev/null)
[ -n "$left" ] && ktap_diag "left under /lib/modules/*/updates:" "$left"
[ -z "$left" ]
ktap_result $? "no gpuvirt module left under /lib/modules/*/updates"

ok=0
st=$(dkms status -m gpuvirt 2>/dev/null)
[ -n "$st" ] && { ktap_diag "dkms status: $st"; ok=1; }
for d in /var/lib/dkms/gpuvirt /usr/src/gpuvirt-"$ver"; do
	[ -e "$d" ] && { ktap_diag "left: $d"; ok=1; }
done
ktap_result $ok "DKMS knows no gpuvirt, and its source and build trees are gone"

# What dpkg installed is gone, but for what existed before the install
# (directories such as /etc or /usr/share/doc); and no path is new on the
# host anywhere a package, DKMS or systemd's helper writes.
ok=0
while IFS= read -r f; do
	[ -e "$f" ] || [ -L "$f" ] || continue
	grep -qxF "$f" "$OUT/existed-before" && continue
	ktap_diag "left, from dpkg -L: $f"
	ok=1
done <"$listed"
ktap_diag "dpkg -L listed $(wc -l <"$listed") paths"
snapshot >"$OUT/files.after"
# DKMS makes its module-signing key pair on its first build on a machine,
# whichever package asks, and keeps it for every later one: not ours.
new=$(comm -13 "$before" "$OUT/files.after" |
	grep -vxE '/var/lib/dkms/mok\.(key|pub)' || true)
if [ -n "$new" ]; then
	ktap_diag "new since before the install:" "$new"
	ok=1
fi
ktap_result $ok "nothing dpkg listed is left, and nothing new under ${WATCH[*]}"

echo "# check-package: took $(($(date +%s) - T0)) s"
ktap_finish
