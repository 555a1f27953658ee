#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# SR-IOV vGPUs (kernel/core/sriov.c): the vGPU model switch and its
# refusals, VFs enabled through sriov_numvfs, a VF given a type through
# gpuvirt/current_vgpu_type as NVIDIA's are, the same accounting as mdev
# vGPUs, a VFIO client and QEMU on a VF by PCI address, refusals while a VF
# is open, scheduler shares across VF vGPUs, the vGPU's settings in the
# VF's own files, a MIG-backed VF, and a GPU or
# module going away with typed VFs. Checks sysfs, netlink (gpuvirtctl) and
# what the simulated GPU was provisioned with (debugfs sim0/vfs). KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

PF=/sys/bus/pci/devices/8000:00:00.0
SIM=/sys/kernel/debug/gpuvirt_sim/sim0
CORE=/sys/kernel/debug/gpuvirt/gpus/sim0
VF1=8000:00:00.1 VF2=8000:00:00.2 VF3=8000:00:00.3 VF4=8000:00:00.4
U=2b9f0c3e-6a1d-4f7e-8c55-0000000005a1
QPID=

vmt_on_exit vmt_unload gpuvirt_sim gpuvirt
vmt_on_exit vmt_remove_mdevs "$U"
vmt_on_exit vmt_reap QPID
vmt_need_modules gpuvirt
vmt_need_cmds lspci

