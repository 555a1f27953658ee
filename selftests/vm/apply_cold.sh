#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The declarative file restores a host from cold, as at boot, and holds on
# full GPUs. With fresh modules (no GPU, no VF), the example file
# (Documentation/examples/gpuvirt.yaml) is applied once by the command line
# of gpuvirt-apply.service's ExecStart, run as systemd would run it (there
# is no systemd in the guest: the unit's condition file and binary are put
# where the unit says, in a mount namespace of the test's own). Every vGPU
# of the file, mdev and VF alike, is then found in sysfs, over netlink
# (gpuvirtctl -j) and in debugfs (the core's schedulers and GIs, the
# simulated GPUs' VF provisioning). The GPUs are filled up, mdev (no
# available_instances left), MIG (a vGPU on every GI) and sriov (every VF
# typed, creatable_vgpu_types empty): assert passes and a second apply has
# nothing to do, for the example file and for one listing everything.
# Last, the wait for VFs: with the PF's sriov_drivers_autoprobe 0 no driver
# takes them, and apply fails within --vf-timeout naming the PF and the VF,
# undoing all; VFs bound while it waits are typed in the same run. KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_need_root
vmt_need_ctl
vmt_need_modules gpuvirt gpuvirt_sim
vmt_need_cmds unshare python3
vmt_need_debugfs

UNIT=user/gpuvirt-apply.service
EXAMPLE=Documentation/examples/gpuvirt.yaml

# /etc and /usr/sbin writable in a mount namespace of this test only
if [ -z "${GV_APPLY_COLD_NS:-}" ]; then
	export GV_APPLY_COLD_NS=1
	exec unshare -m --propagation private bash "$0" "$@"
fi

vmt_tmpdir
RUN_LOGS_OUT=1
vmt_start_clean gpuvirt_sim gpuvirt
vmt_kmsg_mark

PCI=/sys/bus/pci/devices
U=5a3c0001-0000-4000-8000-0000000000	# the example's UUIDs end in 2 digits

# is FILE VALUE: the file's first line is VALUE
is() {
	sysfs_is "$1" "$2"
}
vf() { echo "$PCI/$1/gpuvirt/$2"; }
uuid_of() { cat "$(vf "$1" vgpu_uuid)"; }
# json FILE PYTHON-EXPR-ON-d: the JSON document in FILE satisfies it
json() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" ||
		{ ktap_diag "$1 fails: $2" "$(cat "$1")"; return 1; }
}
# overlay DIR: DIR writable here, its changes on tmpfs
overlay() {
	local s=$OV$1

	mkdir -p "$s/upper" "$s/work" &&
		mount -t overlay overlay -o "lowerdir=$1,upperdir=$s/upper,workdir=$s/work" "$1"
}

ktap_plan 13

# 1: fresh modules, no GPU, no vGPU; the unit's paths in place
vmt_load gpuvirt gpuvirt_sim
ok=$?
exec_start=$(sed -n 's/^ExecStart=//p' $UNIT)
cond=$(sed -n 's/^ConditionPathExists=//p' $UNIT)
read -r -a argv <<<"$exec_start"
ktap_diag "$UNIT: ExecStart=$exec_start" "ConditionPathExists=$cond"
# the overlays' upper layers, on a tmpfs that goes with the namespace
OV=$(mktemp -d) && mount -t tmpfs -o mode=755 tmpfs "$OV" && modprobe -q overlay || ok=1
[ $ok -eq 0 ] && [ -n "$exec_start" ] && [ -n "$cond" ] &&
	overlay /etc && overlay "${argv[0]%/*}" &&
	mkdir -p "${cond%/*}" && cp "$EXAMPLE" "$cond" && cp "$CTL" "${argv[0]}" &&
	[ -z "$(ls $BUS/devices)" ] && [ -z "$(ls "$MDEV")" ] &&
	[[ " $exec_start " == *" $cond "* ]]
ktap_result $? "fresh modules, no simulated GPU or mdev; the unit's file and binary where it says"

