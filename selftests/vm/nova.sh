#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# OpenStack Nova's own libvirt driver on gpuvirt, unmodified, with the
# guest's libvirtd, udev, mdevctl and QEMU (TCG) in the test VM, on
# simulated H200s: Debian 12's python3-nova (26.2.2, "Zed") with libvirt
# 9.0 and QEMU 7.2 (lane 6.1), and Debian 13's (31.0.0, "2025.1") with
# libvirt 11.3 and QEMU 10.0 (lane 7, the trixie root).
# selftests/vm/nova/compute.py loads the driver as nova-compute does and
# calls the driver's own methods: init_host, update_provider_tree (the
# inventory: _get_gpu_inventories, _count_mdev_capable_devices,
# _count_mediated_devices), _allocate_mdevs (_get_existing_mdevs_not_assigned,
# _create_new_mediated_device), spawn (the guest's XML from Nova's config
# code, LibvirtConfigGuestHostdevMDEV included) and destroy; on Nova 29 and
# later also resume_state_on_host_boot and the live-migration pre-checks,
# and on 31 the PCI tracker and Placement's PCI view. This script
# configures Nova as an admin would (nova.conf) and checks what Nova reports
# against what the kernel did: sysfs, gpuvirtctl -j (netlink) and the
# core's and the sim's debugfs. Checked (12 on every release):
#   - the VGPU inventory of each GPU equals sysfs (available_instances plus
#     the vGPUs of the type already there), with one enabled type and with
#     two, each tied to a GPU by [mdev_<type>] device_addresses (one with an
#     mdev_class of its own);
#   - a free vGPU is taken, not another made (twice);
#   - spawn makes the vGPU on the PCI function of the GPU the allocation
#     named (Nova 26: through its privsep daemon, a write to the type's
#     create file; 29 and later with libvirt 7.3 or later: through
#     libvirt's node-device API, which has mdevctl start and define it,
#     autostart on), and the domain Nova built starts (paused) with it:
#     QEMU holds it open, and closes it when Nova destroys the instance;
#   - a full GPU is refused with ComputeResourcesUnavailable, and nothing is
#     made: the vGPUs in sysfs, the core's debugfs and its schedulers, and
#     those Nova's log says it made, are the same before and after;
#   - MIG-backed types count one per GPU instance with room, and Nova's
#     vGPU, made through the PCI function, lands on a GPU instance.
# Nova 29 and later (5 more):
#   - a host reboot under an instance (its domain shut off; vGPUs, GPUs and
#     modules gone, then back with the MIG layout): the vGPUs Nova made are
#     gone and libvirt lists them defined and inactive; Nova's init_host
#     (_start_inactive_mediated_devices) starts them again, each on its GPU
#     (and GPU instance); resume_state_on_host_boot starts the instance
#     with its vGPU. mdevctl's udev rule, which would start them when the
#     GPU registers, is masked: only Nova brings them back;
#   - the live-migration pre-checks to this host's other GPU
#     (check_can_live_migrate_destination and _source,
#     check_source_migrate_data_at_dest, pre_live_migration): the
#     destination supports mdev live migration, claims a new vGPU of the
#     source's type on the allocated GPU, maps the source's to it, and the
#     guest XML for the destination (get_updated_guest_xml) names it; while
#     claimed, it is not handed out (the GPU, full, refuses an allocation).
#     The migration itself needs a second host.
# Nova 31 (2 more): VF vGPUs through PCI passthrough: [pci] device_spec of
# two typed VFs (managed "no", a resource_class), the PCI tracker and
# Placement's PCI view; an instance whose flavor asks for the [pci] alias
# gets one as <hostdev type='pci' managed='no'>, and QEMU holds it open.
#
# Real: Nova's code and its nova.conf options, its privsep daemon
# (privsep-helper with Nova's sys_admin context, which writes the type's
# create file in sysfs; started without sudo, as the test is root),
# libvirtd, udev, mdevctl, QEMU. Stood in for, in compute.py, only what
# needs a whole cloud:
#   - the database: Instance.save(), Service.save() and PciDevice.save()
#     keep nothing; InstanceList.get_by_host() (init_host) finds no
#     instances; Service.get_by_compute_host() finds this host's
#     nova-compute, enabled; VirtualInterfaceList, BlockDeviceMappingList
#     and (Nova 30 and later) ShareMappingList .get_by_instance_uuid()
#     (spawn's device metadata) find none, and so does
#     BlockDeviceMappingList.get_by_instance_uuids(); PciDeviceList
#     .get_by_compute_node() finds none (the PCI tracker's first start);
#     the instance and its flavor are built in memory, every field set, as
#     the API and the conductor would hand them over, and
#     InstanceList.get_by_filters() finds those; the compute node's record
#     is the driver's get_available_resource();
#   - Placement: a ProviderTree with the compute node as its root, kept
#     across inventory calls as the report client keeps its cache; an
#     allocation is the dict Placement would return, one unit of the
#     resource class of the GPU's child provider that the driver made;
#   - Glance: the image is already in Nova's image cache
#     (instances_path/_base/<sha1 of its id>: 1 MiB of zeros, raw), so the
#     image backend copies it and downloads nothing; its metadata is built
#     in memory and recorded in the instance's system_metadata as the API
#     does;
#   - Neutron: no ports (an empty network_info), and so no events: the
#     VirtAPI's wait_for_instance_event waits for none; it has the port
#     binding extension, as every Neutron since Stein;
#   - the compute manager, the conductor and RPC: compute.py, on commands
#     from this script; a new nova.conf is a restart (the driver loaded
#     again, the dynamic option groups registered as
#     ComputeManager.init_host does, then the driver's init_host); the
#     live-migration pre-checks are called in the manager's order, source
#     and destination being this one host; the PCI request comes from the
#     flavor's alias as the API makes it.
# spawn runs with power_on=False and the domain is then started paused with
# Nova's own Guest.launch(pause=True): the guest's firmware never runs.
#
# Nova needs a host name ("(none)" is refused): the test sets one in a UTS
# namespace of its own. With loopback down Nova hangs at its first libvirt
# call (eventlet's thread pool signals over 127.0.0.1): compute.py runs in
# a network namespace of its own with lo up (gpuvirtctl's netlink family
# lives in the initial one). Importing Nova takes most of a minute under
# TCG; the GPUs and libvirtd come up meanwhile. Nova's log, libvirtd's and
# the domain's XML are kept in OUTDIR/guest/ (nova*.log, nova-gv-vm1.xml).
# KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
# shellcheck source=selftests/lib/libvirt.sh
. selftests/lib/libvirt.sh