vf() { echo "/sys/bus/pci/devices/$1/gpuvirt/$2"; }
type_id() {	# the id VF $1 lists for type $2
	awk -v t="$2" '$1 ~ /^[0-9]+$/ && $3 == t { print $1 }' "$(vf "$1" creatable_vgpu_types)"
}
n_creatable() {
	awk '$1 ~ /^[0-9]+$/' "$(vf "$1" creatable_vgpu_types)" | wc -l
}
json() {	# json FILE PYTHON-EXPR-ON-d
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
vf_params() {	# VF: weight min_pct max_pct frame_rate_limiter, from its files
	echo "$(cat "$(vf "$1" weight)") $(cat "$(vf "$1" min_pct)")" \
		"$(cat "$(vf "$1" max_pct)") $(cat "$(vf "$1" frame_rate_limiter)")"
}
nl_params() {	# UUID: the same four, as netlink reports them
	"$CTL" -j vgpu show uuid "$1" | python3 -c 'import json, sys
v = json.load(sys.stdin)["vgpu"][0]
print(v["weight"], v["min"], v["max"], int(v["frame-rate-limiter"]))'
}
core_params() {	# UUID: weight min_ppm max_ppm frame_rate_limiter, from debugfs
	awk -F': ' '$1 == "weight" { w = $2 } $1 == "min_ppm" { mn = $2 }
		$1 == "max_ppm" { mx = $2 } END { printf "%s %s %s ", w, mn, mx }' \
		"$CORE/vgpus/$1/sched"
	awk -F': ' '$1 == "frame_rate_limiter" { print $2 }' "$CORE/vgpus/$1/display"
}
write_err() {	# FILE VALUE: the error writing VALUE to FILE, "ok" if none
	( echo "$2" >"$1" ) 2>&1 | sed -n 's/.*: //p' | grep . || echo ok
}
read_err() {	# FILE: the error reading FILE, "ok" if none
	cat 2>&1 <"$1" >/dev/null | sed -n 's/.*: //p' | grep . || echo ok
}

ktap_plan 21

vmt_load gpuvirt gpuvirt_sim &&
	echo "0 h200-141gb" >$BUS/new_device
ktap_result $? "modules loaded, simulated H200 created"

# 2: the PF's SR-IOV capability, as the PCI core and lspci read it
lspci -vv -s 8000:00:00.0 >"$T/vv"
[ "$(cat $PF/sriov_totalvfs)" = 16 ] && [ "$(cat $PF/sriov_numvfs)" = 0 ] &&
	grep -q "Single Root I/O Virtualization (SR-IOV)" "$T/vv" &&
	grep -q "Initial VFs: 16, Total VFs: 16" "$T/vv" &&
	grep -q "VF offset: 1, stride: 1, Device ID: 0002" "$T/vv" &&
	[ "$(cat $PF/gpuvirt/vgpu_model)" = mdev ] &&
	"$CTL" -j gpu show id 0 >"$T/g" && json "$T/g" 'd["gpu"][0]["vgpu-model"] == "mdev" and d["gpu"][0]["max-vfs"] == 16 and d["gpu"][0]["vfs"] == 0'
ktap_result $? "PF: SR-IOV capability with 16 VFs, vgpu_model mdev (sysfs and netlink)"

# 3: the mdev model refuses VFs; the model does not change under vGPUs or GIs
echo 2 >$PF/sriov_numvfs 2>"$T/err"
rc1=$?
echo $U >$PF/mdev_supported_types/gpuvirt_sim-H200-35C/create &&
	! echo sriov >$PF/gpuvirt/vgpu_model 2>/dev/null && echo 1 >/sys/bus/mdev/devices/$U/remove
ok=$?
"$CTL" mig mode gpu 0 on >/dev/null && "$CTL" mig create gpu 0 profile 1g.18gb >/dev/null &&
	! echo sriov >$PF/gpuvirt/vgpu_model 2>/dev/null &&
	"$CTL" mig destroy gpu 0 gi 0 >/dev/null && "$CTL" mig mode gpu 0 off >/dev/null
ok2=$?
[ $rc1 -ne 0 ] && grep -q "not permitted" "$T/err" && [ $ok -eq 0 ] && [ $ok2 -eq 0 ] &&
	[ "$(cat $PF/gpuvirt/vgpu_model)" = mdev ] && dmesg | grep -q "in the mdev vGPU model"
ktap_result $? "mdev model: sriov_numvfs refused (EPERM); model switch refused with an mdev vGPU and with a GI"

# 4: into the sriov model: the mdev types offer nothing
echo sriov >$PF/gpuvirt/vgpu_model && [ "$(cat $PF/gpuvirt/vgpu_model)" = sriov ] &&
	[ "$(cat $PF/mdev_supported_types/gpuvirt_sim-H200-35C/available_instances)" = 0 ] &&
	! echo $U >$PF/mdev_supported_types/gpuvirt_sim-H200-35C/create 2>/dev/null &&
	"$CTL" -j gpu show id 0 >"$T/g" && json "$T/g" 'd["gpu"][0]["vgpu-model"] == "sriov"'
ktap_result $? "sriov model: netlink says so, mdev types have 0 instances and refuse create"

# 5: VFs: the PCI core lists them, linked to the PF, each in its own IOMMU group
echo 4 >$PF/sriov_numvfs
ok=$?
groups=$(for v in $VF1 $VF2 $VF3 $VF4; do basename "$(readlink /sys/bus/pci/devices/$v/iommu_group 2>/dev/null)"; done | sort -u | grep -c .)
[ $ok -eq 0 ] && [ "$(lspci -D -n -d fffc:0002 | grep -c '^8000:00:00\.[1-4] 0302')" = 4 ] &&
	[ "$(readlink -f $PF/virtfn0)" = "$(readlink -f /sys/bus/pci/devices/$VF1)" ] &&
	[ "$(readlink -f /sys/bus/pci/devices/$VF4/physfn)" = "$(readlink -f $PF)" ] &&
	[ "$(basename "$(readlink /sys/bus/pci/devices/$VF1/driver)")" = gpuvirt_sim_vf ] &&
	[ "$(cat "$(vf $VF1 current_vgpu_type)")" = 0 ] && [ "$groups" = 0 ] &&
	"$CTL" -j gpu show id 0 >"$T/g" && json "$T/g" 'd["gpu"][0]["vfs"] == 4'
ktap_result $? "4 VFs: lspci fffc:0002, virtfnN/physfn links, bound to gpuvirt_sim_vf, untyped, no IOMMU group yet"

# 6: an untyped VF can take any of the GPU's time-sliced types
head -1 "$(vf $VF1 creatable_vgpu_types)" >"$T/hdr"
[ "$(cat "$T/hdr")" = "ID    : vGPU Name" ] && [ "$(n_creatable $VF1)" = 23 ] &&
	[ -n "$(type_id $VF1 H200-35C)" ] && [ -n "$(type_id $VF1 H200-1B)" ]
ktap_result $? "creatable_vgpu_types: the NVIDIA layout, 23 types on an empty H200"

# 7: typing a VF makes the vGPU; the sim was provisioned with its slice
ID35=$(type_id $VF1 H200-35C)
echo "$ID35" >"$(vf $VF1 current_vgpu_type)"
ok=$?
UA=$(cat "$(vf $VF1 vgpu_uuid)")
"$CTL" -j vgpu show uuid "$UA" >"$T/v" 2>&1
ktap_diag "$(cat "$T/v")" "$(cat $SIM/vfs)"
[ $ok -eq 0 ] && [ "$(cat "$(vf $VF1 current_vgpu_type)")" = "$ID35" ] &&
	json "$T/v" 'd["vgpu"][0]["vf"] == "8000:00:00.1" and d["vgpu"][0]["type"] == "H200-35C" and d["vgpu"][0]["gpu"] == 0' &&
	grep -q "^vf 0: type H200-35C vram_offset 0 vram_size 37580963840 engines 0x7f ctx 0 gi -1$" $SIM/vfs &&
	[ -d "$CORE/vgpus/$UA" ] && [ -L /sys/bus/pci/devices/$VF1/iommu_group ] &&
	[ "$(n_creatable $VF1)" = 0 ] && [ "$(n_creatable $VF2)" = 1 ] && [ -n "$(type_id $VF2 H200-35C)" ]
ktap_result $? "type H200-35C on VF 1: vGPU in netlink with vf, sim provisioned, own IOMMU group; homogeneous accounting"

# 8: gpuvirtctl picks the next free VF; the type's room is shared with mdev accounting
"$CTL" -j vgpu add gpu 0 type H200-35C >"$T/a" 2>&1 && json "$T/a" 'd["vgpu"][0]["vf"] == "8000:00:00.2"' &&
	"$CTL" vgpu add gpu 0 type H200-35C >/dev/null && "$CTL" vgpu add gpu 0 type H200-35C >/dev/null
ok=$?
"$CTL" vgpu add gpu 0 type H200-35C >"$T/out" 2>"$T/err"
rc=$?
ktap_diag "$(cat "$T/a" "$T/err")"
[ $ok -eq 0 ] && [ $rc -ne 0 ] && grep -q "no free VF that can take a vGPU of type H200-35C" "$T/err" &&
	[ "$(grep -c '^vf ' $SIM/vfs)" = 4 ] && [ "$(n_creatable $VF4)" = 0 ] &&
	[ "$("$CTL" vgpu show | grep -c ' vf 8000:00:00\.')" = 4 ]
ktap_result $? "vgpu add picks VFs 2, 3, 4; a fifth H200-35C does not fit (4 per H200, as for mdev)"

# 9: a VFIO client on a VF: the guest ABI, and VRAM zero for the new tenant
UB=$(cat "$(vf $VF2 vgpu_uuid)")
"$VMBIN/vgpu_work" -z $VF1 >"$T/w1" 2>&1 && "$VMBIN/vgpu_work" -z $VF2 >"$T/w2" 2>&1
ok=$?
ktap_diag "$(cat "$T/w1" "$T/w2")"
[ $ok -eq 0 ] && grep -q "VRAM reads zero" "$T/w2" && grep -q "fill ok, copy ok, compute ok" "$T/w1" &&
	grep -q "^cmds: [1-9]" $SIM/engine
ktap_result $? "vgpu_work on VFs 1 and 2 by PCI address: ring work right, VF 2's VRAM zero after VF 1 wrote"

# 10: re-typing gives a new tenant zeroed VRAM and a new UUID
echo 0 >"$(vf $VF1 current_vgpu_type)" && echo "$ID35" >"$(vf $VF1 current_vgpu_type)"
ok=$?
UA2=$(cat "$(vf $VF1 vgpu_uuid)")
"$VMBIN/vgpu_work" -z $VF1 >"$T/w3" 2>&1
rc=$?
ktap_diag "$(cat "$T/w3")"
[ $ok -eq 0 ] && [ $rc -eq 0 ] && [ "$UA2" != "$UA" ] && ! "$CTL" vgpu show uuid "$UA" >/dev/null 2>&1 &&
	grep -q "provisions: 5" $SIM/vfs && grep -q "releases: 1" $SIM/vfs
ktap_result $? "clear and re-type VF 1: new UUID, old one gone, VRAM reads zero again, sim released and re-provisioned"

# 11: QEMU takes a VF by PCI address; while it is open the VF keeps its type
mkfifo "$T/mon"
timeout 120 qemu-system-x86_64 -accel tcg -machine q35 -nodefaults -display none -S \
	-monitor stdio -m 256 -device vfio-pci,host=$VF1 <"$T/mon" >"$T/q" 2>"$T/qerr" &
QPID=$!
exec 9>"$T/mon"
echo "info pci" >&9
for _ in $(seq 50); do grep -q "1234:6776" "$T/q" && break; sleep 0.2; done
open=$("$CTL" -j vgpu show uuid "$UA2" | python3 -c 'import json, sys; print(json.load(sys.stdin)["vgpu"][0]["open"])')
echo 0 >"$(vf $VF1 current_vgpu_type)" 2>/dev/null
rc1=$?
echo 0 >$PF/sriov_numvfs 2>/dev/null
rc2=$?
echo quit >&9
exec 9>&-
wait $QPID
qrc=$?
QPID=
ktap_diag "$(tr -d '\r' <"$T/q" | grep -A4 1234:6776)" "$(cat "$T/qerr")"
[ "$open" = True ] && [ $rc1 -ne 0 ] && [ $rc2 -ne 0 ] && [ $qrc -eq 0 ] &&
	tr -d '\r' <"$T/q" | grep -q "BAR2: 64 bit prefetchable memory" &&
	[ "$(cat "$(vf $VF1 current_vgpu_type)")" = "$ID35" ] && [ "$(cat $PF/sriov_numvfs)" = 4 ]
ktap_result $? "QEMU -device vfio-pci,host=$VF1: our vGPU; while open, clearing the type and disabling VFs are refused"

# 12: closed again, the type can be cleared
"$CTL" -j vgpu show uuid "$UA2" >"$T/v" && json "$T/v" 'd["vgpu"][0]["open"] is False' &&
	"$CTL" vgpu del uuid "$UA2" && [ "$(cat "$(vf $VF1 current_vgpu_type)")" = 0 ] &&
	! grep -q "^vf 0:" $SIM/vfs
ktap_result $? "after QEMU quit: not open; vgpu del clears VF 1's type, the sim released it"

# 13: scheduler shares across VF vGPUs
UC=$(cat "$(vf $VF3 vgpu_uuid)")
"$CTL" vgpu del uuid "$(cat "$(vf $VF4 vgpu_uuid)")" &&
	echo weighted >$PF/gpuvirt/sched_policy &&
	"$CTL" vgpu set uuid "$UB" weight 300 && "$CTL" vgpu set uuid "$UC" weight 100
ok=$?
# The ratio is judged between two snapshots taken while both loads run:
# under TCG the two start and end seconds apart, and one running alone
# takes the whole engine, as it should. The loads run until they are told
# to stop after the second snapshot: on a loaded debug guest getting both
# started has taken longer than a fixed run would last.
"$VMBIN/vgpu_load" $VF2 --seconds 0 --quiet --report "$T/rb" &
l1=$!
"$VMBIN/vgpu_load" $VF3 --seconds 0 --quiet --report "$T/rc" &
l2=$!
# both_running FILE: both vGPUs have had engine time in FILE (vgpu show)
both_running() {
	python3 -c 'import json, sys
v = {x["uuid"]: x["stats"]["run"] for x in json.load(open(sys.argv[1]))["vgpu"]}
sys.exit(0 if v[sys.argv[2]] > 0 and v[sys.argv[3]] > 0 else 1)' "$1" "$UB" "$UC" 2>/dev/null
}
for ((i = 0; i < 300; i++)); do
	"$CTL" -j vgpu show >"$T/all0" && both_running "$T/all0" && break
	sleep 0.2
done
sleep 4
"$CTL" -j vgpu show >"$T/all"
both=0
kill -0 $l1 2>/dev/null && kill -0 $l2 2>/dev/null && both=1
kill -TERM $l1 $l2 2>/dev/null
wait $l1; r1=$?
wait $l2; r2=$?
python3 - "$T/all0" "$T/all" "$UB" "$UC" "$both" >"$T/share" 2>&1 <<'PY'
import json, sys
a = {x["uuid"]: x for x in json.load(open(sys.argv[1]))["vgpu"]}
v = {x["uuid"]: x for x in json.load(open(sys.argv[2]))["vgpu"]}
ub, uc = sys.argv[3], sys.argv[4]
b, c = v[ub], v[uc]
assert b["weight"] == 300 and c["weight"] == 100, (b["weight"], c["weight"])
assert sys.argv[5] == "1", "a load ended before the second snapshot"
ratio = (b["stats"]["run"] - a[ub]["stats"]["run"]) / (c["stats"]["run"] - a[uc]["stats"]["run"])
print("run ratio %.2f over 4 s with both busy (weights 3:1)" % ratio)
assert 2.4 <= ratio <= 3.6, ratio
PY
rc=$?
ktap_diag "$(cat "$T/share")"
[ $ok -eq 0 ] && [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ $rc -eq 0 ]
ktap_result $? "weighted 300:100 across two VF vGPUs under load: engine time follows the weights"

# 14: a typed VF's gpuvirt/ files are its vGPU's: they read what netlink
# reports, and what is written through them is what netlink and the
# core's scheduler state (debugfs) then show, for that vGPU only
p0=$(vf_params $VF2)
n0=$(nl_params "$UB")
echo 250 >"$(vf $VF2 weight)" && echo 10 >"$(vf $VF2 min_pct)" &&
	echo 80 >"$(vf $VF2 max_pct)" && echo 0 >"$(vf $VF2 frame_rate_limiter)"
ok=$?
p1=$(vf_params $VF2)
n1=$(nl_params "$UB")
c1=$(core_params "$UB")
ktap_diag "before: VF $p0, netlink $n0" "after: VF $p1, netlink $n1, debugfs $c1"
[ "$p0" = "300 0 100 1" ] && [ "$n0" = "$p0" ] && [ $ok -eq 0 ] &&
	[ "$p1" = "250 10 80 0" ] && [ "$n1" = "$p1" ] &&
	[ "$c1" = "250 100000 800000 0" ] &&
	[ "$(vf_params $VF3)" = "100 0 100 1" ] && [ "$(nl_params "$UC")" = "100 0 100 1" ]
ktap_result $? "VF 2's weight/min_pct/max_pct/frame_rate_limiter: read as netlink says; writes seen in netlink and debugfs"

# 15: the VF's files refuse what the mdev's refuse, with the same errnos,
# and a refused write changes nothing
errs=
for w in weight=0 weight=10001 min_pct=101 max_pct=0 max_pct=101 \
	 frame_rate_limiter=2 weight=x min_pct=90 max_pct=5; do
	errs="$errs$w:$(write_err "$(vf $VF2 "${w%=*}")" "${w#*=}") "
done
enospc=$(write_err "$(vf $VF3 min_pct)" 95)
ktap_diag "$errs" "VF 3 min_pct 95: $enospc"
[ "$(echo "$errs" | grep -o "Invalid argument" | wc -l)" = 9 ] &&
	[ "$enospc" = "No space left on device" ] &&
	[ "$(vf_params $VF2)" = "250 10 80 0" ] && [ "$(nl_params "$UB")" = "250 10 80 0" ] &&
	[ "$(core_params "$UB")" = "250 100000 800000 0" ] &&
	[ "$(vf_params $VF3)" = "100 0 100 1" ]
ktap_result $? "VF files: out of range, not a number and min_pct above max_pct get EINVAL, minimums past 100 % ENOSPC; nothing changed"

# 16: an untyped VF has no vGPU: its files are there and fail with ENODEV,
# also once a type is cleared; a new type starts from the defaults
errs=
for f in weight min_pct max_pct frame_rate_limiter; do
	errs="$errs$f:$(read_err "$(vf $VF1 $f)"),$(write_err "$(vf $VF1 $f)" 1) "
	errs="$errs$f:$(read_err "$(vf $VF4 $f)"),$(write_err "$(vf $VF4 $f)" 1) "
done
echo "$ID35" >"$(vf $VF1 current_vgpu_type)" && echo 7 >"$(vf $VF1 weight)"
ok=$?
p=$(vf_params $VF1)
echo 0 >"$(vf $VF1 current_vgpu_type)" && echo "$ID35" >"$(vf $VF1 current_vgpu_type)"
ok2=$?
p2=$(vf_params $VF1)
echo 0 >"$(vf $VF1 current_vgpu_type)"
ok3=$?
after=$(read_err "$(vf $VF1 weight)"),$(write_err "$(vf $VF1 weight)" 5)
ktap_diag "$errs" "typed: $p, re-typed: $p2, cleared: $after"
[ "$(echo "$errs" | grep -o "No such device" | wc -l)" = 16 ] &&
	[ $ok -eq 0 ] && [ "$p" = "7 0 100 1" ] && [ $ok2 -eq 0 ] && [ "$p2" = "100 0 100 1" ] &&
	[ $ok3 -eq 0 ] && [ "$after" = "No such device,No such device" ]
ktap_result $? "untyped VFs 1 and 4: weight/min_pct/max_pct/frame_rate_limiter fail with ENODEV; a new type starts from the defaults"

# 17: disabling VFs with typed ones is refused; after clearing, allowed
echo 0 >$PF/sriov_numvfs 2>/dev/null
rc=$?
"$CTL" vgpu del uuid "$UB" && "$CTL" vgpu del uuid "$UC" && echo 0 >$PF/sriov_numvfs
ok=$?
[ $rc -ne 0 ] && [ $ok -eq 0 ] && [ -z "$(lspci -D -d fffc:0002)" ] && [ ! -e $PF/virtfn0 ] &&
	grep -q "provisions: 7" $SIM/vfs && grep -q "releases: 7" $SIM/vfs
ktap_result $? "sriov_numvfs 0 refused while VFs have types, done once cleared: VFs gone"

# 18: a MIG-backed VF: its vGPU lives on a GI, provisioned with the GI's engines
"$CTL" mig mode gpu 0 on >/dev/null && "$CTL" mig create gpu 0 profile 3g.71gb >/dev/null &&
	echo 1 >$PF/sriov_numvfs
ok=$?
ID3=$(type_id $VF1 H200-3-71C)
[ $ok -eq 0 ] && [ -n "$ID3" ] && [ -z "$(type_id $VF1 H200-35C)" ] &&
	echo "$ID3" >"$(vf $VF1 current_vgpu_type)" &&
	"$CTL" -j vgpu show uuid "$(cat "$(vf $VF1 vgpu_uuid)")" >"$T/v" &&
	json "$T/v" 'd["vgpu"][0]["gi"] == 0 and d["vgpu"][0]["vf"] == "8000:00:00.1"' &&
	grep -q "^vf 0: type H200-3-71C .* engines 0x7 ctx 0 gi 0$" $SIM/vfs &&
	grep -qx "vgpus: 1" $CORE/gis/0/info && ! "$CTL" mig destroy gpu 0 gi 0 >/dev/null 2>&1
ktap_result $? "MIG-backed VF: H200-3-71C on GI 0 (netlink, core debugfs), sim provisioned with the GI's engines; GI destroy refused"

# 19: the model does not change while VFs are enabled
! echo mdev >$PF/gpuvirt/vgpu_model 2>/dev/null && [ "$(cat $PF/gpuvirt/vgpu_model)" = sriov ]
ktap_result $? "vgpu_model stays sriov while VFs are enabled"

# 20: a GPU deleted with a typed VF, open by a client: its removal waits, then all goes
"$VMBIN/vgpu_load" $VF1 --seconds 0 --quiet &
lp=$!
sleep 1
( sleep 2; kill -TERM $lp ) &
echo 0 >$BUS/del_device
ok=$?
wait $lp
[ $ok -eq 0 ] && [ ! -e $PF ] && [ -z "$(lspci -D | grep '^8000:')" ] && [ ! -e $CORE ]
ktap_result $? "del_device with an open MIG-backed VF vGPU: waits for the client, then VF, GI and GPU go"

# 21: unload with VFs enabled and typed
echo "0 h200-141gb" >$BUS/new_device && echo sriov >$PF/gpuvirt/vgpu_model &&
	echo 2 >$PF/sriov_numvfs && echo "$(type_id $VF2 H200-70C)" >"$(vf $VF2 current_vgpu_type)" &&
	rmmod gpuvirt_sim && rmmod gpuvirt && [ -z "$(lspci -D | grep '^8000:')" ]
ktap_result $? "rmmod with a typed VF: VFs, vGPU and GPU removed, modules gone"

ktap_finish
