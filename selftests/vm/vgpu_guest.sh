#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The vGPU seen from inside a VM. A nested QEMU in the test VM boots a tiny
# bare-metal guest (selftests/vm/guest/) with an A100-1B vGPU attached by
# -device vfio-pci,sysfsdev=...,display=on. The guest finds the device on
# its own PCI bus, places the BARs, checks the display limits, draws a
# picture, has the engine copy and fill part of it through the ring, and
# flips head 0 to the result. The host side then takes a screendump from
# QEMU's monitor (QMP) and compares it with the picture pixel for pixel, and
# checks what netlink, the core's debugfs and the simulated GPU saw.
# Runs in the test VM; KTAP.
#
# The screendump, as PNG, goes to /run/gvout/vgpu-screendump.png (OUTDIR/guest
# on the host) for Documentation/images/.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

ELF=$VMBIN/vgpu_guest.elf
UUID=2f0c6a9e-7d41-4c5e-9b0a-0000000000b1
TYPE=/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types/gpuvirt_sim-A100-1B
CORE=/sys/kernel/debug/gpuvirt/gpus/sim0
HW=/sys/kernel/debug/gpuvirt_sim/sim0
QPID=

vmt_on_exit vmt_unload gpuvirt_sim gpuvirt
vmt_on_exit vmt_remove_mdevs "$UUID"
vmt_on_exit vmt_reap QPID
vmt_need_cmds qemu-system-x86_64
vmt_need_modules gpuvirt
[ -e "$ELF" ] || vmt_skip "no $ELF (make vm-tests)"

ktap_plan 10
vmt_load gpuvirt gpuvirt_sim &&
	echo "0 a100-40gb" >/sys/bus/gpuvirt_sim/new_device && echo $UUID >$TYPE/create
ktap_result $? "simulated A100 with an A100-1B vGPU"

# Wait for a line of the guest's console; the nested guest runs under TCG
# inside a TCG VM, so allow it time.
wait_console() {
	local i
	for ((i = 0; i < 900; i++)); do
		grep -q "^$1" "$T/console" 2>/dev/null && return 0
		kill -0 "$QPID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

qemu-system-x86_64 -accel tcg -machine q35 -nodefaults -m 64 -display none \
	-no-reboot -kernel "$ELF" -debugcon file:"$T/console" \
	-qmp unix:"$T/qmp",server=on,wait=off \
	-device vfio-pci,sysfsdev=/sys/bus/mdev/devices/$UUID,display=on \
	>"$T/qemu.out" 2>&1 &
QPID=$!
wait_console ready
rc=$?
ktap_diag "$(cat "$T/console" 2>/dev/null)" "$(cat "$T/qemu.out")"
ktap_result $rc "the guest ran to the end"

grep -qx "result: pass" "$T/console"
ktap_result $? "the guest's own checks pass (identity, limits, ring, frame B)"

# What the guest found: our identity, and its refusals of a mode wider than
# the type's and of a scanout past the slice.
grep -qx "pci.id: 0x67761234" "$T/console" &&
	grep -qx "pci.class_rev: 0x03020001" "$T/console" &&
	grep -qx "reg.magic: 0x56555047" "$T/console" &&
	grep -qx "disp.heads: 4" "$T/console" && grep -qx "disp.max_width: 5120" "$T/console" &&
	grep -qx "head0.too_wide: error 2 control 0" "$T/console" &&
	grep -qx "head0.past_slice: error 5 control 0" "$T/console"
ktap_result $? "the guest found the vGPU on its bus and the type's limits hold"

# The screendump, over QMP, compared with the picture the guest drew.
python3 - "$T/qmp" "$T/shot.ppm" <<'PY' >"$T/qmp.log" 2>&1
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
def cmd(c, **a):
    f.write(json.dumps({"execute": c, "arguments": a} if a else {"execute": c}) + "\n")
    f.flush()
    while True:
        r = json.loads(f.readline())
        if "return" in r or "error" in r:
            print(c, r)
            return r
json.loads(f.readline())
cmd("qmp_capabilities")
r = cmd("screendump", filename=sys.argv[2])
sys.exit(0 if "return" in r else 1)
PY
rc=$?
ktap_diag "$(cat "$T/qmp.log")"
ktap_result $rc "QEMU took a screendump of the vGPU's console"

python3 - "$T/shot.ppm" /run/gvout/vgpu-screendump.png <<'PY' >"$T/cmp.log" 2>&1
import struct, sys, zlib
# Keep in step with selftests/vm/guest/vgpu_guest.c.
W, H = 320, 240
BAND_Y, BAND_H, BAND = 100, 40, 0xff8000
BOX_X, BOX_Y, BOX_N, BOX = 8, 8, 16, 0xffffff
def want(x, y):
    if BOX_X <= x < BOX_X + BOX_N and BOX_Y <= y < BOX_Y + BOX_N:
        return BOX
    if BAND_Y <= y < BAND_Y + BAND_H:
        return BAND
    r = x * 255 // (W - 1)
    g = y * 255 // (H - 1)
    b = 0xc0 if (x // 20 + y // 20) & 1 else 0x30
    return r << 16 | g << 8 | b
data = open(sys.argv[1], "rb").read()
parts = data.split(maxsplit=4)
assert parts[0] == b"P6", parts[0]
w, h, maxval = int(parts[1]), int(parts[2]), int(parts[3])
pix = parts[4]
print(f"screendump {w}x{h} maxval {maxval}")
assert (w, h, maxval) == (W, H, 255), (w, h, maxval)
bad = 0
for y in range(H):
    for x in range(W):
        i = (y * W + x) * 3
        got = pix[i] << 16 | pix[i + 1] << 8 | pix[i + 2]
        if got != want(x, y):
            if bad < 5:
                print(f"pixel ({x},{y}): got {got:06x} want {want(x, y):06x}")
            bad += 1
print(f"{bad} of {W * H} pixels differ")
try:
    rows = b"".join(b"\0" + pix[y * W * 3:(y + 1) * W * 3] for y in range(H))
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0)) +
           chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
    open(sys.argv[2], "wb").write(png)