PCI=/sys/bus/pci/devices
G0=8000:00:00.0
G1=8001:00:00.0
N0=pci_8000_00_00_0
N1=pci_8001_00_00_0
G2=8002:00:00.0
VFA=8002:00:00.1
VFB=8002:00:00.2
T35=gpuvirt_sim-H200-35C
T141=gpuvirt_sim-H200-141C
TMIG=gpuvirt_sim-H200-1-18C
UF=3b1e6f0c-7d2a-4c59-9e41-00000000a0f1	# made by gpuvirtctl, free for Nova
DP=/usr/lib/python3/dist-packages

if missing=$(libvirt_missing); then
	vmt_skip "$missing is not installed (scripts/deps.sh installs libvirt, mdevctl, udev)"
fi
[ -e $DP/nova/virt/libvirt/driver.py ] && [ -e $DP/libvirt.py ] ||
	vmt_skip "no Nova (scripts/deps.sh installs python3-nova and python3-libvirt)"
# Nova's release, from its package metadata (importing Nova takes a minute):
# 29 ("2024.1") and later keep the mdevs they make as libvirt node devices
# (defined, autostart), start them again in init_host after a reboot, and
# live-migrate instances with mdevs
NOVA_VER=$(python3 -c 'import importlib.metadata as m; print(m.version("nova"))' 2>/dev/null)
NOVA_MAJOR=${NOVA_VER%%.*}
[[ $NOVA_MAJOR =~ ^[0-9]+$ ]] || vmt_skip "Nova's version is unknown (\"$NOVA_VER\")"
vmt_need_cmds privsep-helper ip
vmt_need_modules gpuvirt gpuvirt_sim
vmt_need_ctl
# a host name of the test's own, then libvirt's private mount namespace
if [ -z "${GV_NOVA_UTS:-}" ]; then
	export GV_NOVA_UTS=1
	exec unshare -u bash "$0" "$@"
fi
libvirt_enter "$@"
echo gv-compute >/proc/sys/kernel/hostname
vmt_tmpdir
NLOG=$T/nova.log
# libvirt_start hides /run: Nova's and libvirtd's logs go to the runner's
# output share (OUTDIR/guest/) through a bind mount
OUT=
if [ -d /run/gvout ]; then
	mkdir -p /tmp/gv-nova-out && mount --bind /run/gvout /tmp/gv-nova-out &&
		OUT=/tmp/gv-nova-out
