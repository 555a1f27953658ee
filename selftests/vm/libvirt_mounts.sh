#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The private mounts of selftests/lib/libvirt.sh (libvirt_mounts) keep the
# repo at its path wherever it is checked out. They put an overlay on /var
# and a tmpfs on /run, so a repo under either (a clone in /var/tmp, a CI
# workspace in /var/lib) would vanish for libvirt_nodedev.sh,
# libvirt_guest.sh and nova.sh half-way through the suite. Here the repo
# is bound at a path under /var/tmp and at one under /run (the guest's
# tmpfs; the rest of /var is the read-only host root), each in a mount
# namespace of its own, and libvirt_mounts runs as those tests run it: the
# repo must still be there after it, and /var and /run writable.
#
# Runs as root in the test VM (selftests/vm-run.sh). Prints KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_need_root
vmt_need_cmds unshare

PATHS=(/var/tmp/gv-ci/workspace/gpuvirt /run/gv-repo)
ktap_plan ${#PATHS[@]}

for p in "${PATHS[@]}"; do
	# shellcheck disable=SC2016 # expanded by the inner bash
	out=$(unshare -m --propagation private bash -c '
		p=$1 repo=$2
		# the repo itself may be under /var too: who it is, before
		id=$(stat -c %d:%i "$repo") || exit 2
		mkdir -p "$p" && mount --bind "$repo" "$p" || exit 2
		cd "$p" || exit 2
		export GPUVIRT_SRC=$p GV_LIBVIRT_NS=1
		. selftests/lib/libvirt.sh || exit 2
		libvirt_mounts || { echo "libvirt_mounts failed"; exit 1; }
		[ -r "$p/selftests/lib/libvirt.sh" ] || { echo "the repo is gone from $p"; exit 1; }
		[ "$(stat -c %d:%i "$p")" = "$id" ] ||
			{ echo "$p is not the repo"; exit 1; }
		: >/var/lib/libvirt/gv-w && : >/run/libvirt/gv-w ||
			{ echo "/var or /run is not writable"; exit 1; }
		' _ "$p" "$GPUVIRT_SRC" 2>&1)
	rc=$?
	[ -n "$out" ] && ktap_diag "$out"
	ktap_result $rc "libvirt_mounts with the repo at $p: still there, /var and /run writable"
done
# the mount points, on the guest's tmpfs
rmdir -p /var/tmp/gv-ci/workspace/gpuvirt /run/gv-repo 2>/dev/null
ktap_finish