# 2: one run of ExecStart from cold: GPUs, modes, GIs, VFs and every vGPU
[ -e "$cond" ] && "${argv[@]}" >"$T/out" 2>"$T/err"
rc=$?
diag_file "$T/out"
diag_file "$T/err"
[ $rc -eq 0 ] && [ ! -s "$T/err" ] &&
	has "$T/out" "+ simulated-gpu 3 model h200-141gb" &&
	has "$T/out" "~ gpu 3 vgpu-model mdev -> sriov" && has "$T/out" "~ gpu 3 vfs 0 -> 4" &&
	has "$T/out" "+ vgpu vf 8003:00:00.1 type H200-35C on gpu 3 weight 300" &&
	has "$T/out" "+ vgpu vf 8003:00:00.2 type H200-35C on gpu 3" &&
	has "$T/out" "+ vgpu ${U}21 type H200-3-71C on gpu 2 gi 0" &&
	has "$T/out" "+ vgpu ${U}01 type H200-35C on gpu 0 weight 100 min-pct 25 max-pct 100"
ktap_result $? "the unit's ExecStart applies the example in one run: 4 GPUs, MIG, VFs enabled and typed"

# 3: the mdev vGPUs: sysfs, netlink and the core's schedulers
mdev_ok() {	# mdev_ok UUID GPU TYPE WEIGHT
	local d=$MDEV/$1 t

	t=$(readlink -f "$d/mdev_type") && is "$t/name" "$3" &&
		debugfs_is "$CORE/sim$2/vgpus/$1/sched" weight "$4"
}
"$CTL" -j vgpu show >"$T/v.json"
mdev_ok ${U}01 0 H200-35C 100 && mdev_ok ${U}02 0 H200-35C 200 &&
	mdev_ok ${U}03 0 H200-35C 100 &&
	debugfs_is "$CORE/sim0/vgpus/${U}01/sched" min_ppm 250000 &&
	mdev_ok ${U}11 1 CUSTOM-12C 300 && mdev_ok ${U}12 1 CUSTOM-6C 100 &&
	[ -e "$MDEV/${U}21" ] && debugfs_is "$CORE/sim0/sched" policy equal-share &&
	debugfs_is "$CORE/sim0/sched" slice_ns 2000000 && debugfs_is "$CORE/sim1/sched" policy weighted &&
	json "$T/v.json" '{(v["uuid"], v["gpu"], v["type"], v["weight"], v["min"]) for v in d["vgpu"] if "vf" not in v} == {
		("'${U}01'", 0, "H200-35C", 100, 25), ("'${U}02'", 0, "H200-35C", 200, 0),
		("'${U}03'", 0, "H200-35C", 100, 0), ("'${U}11'", 1, "CUSTOM-12C", 300, 0),
		("'${U}12'", 1, "CUSTOM-6C", 100, 0), ("'${U}21'", 2, "H200-3-71C", 100, 0)}'
ktap_result $? "mdev vGPUs of GPUs 0, 1, 2: sysfs types, netlink settings, schedulers in debugfs"

# 4: MIG: the partition and the vGPU on GI 0
gi_ok() {	# gi_ok GPU GI PROFILE VGPUS
	debugfs_is "$CORE/sim$1/gis/$2/info" profile "$3" &&
		debugfs_is "$CORE/sim$1/gis/$2/info" vgpus "$4"
}
is $BUS/devices/sim2/gpu/gpuvirt/mig_mode 1 &&
	gi_ok 2 0 3g.71gb 1 && gi_ok 2 1 2g.35gb 0 && gi_ok 2 2 1g.18gb 0 && gi_ok 2 3 1g.18gb 0 &&
	json "$T/v.json" '[v.get("gi") for v in d["vgpu"] if v["uuid"] == "'${U}21'"] == [0]'
ktap_result $? "GPU 2 in MIG mode: GIs 3g.71gb, 2g.35gb, 1g.18gb x2; the vGPU on GI 0"