fi

cleanup() {
	local d g

	if [ "$KTAP_FAIL" -ne 0 ]; then
		ktap_diag "compute.py's stderr:" "$(tail -n 20 "$T/compute.err" 2>/dev/null)"
		ktap_diag "Nova's log (errors):" "$(grep -E ' (ERROR|WARNING) ' "$NLOG" 2>/dev/null | tail -n 30)"
		ktap_diag "libvirtd's log:" "$(tail -n 20 "$LIBVIRT_LOG" 2>/dev/null)"
	fi
	if [ -n "${NOVA_PID:-}" ]; then
		echo quit >&$NOUT
		wait "$NOVA_PID"
	fi 2>/dev/null
	for d in $($VIRSH list --all --name 2>/dev/null); do
		$VIRSH destroy "$d" >/dev/null 2>&1
		$VIRSH undefine "$d" >/dev/null 2>&1
	done
	libvirt_stop
	if [ -n "$OUT" ]; then
		cp "$NLOG" "$OUT/nova.log"
		cp "$LIBVIRT_LOG" "$OUT/nova-libvirtd.log"
		cp "$T/gv-vm1.xml" "$OUT/nova-gv-vm1.xml"
		umount "$OUT"
	fi 2>/dev/null
	vmt_remove_mdevs
	for g in 0 1 2; do "$CTL" mig destroy gpu 0 gi $g >/dev/null 2>&1; done
	for g in 0 1 2; do echo $g >$BUS/del_device; done 2>/dev/null
	vmt_unload gpuvirt_sim gpuvirt
}
vmt_on_exit cleanup

# nova CMD...: one command to compute.py; its reply in $R
nova() {
	R=
	if [ -z "${NOVA_PID:-}" ]; then
		echo "# nova $*: compute.py is not running"
		return 1
	fi
	echo "$*" >&$NOUT
	if ! read -r -t 240 R <&$NIN; then
		echo "# nova $*: no answer; compute.py stopped"
		vmt_reap NOVA_PID
		NOVA_PID=
		return 1
	fi
	echo "# ${SECONDS}s nova $*: $R"
	[ "${R%% *}" = ok ]
}

# nova.conf: the common part, then the [devices] lines given; and the
# directories that Debian's nova-common package would make
nova_conf() {
	mkdir -p "$T/nova/instances" "$T/nova/locks"
	cat >"$T/nova.conf" <<EOF
[DEFAULT]
compute_driver = libvirt.LibvirtDriver
state_path = $T/nova
instances_path = $T/nova/instances
log_file = $NLOG
debug = True
[libvirt]
virt_type = qemu
images_type = raw
[oslo_concurrency]
lock_path = $T/nova/locks
[nova_sys_admin]
helper_command = privsep-helper --config-file $T/nova.conf
EOF
	printf '%s\n' "$@" >>"$T/nova.conf"
}

# sysfs_total BDF TYPE: what the type of the GPU at BDF can still make
# plus the vGPUs of the type on it, in $total
sysfs_total() {
	local d n=0

	read -r total <"$PCI/$1/mdev_supported_types/$2/available_instances" || return 1
	for d in "$PCI/$1"/????????-????-????-????-????????????; do
		[ "$d/mdev_type" -ef "$PCI/$1/mdev_supported_types/$2" ] && n=$((n + 1))
	done
	total=$((total + n))
}

# expect_inventory DEV/RC/BDF/TYPE...: Nova's inventory is, for each GPU,
# its resource class with sysfs's total (and max_unit the same)
expect_inventory() {
	local a want=ok

	for a; do
		IFS=/ read -r dev rc bdf type <<<"$a"
		sysfs_total "$bdf" "$type" || return 1
		want+=" $dev=$rc:$total:$total"
		echo "# sysfs: $bdf $type: $total"
	done
	nova inventory
	[ "$R" = "$want" ] || { echo "# Nova's inventory is not sysfs's: $want"; return 1; }
}

# count_vgpus: the vGPUs in sysfs, in the core's debugfs and its
# schedulers, and those Nova's log says it made, in $count
count_vgpus() {
	local d s m=0 v=0 p=0 l

	for d in /sys/bus/mdev/devices/*; do [ -e "$d" ] && m=$((m + 1)); done
	for d in "$CORE"/sim*/vgpus/*; do [ -e "$d" ] && v=$((v + 1)); done
	s=
	for d in "$CORE"/sim*/sched; do
		while read -r l; do
			[[ $l == vgpus:* ]] && s+="${l#vgpus: }/"
		done <"$d"
	done
	while read -r l; do
		[[ $l == *"Created mdev: "* ]] && p=$((p + 1))
	done <"$NLOG"
	count="sysfs $m debugfs $v sched $s nova $p"
}