except OSError as e:
    print("no PNG copy:", e)
sys.exit(1 if bad else 0)
PY
rc=$?
ktap_diag "$(cat "$T/cmp.log")"
ktap_result $rc "the screendump matches the guest's picture pixel for pixel"

# The host's view while the VM runs: head 0 on with the guest's mode, the
# flip, the work done.
"$CTL" -j vgpu show uuid $UUID >"$T/show.json" 2>"$T/show.err"
python3 - "$T/show.json" <<'PY' >"$T/show.log" 2>&1
import json, sys
v = json.load(open(sys.argv[1]))
v = v.get("vgpu", v) if isinstance(v, dict) else v
v = v[0] if isinstance(v, list) else v
print(json.dumps({k: v.get(k) for k in ("heads", "heads-on", "head", "stats", "open")}))
h = v["head"][0]
ok = (v["heads"] == 4 and v["heads-on"] == 1 and h["index"] == 0 and
      (h["width"], h["height"], h["stride"], h["format"]) == (320, 240, 1408, "XR24") and
      v["stats"]["packets"] == 4)
sys.exit(0 if ok else 1)
PY
rc=$?
ktap_diag "$(cat "$T/show.log" "$T/show.err")"
ktap_result $rc "gpuvirtctl vgpu show: head 0 at 320x240 XR24, 4 packets run"

D=$CORE/vgpus/$UUID/display
head0=$(grep '^head0:' "$D" 2>/dev/null)
ktap_diag "$head0"
echo "$head0" | grep -q "enabled=1 " && echo "$head0" | grep -q " base=0x200000 " &&
	echo "$head0" | grep -q " width=320 height=240 stride=1408 format=0x34325258 error=0 " &&
	echo "$head0" | grep -Eq " flips=[1-9]"
ktap_result $? "core debugfs: head 0 scans out frame B, flipped from frame A"

# The simulated GPU ran the 4 packets, and backed the pages the guest wrote.
cmds=$(awk '/^cmds:/ { print $2 }' "$HW/engine")
backed=$(awk '/^backed_pages:/ { print $2 }' "$HW/vram")
ktap_diag "engine cmds: $cmds, backed pages: $backed"
[ "$cmds" = 4 ] && [ "${backed:-0}" -gt 0 ]
ktap_result $? "the simulated GPU ran the guest's 4 packets and backs its VRAM"

# QEMU quits cleanly and the vGPU goes back to closed.
python3 - "$T/qmp" <<'PY' >/dev/null 2>&1
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
f.readline()
for c in ("qmp_capabilities", "quit"):
    f.write(json.dumps({"execute": c}) + "\n")
    f.flush()
    f.readline()
PY
wait "$QPID"
rc=$?
QPID=
"$CTL" -j vgpu show uuid $UUID >"$T/show2.json" 2>&1
[ $rc -eq 0 ] && python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
v = v.get("vgpu", v) if isinstance(v, dict) else v
v = v[0] if isinstance(v, list) else v
sys.exit(0 if v.get("open") is False else 1)' "$T/show2.json"
ktap_result $? "QEMU quit cleanly and the vGPU is closed again"

ktap_finish