# 5: the VF vGPUs: sysfs, netlink, the core and the simulated GPU
PF3=$PCI/8003:00:00.0
VF1=8003:00:00.1 VF2=8003:00:00.2 VF3=8003:00:00.3 VF4=8003:00:00.4
id35=$(awk '$1 ~ /^[0-9]+$/ && $3 == "H200-35C" { print $1 }' "$(vf $VF3 creatable_vgpu_types)")
ktap_diag "H200-35C is type $id35 of GPU 3's VFs"
[ -n "$id35" ] && is $PF3/gpuvirt/vgpu_model sriov && is $PF3/sriov_numvfs 4 &&
	is "$(vf $VF1 current_vgpu_type)" "$id35" && is "$(vf $VF2 current_vgpu_type)" "$id35" &&
	is "$(vf $VF3 current_vgpu_type)" 0 && is "$(vf $VF4 current_vgpu_type)" 0 &&
	json "$T/v.json" 'sorted((v["vf"], v["uuid"], v["gpu"], v["type"], v["weight"]) for v in d["vgpu"] if "vf" in v) == [
		("'$VF1'", "'"$(uuid_of $VF1)"'", 3, "H200-35C", 300), ("'$VF2'", "'"$(uuid_of $VF2)"'", 3, "H200-35C", 100)]' &&
	debugfs_is "$CORE/sim3/vgpus/$(uuid_of $VF1)/sched" weight 300 &&
	debugfs_is "$CORE/sim3/sched" policy weighted &&
	grep -q "^vf 0: type H200-35C " "$HW/sim3/vfs" && grep -q "^vf 1: type H200-35C " "$HW/sim3/vfs" &&
	! grep -q "^vf 2: type" "$HW/sim3/vfs" && grep -q "provisions: 2" "$HW/sim3/vfs"
ktap_result $? "GPU 3's VFs 1 and 2 typed H200-35C (weight 300 on VF 1): sysfs, netlink, core and sim debugfs"

# 6: the same again: nothing to do, and assert agrees
"${argv[@]}" >"$T/again" 2>"$T/err"
ok=$?
diag_file "$T/again"
diag_file "$T/err"
[ $ok -eq 0 ] && lines_are "$T/again" "nothing to do" && [ ! -s "$T/err" ]
ok=$?
run assert -f "$cond"
[ $ok -eq 0 ] && [ $rc -eq 0 ] && [ ! -s "$T/out" ]
ktap_result $? "the unit again: nothing to do; assert exit 0"

# 7: fill every GPU up: mdev, mixed, MIG (a vGPU on each GI), sriov (each VF)
ok=0
for a in "gpu 0 type H200-35C uuid ${U}04" "gpu 1 type CUSTOM-6C uuid ${U}13" \
	"gpu 2 type H200-2-35C gi 1 uuid ${U}22" "gpu 2 type H200-1-18C gi 2 uuid ${U}23" \
	"gpu 2 type H200-1-18C gi 3 uuid ${U}24" "gpu 3 type H200-35C vf $VF3" \
	"gpu 3 type H200-35C vf $VF4 weight 50"; do
	# shellcheck disable=SC2086
	run vgpu add $a
	[ $rc -eq 0 ] || ok=1