# mdev_on UUID BDF TYPE: the vGPU is in sysfs under the function BDF, of
# TYPE
mdev_on() {
	[ -e "/sys/bus/mdev/devices/$1" ] && [ "/sys/bus/mdev/devices/$1/.." -ef "$PCI/$2" ] &&
		[ "/sys/bus/mdev/devices/$1/mdev_type" -ef "$PCI/$2/mdev_supported_types/$3" ] || {
		echo "# $1 is not a $3 vGPU on $2"
		return 1
	}
}

# is_open UUID 0|1: the core's scheduler says the vGPU is (not) open, and
# so does gpuvirtctl
is_open() {
	local g

	for g in "$CORE"/sim*/vgpus/"$1"/sched; do
		debugfs_is "$g" open "$2" || return 1
	done
	run -j vgpu show uuid "$1"
	if [ "$2" = 1 ]; then has "$T/out" '"open":true'; else has "$T/out" '"open":false'; fi
}

# how Nova made its vGPU: through its privsep daemon (sysfs), or from 29 on
# through libvirt's node-device API, kept in mdevctl's definitions with
# autostart
made_by_nova() {
	if [ "$NOVA_MAJOR" -ge 29 ]; then
		mdevctl list -d -u "$1" >"$T/def" 2>&1
		diag_file "$T/def"
		has "$T/def" "$1 $2 $3 auto"
	else
		grep -q "privsep daemon running as pid" "$NLOG"
	fi
}

if [ "$NOVA_MAJOR" -ge 31 ]; then
	ktap_plan 19
elif [ "$NOVA_MAJOR" -ge 29 ]; then
	ktap_plan 17
else
	ktap_plan 12
fi
echo "# Nova $NOVA_VER"

# Nova starts importing (most of a minute under TCG) while the GPUs and
# libvirtd come up
nova_conf "[devices]" "enabled_mdev_types = $T35"
coproc NOVA {
	exec unshare -n bash -c 'ip link set lo up && exec /usr/bin/python3 "$0" "$1"' \
		selftests/vm/nova/compute.py "$T" 2>"$T/compute.err"
}
# bash forgets a coproc's fds when it ends: keep them
NOVA_PID=$NOVA_PID
exec {NIN}<&"${NOVA[0]}" {NOUT}>&"${NOVA[1]}"

# 1: two GPUs, one vGPU made outside Nova, libvirtd, and Nova started.
# The QEMU that libvirtd starts listens for VNC on 127.0.0.1, as Nova
# configures it: loopback is up on a real host, and the guest's init may
# leave it down (the debug kernel's guest did).
ip link set lo up
vmt_load gpuvirt gpuvirt_sim && echo "0 h200-141gb" >$BUS/new_device &&
	echo "1 h200-141gb" >$BUS/new_device && libvirt_start &&
	"$CTL" vgpu add gpu 0 type H200-35C uuid $UF >/dev/null
ok=$?
echo "# ${SECONDS}s: GPUs and libvirtd up ($ok)"
# libvirtd probes QEMU's binaries for its capabilities at the first ask:
# let it do that while Nova is still importing
$VIRSH capabilities >/dev/null 2>&1 &
# shellcheck disable=SC2034 # vmt_reap reads it
CAPS_PID=$!
read -r -t 280 R <&$NIN
echo "# ${SECONDS}s compute.py: $R"
vmt_reap CAPS_PID
[ $ok -eq 0 ] && [[ $R == "ready "* ]] && nova reload "$T/nova.conf" && [ "$R" = "ok gv-compute" ] &&
	debugfs_is "$HW/sim0/hw" pci "$G0" && debugfs_is "$HW/sim1/hw" pci "$G1"
ktap_result $? "Nova's libvirt driver starts (init_host) on node gv-compute, with the H200s sim0 at $G0 and sim1 at $G1"

# 2: one enabled type, for every GPU
expect_inventory "$N0/VGPU/$G0/$T35" "$N1/VGPU/$G1/$T35" && [ "$total" = 4 ] &&
	sysfs_is "$PCI/$G0/mdev_supported_types/$T35/available_instances" 3
