# SPDX-License-Identifier: GPL-2.0-only
#
# A throw-away libvirt for VM tests (source it): the guest's root file
# system is the host's, read-only, so libvirt's state goes to tmpfs in a
# mount namespace of the test's own, and udevd and libvirtd run there for
# the test only.
#
#   libvirt_enter "$@"   re-exec the calling script in a private mount
#                        namespace (once), with /etc/libvirt, /etc/mdevctl.d
#                        and /var writable (tmpfs, /var as an overlay)
#   libvirt_start        start systemd-udevd and libvirtd, wait for virsh
#   libvirt_stop         stop them
#   VIRSH                virsh on qemu:///system
#
# qemu.conf runs QEMU as root with no security driver, cgroups or
# namespaces: the test guest has none of them.

VIRSH="virsh -q -c qemu:///system"
# the suite runs chrooted, where udevadm would otherwise do nothing
export SYSTEMD_IGNORE_CHROOT=1
LIBVIRT_LOG=${LIBVIRT_LOG:-/tmp/libvirtd.log}

libvirt_missing() {
	local b

	for b in libvirtd virsh mdevctl udevadm; do
		command -v $b >/dev/null || [ -x /usr/sbin/$b ] || { echo $b; return 0; }
	done
	[ -x /lib/systemd/systemd-udevd ] || { echo systemd-udevd; return 0; }
	return 1
}

libvirt_enter() {
	local etc

	[ -n "${GV_LIBVIRT_NS:-}" ] && return 0
	export GV_LIBVIRT_NS=1
	exec unshare -m --propagation private bash "$0" "$@"
}

# Writable copies of what libvirt and mdevctl write; call inside the namespace.
libvirt_mounts() {
	local d

	for d in /etc/libvirt /etc/mdevctl.d; do
		mkdir -p /tmp/gv-libvirt$d
		cp -a $d/. /tmp/gv-libvirt$d/ 2>/dev/null
		mount --bind /tmp/gv-libvirt$d $d || return 1
	done
	mkdir -p /tmp/gv-libvirt/var/upper /tmp/gv-libvirt/var/work
	modprobe -q overlay
	mount -t overlay overlay -o lowerdir=/var,upperdir=/tmp/gv-libvirt/var/upper,workdir=/tmp/gv-libvirt/var/work /var ||
		return 1
	mkdir -p /var/lib/libvirt /var/log/libvirt /var/cache/libvirt /var/run
	cat >/etc/libvirt/qemu.conf <<'EOF'
user = "root"
group = "root"
dynamic_ownership = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
remember_owner = 0
stdio_handler = "file"
EOF
	cat >/etc/libvirt/libvirtd.conf <<'EOF'
log_outputs = "3:file:/tmp/libvirtd.log"
EOF
}

libvirt_start() {
	local i

	libvirt_mounts || return 1
	/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1 || return 1
	udevadm trigger --action=add >/dev/null 2>&1
	udevadm settle -t 30
	/usr/sbin/libvirtd -d -f /etc/libvirt/libvirtd.conf 2>>"$LIBVIRT_LOG" >>"$LIBVIRT_LOG" || return 1
	for i in $(seq 120); do
		$VIRSH version >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}

libvirt_stop() {
	pkill -x libvirtd 2>/dev/null
	udevadm control --exit 2>/dev/null
	sleep 0.5
}
