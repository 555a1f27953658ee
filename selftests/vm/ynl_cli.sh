#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The spec is the interface: the kernel's own YNL CLI (tools/net/ynl/cli.py
# from Debian's linux-source-6.12, extracted at build time) drives the
# module knowing nothing but Documentation/netlink/specs/gpuvirt.yaml, and
# what it reads and sets agrees with sysfs and debugfs.
#
# Runs as root in the test VM (selftests/vm-run.sh). Prints KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

YNL=build/ksrc/tools/net/ynl
SPEC=Documentation/netlink/specs/gpuvirt.yaml
SCHEMA=build/ksrc/Documentation/netlink/genetlink-legacy.yaml
TYPES=/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types
GV=/sys/bus/gpuvirt_sim/devices/sim0/gpu/gpuvirt
U=7a11c0de-0000-4000-8000-000000000001
OUT=$T/out

if [ ! -f "$YNL/cli.py" ] || ! python3 -c 'import yaml, jsonschema' 2>/dev/null; then
	vmt_skip "the YNL CLI or python3-yaml/jsonschema is missing"
fi

ynl() {
	python3 "$YNL/cli.py" --spec "$SPEC" --schema "$SCHEMA" --output-json "$@" \
		>"$OUT" 2>&1
}

# jq-like checks on the CLI's JSON output, in python: $1 is an expression
# over "r" (the parsed output) that must be true.
out_is() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$OUT" "$1"
}

cleanup() {
	vmt_remove_mdevs "$U"
	[ -e /sys/bus/gpuvirt_sim/devices/sim0 ] && echo 0 > /sys/bus/gpuvirt_sim/del_device
	vmt_unload gpuvirt_sim gpuvirt
}
vmt_on_exit cleanup

vmt_load gpuvirt gpuvirt_sim || exit 1
echo "0 h200-141gb" > /sys/bus/gpuvirt_sim/new_device || exit 1
echo $U > $TYPES/gpuvirt_sim-H200-35C/create || exit 1

ktap_plan 8

ynl --list-ops
ktap_check "the spec lists every operation" \
	grep -q "sched-set" "$OUT"

ynl --dump gpu-get
ktap_check "gpu-get dump shows the simulated H200" \
	out_is 'len(r) == 1 and r[0]["name"] == "sim0" and r[0]["model"] == "h200-141gb" and r[0]["vram-size"] == 141 << 30'

ynl --dump type-get --json '{"gpu-id": 0}'
# the time-sliced ones: netlink gives the MIG-backed types per GI, and the
# GPU's own parent lists them too only for libvirt (mig.rst)
ntypes=$(ls -d $TYPES/gpuvirt_sim-* | grep -cvE -- '-[0-9]-[0-9]+C')
ktap_check "type-get dump has every time-sliced mdev type ($ntypes)" \
	out_is "len(r) == $ntypes and any(t['name'] == 'H200-35C' and t['available-instances'] == 3 for t in r)"

ynl --do sched-set --json '{"gpu-id": 0, "policy": "equal-share", "timeslice-us": 500}'
ktap_check "sched-set by enum name lands in sysfs" \
	test "$(cat $GV/sched_policy) $(cat $GV/sched_slice_us)" = "equal-share 500"

ynl --do sched-get --json '{"gpu-id": 0}'
ktap_check "sched-get decodes the policy enum" \
	out_is 'r["policy"] == "equal-share" and r["timeslice-effective-us"] == 500 and r["vgpus"] == 1'

ynl --do vgpu-set --json "{\"uuid\": \"$U\", \"weight\": 250, \"max-pct\": 40}"
ktap_check "vgpu-set lands in sysfs" \
	test "$(cat /sys/bus/mdev/devices/$U/gpuvirt/weight) $(cat /sys/bus/mdev/devices/$U/gpuvirt/max_pct)" = "250 40"

ynl --dump vgpu-get
ktap_check "vgpu-get dump decodes the nested stats" \
	out_is "r[0]['uuid'] == '$U' and r[0]['weight'] == 250 and 'run-ns' in r[0]['stats']"

if ynl --do vgpu-set --json "{\"uuid\": \"$U\", \"min-pct\": 90}"; then
	ktap_result 1 "a refused vgpu-set fails with the kernel's message"
else
	grep -q "min-pct must not be above max-pct" "$OUT"
	ktap_result $? "a refused vgpu-set fails with the kernel's message"
fi
ktap_diag "$(tail -3 "$OUT")"
ktap_finish