ktap_result $? "enabled_mdev_types = H200-35C: each GPU's VGPU inventory equals sysfs (4, and 3 + 1 on sim0)"

# 3: a free vGPU is taken as it is
count_vgpus
before=$count
nova allocate $N0 1 && [ "$R" = "ok $UF" ] && count_vgpus && [ "$count" = "$before" ] &&
	mdev_on $UF $G0 $T35
ktap_result $? "an allocation on sim0 reuses the free vGPU $UF; nothing is made ($count)"

# 4: two types, each on its GPU; one with a resource class of its own
nova_conf "[devices]" "enabled_mdev_types = $T35, $T141" \
	"[mdev_$T35]" "device_addresses = $G0" \
	"[mdev_$T141]" "device_addresses = $G1" "mdev_class = CUSTOM_H200_141C"
nova reload "$T/nova.conf" &&
	expect_inventory "$N0/VGPU/$G0/$T35" "$N1/CUSTOM_H200_141C/$G1/$T141" && [ "$total" = 1 ]
ktap_result $? "two types tied to GPUs by device_addresses: VGPU on sim0 and CUSTOM_H200_141C on sim1 equal sysfs"

# 5, 6: a build on sim1: Nova makes the vGPU there and the domain starts
count_vgpus
before=$count
nova spawn gv-vm1 $N1
ok=$?
read -r _ DOM1 ST1 U1 _ <<<"$R"
[ $ok -eq 0 ] && [ -n "$U1" ] && mdev_on "$U1" $G1 $T141 && [ -d "$CORE/sim1/vgpus/$U1" ] &&
	debugfs_is "$CORE/sim1/sched" vgpus 1 && debugfs_is "$CORE/sim0/sched" vgpus 1 &&
	run -j vgpu show uuid "$U1" && has "$T/out" '"gpu":1' && has "$T/out" '"type":"H200-141C"' &&
	grep -q "Created mdev: $U1 on pGPU: $G1" "$NLOG" && made_by_nova "$U1" $G1 $T141 &&
	nova listed "$U1"
ktap_result $? "spawn with CUSTOM_H200_141C: Nova made $U1 on $G1 (sysfs, netlink, debugfs of sim1; $(
	[ "$NOVA_MAJOR" -ge 29 ] && echo "a libvirt node device, autostart" || echo "its privsep daemon"))"

grep -A3 "<hostdev " "$T/gv-vm1.xml" | diag_file /dev/stdin
[ "$ST1" = paused ] && has "$T/gv-vm1.xml" "<hostdev mode='subsystem' type='mdev' managed='no' model='vfio-pci'" &&
	has "$T/gv-vm1.xml" "<address uuid='$U1'/>" &&
	[ "$($VIRSH domstate "$DOM1" 2>&1)" = paused ] && is_open "$U1" 1
ktap_result $? "the domain Nova built ($DOM1) has $U1 as an mdev hostdev; it started, and QEMU holds the vGPU open"

# 7: sim1 is full: Nova refuses, and nothing is written
count_vgpus
before=$count
nofree=$(grep -c "Failed to create mdev. No free space found .*'$N1'" "$NLOG")
nova allocate $N1 1
[[ $R == "refused ComputeResourcesUnavailable: "* ]] && count_vgpus && [ "$count" = "$before" ] &&
	sysfs_is "$PCI/$G1/mdev_supported_types/$T141/available_instances" 0 &&
	[ "$(grep -c "Failed to create mdev. No free space found .*'$N1'" "$NLOG")" = $((nofree + 1)) ]
ktap_result $? "another allocation on the full sim1: ComputeResourcesUnavailable, nothing made ($count)"

# 8: the inventory counts the vGPU in use
expect_inventory "$N0/VGPU/$G0/$T35" "$N1/CUSTOM_H200_141C/$G1/$T141" && [ "$total" = 1 ]
ktap_result $? "with the instance running: the inventory still equals sysfs (sim1: 0 left + 1 in use)"

# 9: destroy: QEMU closes the vGPU; Nova keeps it for the next
nova destroy gv-vm1 && ! $VIRSH domstate "$DOM1" >/dev/null 2>&1 && is_open "$U1" 0 &&
	mdev_on "$U1" $G1 $T141
ktap_result $? "Nova destroys the instance: the domain is gone, the vGPU closed and kept"

# 10: ... and takes it again
count_vgpus
before=$count
nova allocate $N1 1 && [ "$R" = "ok $U1" ] && count_vgpus && [ "$count" = "$before" ]
ktap_result $? "the next allocation on sim1 reuses $U1 ($count)"

