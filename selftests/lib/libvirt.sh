# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# A throw-away libvirt for VM tests (source it): the guest's root file
# system is the host's, read-only, so libvirt's, mdevctl's and udev's state
# goes to tmpfs in a mount namespace of the test's own, and udevd and
# libvirtd run there for the test only. Nothing is left in the guest's own
# /etc, /var or /run when the namespace goes.
#
#   libvirt_missing      print the first missing program, or fail if none
#   libvirt_enter "$@"   re-exec the calling script in a private mount
#                        namespace (once)
#   libvirt_start        writable /etc/libvirt, /etc/mdevctl.d, /var (an
#                        overlay) and /run (tmpfs); start
#                        systemd-udevd (trigger, settle) and libvirtd; wait
#                        until the node-device driver answers
#   libvirt_stop         stop libvirtd and udevd (by pid file and udevadm)
#   VIRSH                virsh on qemu:///system
#   LIBVIRT_LOG          libvirtd's log (warnings and up)
#
# Debian 12's libvirt 9.0 ships the monolithic libvirtd (no virtqemud or
# virtnodedevd). qemu.conf runs QEMU as root with no security driver,
# cgroups or namespaces, and QEMU's output goes to a file so that virtlogd
# is not needed: the test guest has no systemd, cgroups or D-Bus.

VIRSH="virsh -q -c qemu:///system"
# the suite runs chrooted, where udevd and udevadm would otherwise do nothing
export SYSTEMD_IGNORE_CHROOT=1
LIBVIRT_LOG=${LIBVIRT_LOG:-/tmp/gv-libvirt/libvirtd.log}
LIBVIRT_PID=/run/libvirt/gv-libvirtd.pid
UDEVD=/lib/systemd/systemd-udevd

libvirt_missing() {
	local b

	for b in libvirtd virsh mdevctl udevadm qemu-system-x86_64 unshare; do
		command -v $b >/dev/null || [ -x /usr/sbin/$b ] || { echo $b; return 0; }
	done
	[ -x $UDEVD ] || { echo systemd-udevd; return 0; }
	return 1
}

libvirt_enter() {
	[ -n "${GV_LIBVIRT_NS:-}" ] && return 0
	export GV_LIBVIRT_NS=1
	exec unshare -m --propagation private bash "$0" "$@"
}

# Writable copies of what libvirt, mdevctl and udev write; inside the
# namespace only.
libvirt_mounts() {
	local d s=/tmp/gv-libvirt repo

	[ -n "${GV_LIBVIRT_NS:-}" ] || return 1
	repo=$(cd "${GPUVIRT_SRC:-.}" && pwd -P) || return 1
	mkdir -p $s
	mount -t tmpfs -o mode=755 tmpfs $s || return 1
	# the repo, reachable here while /var and /run are covered below
	mkdir -p $s/repo
	mount --bind "$repo" $s/repo || return 1
	# mdevctl keeps defined devices in /etc/mdevctl.d
	for d in /etc/libvirt /etc/mdevctl.d /etc/udev/rules.d; do
		mkdir -p $s$d
		cp -a $d/. $s$d/ 2>/dev/null
		mount --bind $s$d $d || return 1
	done
	# udev must not load drivers: later tests want the guest's devices as
	# they booted, and iTCO_wdt's probe, which clears the q35 TCO's
	# NO_REBOOT bit for a moment, has reset the guest under TCG. Empty
	# files in /etc override the rules that load modules.
	: >/etc/udev/rules.d/80-drivers.rules
	: >/etc/udev/rules.d/80-debian-compat.rules
	# /var/lib/libvirt, /var/log/libvirt, /var/cache/libvirt and the rest
	mkdir -p $s/var/upper $s/var/work
	modprobe -q overlay
	mount -t overlay overlay -o lowerdir=/var,upperdir=$s/var/upper,workdir=$s/var/work /var ||
		return 1
	mkdir -p /var/lib/libvirt /var/log/libvirt /var/cache/libvirt
	# a /run of our own: /run/libvirt, /run/udev, the pid files
	mount -t tmpfs -o mode=755 tmpfs /run || return 1
	mkdir -p /run/libvirt /run/lock /run/udev
	# a repo under /var or /run (a clone in /var/tmp, a CI workspace in
	# /var/lib) is covered now: show it at its path again
	case $repo in
	/var/* | /run/*)
		mkdir -p "$repo" && mount --bind $s/repo "$repo" || return 1 ;;
	esac
	cat >/etc/libvirt/qemu.conf <<'EOC'
user = "root"
group = "root"
dynamic_ownership = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
remember_owner = 0
stdio_handler = "file"
EOC
	# "1:node_device 1:util.mdev" in log_filters shows why a device is skipped
	cat >/etc/libvirt/libvirtd.conf <<EOC
log_outputs = "3:file:$LIBVIRT_LOG"
EOC
}

libvirt_start() {
	local i

	libvirt_mounts || return 1
	# libvirt's node-device driver enumerates through udev's database
	$UDEVD --daemon >/dev/null 2>&1 || return 1
	udevadm trigger --action=add >/dev/null 2>&1
	udevadm settle -t 30
	/usr/sbin/libvirtd -d -f /etc/libvirt/libvirtd.conf -p $LIBVIRT_PID \
		>>"$LIBVIRT_LOG" 2>&1 || return 1
	for i in $(seq 120); do
		$VIRSH nodedev-list >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}

libvirt_stop() {
	local pid i

	pid=$(cat $LIBVIRT_PID 2>/dev/null)
	if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
		for i in $(seq 40); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.25
		done
		# one that hangs on a domain's job must not outlive the test
		kill -KILL "$pid" 2>/dev/null
	fi
	udevadm control --exit 2>/dev/null
}