done
avail() {	# the instances GPU $1's types have left, all added up
	local n=0 f v

	for f in "$PCI/$1"/mdev_supported_types/*/available_instances; do
		read -r v <"$f" && n=$((n + v))
	done
	echo $n
}
hdr_only() {	# VF $1 lists no type
	mapfile -t l <"$(vf "$1" creatable_vgpu_types)"
	[ ${#l[@]} -eq 1 ] || { ktap_diag "VF $1 lists: ${l[*]}"; return 1; }
}
[ $ok -eq 0 ] && [ "$(avail 8000:00:00.0)" = 0 ] && [ "$(avail 8001:00:00.0)" = 0 ] &&
	gi_ok 2 1 2g.35gb 1 && gi_ok 2 2 1g.18gb 1 && gi_ok 2 3 1g.18gb 1 &&
	hdr_only $VF1 && hdr_only $VF2 && hdr_only $VF3 && hdr_only $VF4 &&
	is "$(vf $VF4 current_vgpu_type)" "$id35" && grep -q "provisions: 4" "$HW/sim3/vfs"
ktap_result $? "every GPU full: no available_instances on 0 and 1, every GI busy, every VF typed and listing nothing"

# 8: the example on full GPUs: assert passes, apply has nothing to do
run assert -f "$cond"
ok=$rc
"${argv[@]}" >"$T/again" 2>"$T/err"
rc=$?
diag_file "$T/again"
diag_file "$T/err"
[ $ok -eq 0 ] && [ $rc -eq 0 ] && lines_are "$T/again" "nothing to do" && [ ! -s "$T/err" ]
ktap_result $? "full GPUs, the example: assert exit 0, the unit again has nothing to do"

# 9: a file of everything they hold: the same, --prune too. The example's
# text with the vGPUs added at the end of each GPU's entry (its "vgpus"
# list ends it): a YAML 1.1 library would read its VF addresses as numbers.
python3 - "$cond" "$T/full.yaml" "$U" "$VF3" "$VF4" <<'PY'
import re, sys
src, dst, u, vf3, vf4 = sys.argv[1:]
more = {"0": ["{uuid: %s04, type: H200-35C}" % u],
        "1": ["{uuid: %s13, type: CUSTOM-6C}" % u],
        "2": ["{uuid: %s22, type: H200-2-35C, gi: 1}" % u,
              "{uuid: %s23, type: H200-1-18C}" % u,
              "{uuid: %s24, type: H200-1-18C, gi: 3}" % u],
        "3": ['{vf: "%s", type: H200-35C}' % vf3,
              '{vf: "%s", type: H200-35C, weight: 50}' % vf4]}
out, gpu, in_gpus = [], None, False
def flush():
    while out and not out[-1].strip():
        out.pop()
    out.extend("      - " + v for v in more.pop(gpu, []))
    out.append("")
for line in open(src).read().split("\n"):
    if re.match(r"^\S", line):
        if gpu is not None:
            flush()
            gpu = None
        in_gpus = line.startswith("gpus:")
    m = re.match(r"^  - id: (\d+)", line)
    if in_gpus and m:
        if gpu is not None:
            flush()
        gpu = m.group(1)
    out.append(line)
if gpu is not None:
    flush()
assert not more, more
open(dst, "w").write("\n".join(out) + "\n")
PY
run assert -f "$T/full.yaml"
ok=$rc
run apply -f "$T/full.yaml"
ok2=$rc
lines_are "$T/out" "nothing to do"
ok3=$?
run apply -f "$T/full.yaml" --prune --dry-run
[ $ok -eq 0 ] && [ $ok2 -eq 0 ] && [ $ok3 -eq 0 ] && [ $rc -eq 0 ] && lines_are "$T/out" "nothing to do"
ktap_result $? "full GPUs, a file of all 15 vGPUs: assert exit 0, apply and apply --prune have nothing to do"

# 10: what netlink and debugfs say of the full host
"$CTL" -j vgpu show >"$T/v.json"
json "$T/v.json" 'len(d["vgpu"]) == 15 and sum("vf" in v for v in d["vgpu"]) == 4' &&
	debugfs_is "$CORE/sim0/sched" vgpus 4 && debugfs_is "$CORE/sim2/sched" vgpus 0 &&
	debugfs_is "$CORE/sim3/vgpus/$(uuid_of $VF4)/sched" weight 50 &&
	grep -q "^vf 3: type H200-35C " "$HW/sim3/vfs"
ktap_result $? "15 vGPUs over netlink, 4 of them VFs; debugfs agrees"

# 11: gpuvirtctl(8)'s field lists of gpu, type and vgpu show against the
# output of this host (mdev, MIG-backed and VF vGPUs): every member of an
# entry is listed, in the order listed, and its text label is in the text
# line, in that order ("stack", in JSON only, is documented apart)
python3 - user/gpuvirtctl.8 "$CTL" >"$T/man" 2>&1 <<'PY'
import json, re, subprocess, sys
man, ctl = sys.argv[1:]
lines = open(man).read().split("\n")

def fields(cmd):
    """The .TP list of the command's fields: names, and text labels."""
    i = next(i for i, l in enumerate(lines)
             if l.startswith("\\fB%s\\fR" % cmd) and lines[i - 1].startswith(".TP"))
    while not lines[i].startswith(".RS"):
        i += 1
    names, labels, depth = [], {}, 1
    while depth:
        i += 1
        l = lines[i]
        if l.startswith(".RS"):
            depth += 1
        elif l.startswith(".RE"):
            depth -= 1
        elif depth == 1 and l.startswith(".TP") and re.match(r"\.BR? ", lines[i + 1]):
            names.append(lines[i + 1].split()[1].replace("\\-", "-"))
        elif depth == 1 and l.endswith("labels it") and names:
            labels[names[-1]] = lines[i + 1].split()[1].replace("\\-", "-")
    return names, labels

def out(*args):
    return subprocess.run([ctl, *args], capture_output=True, text=True,
                          check=True).stdout

bad = 0
for cmd in ("gpu show", "type show", "vgpu show"):
    names, labels = fields(cmd)
    print("# %s: %s" % (cmd, " ".join(names)))
    doc = json.loads(out("-j", *cmd.split()))
    entries = next(iter(doc.values()))
    text = out(*cmd.split()).splitlines()
    if len(text) != len(entries) or not entries:
        print("%s: %d entries, %d lines" % (cmd, len(entries), len(text)))
        bad += 1
        continue
    for e, line in zip(entries, text):
        keys = [k for k in e if k != "stack"]
        idx = [names.index(k) if k in names else -1 for k in keys]
        if -1 in idx or idx != sorted(idx):
            print("%s: members %s, listed %s" % (cmd, keys, names))
            bad += 1
            continue
        at = 0
        for k in keys:
            if isinstance(e[k], (dict, list)):
                continue
            word = labels.get(k, k) + " "
            at = line.find(word, at) if at == 0 and line.startswith(word) else line.find(" " + word, at)
            if at < 0:
                print("%s: no \"%s\" where listed: %s" % (cmd, word.strip(), line))
                bad += 1
                break
            at += 1
sys.exit(1 if bad else 0)
PY
ok=$?
diag_file "$T/man"
[ $ok -eq 0 ] && has "$T/man" "vgpu show: uuid gpu type weight min max vram-offset vram open ctx gi vf"
ktap_result $? "gpuvirtctl(8)'s field lists of gpu, type and vgpu show name every member of this host's entries, in order"

# 12: VFs no driver takes: a bounded wait, the PF named, everything undone
PF4=$PCI/8004:00:00.0
cat >"$T/g4.yaml" <<EOF
gpus:
  - id: 4
    vgpu-model: sriov
    vfs: 2
    vgpus:
      - {vf: "8004:00:00.1", type: H200-35C, weight: 400}
EOF
ok=0
echo "4 h200-141gb" >$BUS/new_device || ok=1
echo 0 >$PF4/sriov_drivers_autoprobe || ok=1
run apply -f "$T/g4.yaml" --vf-timeout 2
[ $ok -eq 0 ] && [ $rc -eq 1 ] &&
	has "$T/err" "GPU 4: the 2 VFs of 8004:00:00.0 did not all come up within 2 s: VF 8004:00:00.1 has no gpuvirt/current_vgpu_type: no driver took it" &&
	has "$T/err" "step 2 of 3 failed (~ gpu 4 vfs 2)" && has "$T/err" "nothing was changed" &&
	is $PF4/sriov_numvfs 0 && is $PF4/gpuvirt/vgpu_model mdev
ktap_result $? "sriov_drivers_autoprobe 0: apply fails after --vf-timeout 2 naming PF and VF, undone"

# 13: VFs bound while apply waits are typed in the same run
"$CTL" apply -f "$T/g4.yaml" --vf-timeout 120 >"$T/out4" 2>"$T/err4" &
APID=$!
vmt_on_exit vmt_reap APID
for _ in $(seq 600); do
	[ -e $PF4/virtfn1 ] && break
	sleep 0.1
done
# the VFs are there, unbound: apply is still waiting for them
waiting=1
kill -0 $APID 2>/dev/null && [ ! -e "$(vf 8004:00:00.1 current_vgpu_type)" ] && waiting=0
# a driver comes for them (the PCI core probes a VF only while its PF
# autoprobes, or by driver_override)
echo 1 >$PF4/sriov_drivers_autoprobe
echo 8004:00:00.1 >/sys/bus/pci/drivers_probe
echo 8004:00:00.2 >/sys/bus/pci/drivers_probe
wait $APID
rc=$?
APID=
diag_file "$T/out4"
diag_file "$T/err4"
[ $waiting -eq 0 ] && [ $rc -eq 0 ] && is $PF4/sriov_numvfs 2 &&
	is "$(vf 8004:00:00.1 current_vgpu_type)" "$id35" &&
	debugfs_is "$CORE/sim4/vgpus/$(uuid_of 8004:00:00.1)/sched" weight 400 &&
	grep -q "^vf 0: type H200-35C " "$HW/sim4/vfs" && vmt_kernel_quiet
ktap_result $? "VFs bound while apply waits: typed in the same run; kernel log clean"

ktap_finish