# 11, 12: MIG on sim0 with GIs 1g, 1g, 3g; Nova offers H200-1-18C there
echo 1 >/sys/bus/mdev/devices/$UF/remove && "$CTL" mig mode gpu 0 on >/dev/null &&
	"$CTL" mig create gpu 0 profile 1g.18gb >/dev/null &&
	"$CTL" mig create gpu 0 profile 1g.18gb >/dev/null &&
	"$CTL" mig create gpu 0 profile 3g.71gb >/dev/null
ok=$?
nova_conf "[devices]" "enabled_mdev_types = $TMIG, $T141" \
	"[mdev_$TMIG]" "device_addresses = $G0" \
	"[mdev_$T141]" "device_addresses = $G1" "mdev_class = CUSTOM_H200_141C"
gis=0
for g in /sys/class/mdev_bus/sim0-gi*/mdev_supported_types/gpuvirt_gi-H200-1-18C/available_instances; do
	[ -e "$g" ] && read -r n <"$g" && gis=$((gis + n))
done
[ $ok -eq 0 ] && nova reload "$T/nova.conf" &&
	expect_inventory "$N0/VGPU/$G0/$TMIG" "$N1/CUSTOM_H200_141C/$G1/$T141" &&
	[[ $R == "ok $N0=VGPU:$gis:$gis "* ]] && [ $gis = 2 ]
ktap_result $? "MIG mode, GIs 1g,1g,3g, enabled H200-1-18C: sim0's VGPU inventory is one per 1g GI ($gis), as sysfs"

nova allocate $N0 1
read -r _ U2 _ <<<"$R"
[ -n "$U2" ] && mdev_on "$U2" $G0 $TMIG && run -j vgpu show uuid "$U2" && has "$T/out" '"gi":0' &&
	debugfs_is "$CORE/sim0/gis/0/info" vgpus 1 && debugfs_is "$CORE/sim0/gis/1/info" vgpus 0 &&
	nova listed "$U2" && expect_inventory "$N0/VGPU/$G0/$TMIG" "$N1/CUSTOM_H200_141C/$G1/$T141" &&
	[[ $R == "ok $N0=VGPU:2:2 "* ]]
ktap_result $? "Nova makes a MIG-backed vGPU through $G0: it is on GI 0; the inventory stays 2 (1 left + 1 made)"

if [ "$NOVA_MAJOR" -lt 29 ]; then
	ktap_finish
	exit
fi

# mdev_gone UUID: the vGPU is in none of sysfs, netlink and the core's
# debugfs
mdev_gone() {
	local d

	[ ! -e "/sys/bus/mdev/devices/$1" ] || { echo "# $1 is in sysfs"; return 1; }
	for d in "$CORE"/sim*/vgpus/"$1"; do
		[ ! -e "$d" ] || { echo "# $d exists"; return 1; }
	done
	! "$CTL" -j vgpu show uuid "$1" >/dev/null 2>&1 || { echo "# gpuvirtctl shows $1"; return 1; }
}

# libvirt_lists UUID active|inactive: libvirt lists the vGPU's node device
# so (waits up to 30 s for udev and mdevctl to tell it)
libvirt_lists() {
	local _ flag=

	[ "$2" = inactive ] && flag=--inactive
	for _ in $(seq 60); do
		$VIRSH nodedev-list --cap mdev $flag 2>/dev/null | grep -q "^mdev_${1//-/_}" && return 0
		sleep 0.5
	done
	echo "# libvirt does not list $1 as $2"
	return 1
}

# the MIG layout of check 11 on sim0, as gpuvirt-apply makes it at boot
mig_layout() {
	"$CTL" mig mode gpu 0 on >/dev/null && "$CTL" mig create gpu 0 profile 1g.18gb >/dev/null &&
		"$CTL" mig create gpu 0 profile 1g.18gb >/dev/null &&
		"$CTL" mig create gpu 0 profile 3g.71gb >/dev/null
}

# 13-15: a host reboot under an instance with a vGPU. gv-vm2 takes $U1
# (free since check 9); the host goes down (the guest stops, the vGPUs,
# GPUs and modules go), comes up (modules, GPUs, the MIG layout), and
# nova-compute starts again. mdevctl's udev rule would start the defined
# vGPUs as soon as their GPU registers: it is masked, so that only Nova can
# bring them back. libvirtd keeps running.
nova spawn gv-vm2 $N1
read -r _ DOM2 _ M2 _ <<<"$R"
: >/etc/udev/rules.d/60-mdevctl.rules
udevadm control --reload
ok=1
if [ "$M2" = "$U1" ] && $VIRSH destroy "$DOM2" >/dev/null; then
	vmt_remove_mdevs
	for g in 0 1 2; do "$CTL" mig destroy gpu 0 gi $g >/dev/null 2>&1; done
	for g in 0 1; do echo $g >$BUS/del_device; done
	vmt_unload gpuvirt_sim gpuvirt
	vmt_load gpuvirt gpuvirt_sim && echo "0 h200-141gb" >$BUS/new_device &&
		echo "1 h200-141gb" >$BUS/new_device && mig_layout
	ok=$?
fi
echo "# ${SECONDS}s: host up again ($ok)"
[ $ok -eq 0 ] && [ "$($VIRSH domstate "$DOM2" 2>&1)" = "shut off" ] &&
	mdev_gone "$U1" && mdev_gone "$U2" && libvirt_lists "$U1" inactive && libvirt_lists "$U2" inactive
ktap_result $? "after a host reboot $DOM2 is shut off, its vGPU $U1 and Nova's MIG-backed $U2 are gone (sysfs, netlink, debugfs); libvirt lists them as defined, inactive"

# 14: Nova's init_host starts them
nova reload "$T/nova.conf" && [ "$R" = "ok gv-compute" ] &&
	grep -q "Starting inactive mdev: mdev_${U1//-/_}" "$NLOG" &&
	grep -q "Starting inactive mdev: mdev_${U2//-/_}" "$NLOG" &&
	mdev_on "$U1" $G1 $T141 && [ -d "$CORE/sim1/vgpus/$U1" ] &&
	run -j vgpu show uuid "$U1" && has "$T/out" '"gpu":1' && has "$T/out" '"type":"H200-141C"' &&
	mdev_on "$U2" $G0 $TMIG && run -j vgpu show uuid "$U2" && has "$T/out" '"gi":0' &&
	debugfs_is "$CORE/sim0/gis/0/info" vgpus 1 && libvirt_lists "$U1" active
ktap_result $? "Nova restarted: init_host starts $U1 again on $G1 as H200-141C (sim1) and $U2 on GI 0 of $G0 (sysfs, netlink, debugfs)"

# 15: ... and the manager's resume_state_on_host_boot starts the instance
nova boot gv-vm2
read -r _ _ ST2 M2 _ <<<"$R"
[ "$ST2" = running ] && [ "$M2" = "$U1" ] && is_open "$U1" 1
ktap_result $? "resume_state_on_host_boot: $DOM2 runs again with $U1 (QEMU holds it open)"
# its firmware would take the CPU the rest of the test needs
$VIRSH suspend "$DOM2" >/dev/null

# 16, 17: the live-migration pre-checks of gv-vm2, this host as source and
# as destination, with H200-141C on both GPUs. Nova's MIG-backed vGPU of
# checks 12-14 is undefined and MIG turned off first, as an admin would.
d=$($VIRSH nodedev-list --cap mdev --all 2>/dev/null | grep "^mdev_${U2//-/_}")
$VIRSH nodedev-destroy "$d" >/dev/null && $VIRSH nodedev-undefine "$d" >/dev/null
ok=$?
for g in 0 1 2; do "$CTL" mig destroy gpu 0 gi $g >/dev/null 2>&1; done
"$CTL" mig mode gpu 0 off >/dev/null || ok=1
nova_conf "[devices]" "enabled_mdev_types = $T141"
[ $ok -eq 0 ] && nova reload "$T/nova.conf" && nova inventory &&
	[ "$R" = "ok $N0=VGPU:1:1 $N1=VGPU:1:1" ] && nova lmcheck gv-vm2 $N0
read -r _ lm src target claimed xml _ <<<"$R"
U4=${claimed#claimed=}
[ "$lm" = dst_mdev_lm=True ] && [ "$src" = "src=$U1:$T141" ] && [ "$target" = "target=$U1:$U4" ] &&
	[ "$xml" = "xml=$U4" ] && [ -n "$U4" ] && [ "$U4" != "$U1" ] &&
	mdev_on "$U4" $G0 $T141 && [ -d "$CORE/sim0/vgpus/$U4" ] && run -j vgpu show uuid "$U4" &&
	has "$T/out" '"gpu":0' && grep -Eq "<address uuid=[\"']${U4}[\"']/>" "$T/gv-vm2-dest.xml" &&
	$VIRSH dumpxml "$DOM2" | grep -q "<address uuid='$U1'/>" && is_open "$U4" 0
ktap_result $? "live-migration pre-checks of $DOM2 ($U1 on $G1) to sim0: the destination supports mdevs (libvirt >= 8.6, QEMU >= 8.1), claims $U4 on $G0 for it, and the guest XML for the destination names $U4"

# 17: the claimed vGPU, sim0's only one, is not handed to another instance
count_vgpus
before=$count
nova allocate $N0 1
[[ $R == "refused ComputeResourcesUnavailable: "* ]] && count_vgpus && [ "$count" = "$before" ] &&
	nova destroy gv-vm2
ktap_result $? "while $U4 is claimed for the migration, an allocation on sim0 is refused; nothing made ($count)"

if [ "$NOVA_MAJOR" -lt 31 ]; then
	ktap_finish
	exit
fi

# 18, 19: VF vGPUs through Nova's PCI passthrough (Nova 31's managed tag:
# the VF stays with its VFIO driver). A third GPU, sim2, in the sriov
# model with two VFs typed H200-35C, as gpuvirt-apply makes them at boot;
# [pci] device_spec names the typed VFs, with a resource class of their
# own for Placement.
echo "2 h200-141gb" >$BUS/new_device && "$CTL" gpu set id 2 vgpu-model sriov vfs 2 >/dev/null &&
	"$CTL" vgpu add gpu 2 type H200-35C >/dev/null && "$CTL" vgpu add gpu 2 type H200-35C >/dev/null
ok=$?
UVA=$(cat $PCI/$VFA/gpuvirt/vgpu_uuid 2>/dev/null)
UVB=$(cat $PCI/$VFB/gpuvirt/vgpu_uuid 2>/dev/null)
for _ in $(seq 60); do
	$VIRSH nodedev-list --cap pci 2>/dev/null | grep -qx pci_8002_00_00_2 && break
	sleep 0.5
done
nova_conf "[devices]" "enabled_mdev_types = $T35" "[pci]" \
	"device_spec = {\"address\": \"$VFA\", \"resource_class\": \"CUSTOM_H200_35C\", \"managed\": \"no\"}" \
	"device_spec = {\"address\": \"$VFB\", \"resource_class\": \"CUSTOM_H200_35C\", \"managed\": \"no\"}" \
	"alias = {\"name\": \"h200-35c\", \"vendor_id\": \"fffc\", \"product_id\": \"0002\", \"device_type\": \"type-VF\"}" \
	"report_in_placement = True"
[ $ok -eq 0 ] && [ -n "$UVA" ] && [ -n "$UVB" ] && nova reload "$T/nova.conf" && nova pci &&
	[ "$R" = "ok $VFA=type-VF:$G2:available:managed=false $VFB=type-VF:$G2:available:managed=false rp=$G2:CUSTOM_H200_35C:2" ]
ktap_result $? "[pci] device_spec of sim2's typed VFs: Nova's PCI tracker takes $VFA and $VFB as type-VF of $G2, unmanaged; Placement gets CUSTOM_H200_35C 2 under $G2"

# 19: an instance with one of them, by the flavor's alias
nova pcispawn gv-vf1 h200-35c
read -r _ DOMV STV VF _ <<<"$R"
UV=$(cat $PCI/$VF/gpuvirt/vgpu_uuid 2>/dev/null)
grep -A3 "type='pci'" "$T/gv-vf1.xml" | diag_file /dev/stdin
[ "$STV" = paused ] && { [ "$VF" = $VFA ] || [ "$VF" = $VFB ]; } && [ -n "$UV" ] &&
	has "$T/gv-vf1.xml" "<hostdev mode='subsystem' type='pci' managed='no'>" &&
	has "$T/gv-vf1.xml" "<address domain='0x8002' bus='0x00' slot='0x00' function='0x${VF##*.}'/>" &&
	is_open "$UV" 1 && [ "$(readlink $PCI/$VF/driver)" = "$(readlink $PCI/$VFA/driver)" ] &&
	nova destroy gv-vf1 && is_open "$UV" 0 && sysfs_is $PCI/$VF/gpuvirt/vgpu_uuid "$UV"
ktap_result $? "pci_passthrough:alias h200-35c:1: Nova gives $DOMV the VF vGPU $VF as <hostdev type='pci' managed='no'>; it starts with QEMU holding $UV open; destroyed, the VF keeps its vGPU"

ktap_finish
