#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# QEMU migrates a working guest with an mdev vGPU: live, to a file and back,
# and not to a vGPU of another type. Runs in the test VM (lane 7: Debian
# 13's QEMU 10, which speaks VFIO migration v2); KTAP.
#
# The guest is selftests/vm/guest/ in its live mode (-append mode=live): it
# rings FILL, FILL, COPY, COMPUTE and FENCE every round and checks every
# result, draws the round's number on a frame filled by the engine and
# flips head 0 to it, and prints "live: seq=N done=D checked=C bad=B flip=F"
# on its debug console; a byte 'h' on its COM1 holds its flips (the work
# goes on), 'g' lets them go, so that the host knows which frame is on
# screen. QEMU is given enable-migration=on: QEMU 10 blocks VFIO migration
# of a device with no DMA logging behind the legacy type1 container, and a
# vGPU does no DMA to the VM's memory (Documentation/admin-guide.rst, "Live
# migration, save and restore"). Three simulated A100s: vGPU A (A100-1B)
# on sim0, vGPU B (A100-1B) on sim1, vGPU C (A100-2B, another type) on sim2
# (a GPU takes vGPUs of one type at a time).
#
#  1. live: QEMU on A runs the guest; QEMU on B waits with -incoming and
#     -S; QMP "migrate" moves it (pre-copy: the kernel offers it). The
#     source's last frame (screendump) is what B shows first (its flips
#     held from its first round on), then the frames count on, and the
#     guest's console goes on from where the source's stopped: every round
#     once, in order, its work checked and its packet count 5 per round.
#  2. save and restore: B's QEMU migrates to a file; a new QEMU on A takes
#     it with -incoming file:, and the guest goes on again.
#  3. refused: a QEMU on C (another type) is given A's guest: C refuses the
#     stream, the migration fails, and the guest goes on on A.
# Each move is also checked on the hardware side: the migration counters
# and state in the core's debugfs, the stream's bytes counted by the
# source, the destination and QEMU alike, the destination's engine running
# the guest's packets and its head scanning out the guest's frame.
#
# Reported, never judged: QEMU's downtime and total time (query-migrate),
# the device stream's bytes and how many went in pre-copy (QEMU's
# vfio_save_block trace events before vfio_save_complete_precopy), and the
# stream over the VRAM the simulated GPU backs for the guest.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

ELF=$VMBIN/vgpu_guest.elf
UA=2f0c6a9e-7d41-4c5e-9b0a-0000000031a1
UB=2f0c6a9e-7d41-4c5e-9b0a-0000000031b1
UC=2f0c6a9e-7d41-4c5e-9b0a-0000000031c1
TYPES=mdev_supported_types/gpuvirt_sim
MIG=$CORE			# $MIG/simN/vgpus/UUID/migration
# shellcheck disable=SC2034 # set by qemu_on, read through ${!pid}
QA='' QB='' QR='' QC=''

vmt_on_exit vmt_unload gpuvirt_sim gpuvirt
vmt_on_exit vmt_remove_mdevs "$UA" "$UB" "$UC"
vmt_on_exit vmt_reap QA QB QR QC
vmt_need_cmds qemu-system-x86_64 python3
vmt_need_modules gpuvirt gpuvirt_sim
[ -e "$ELF" ] || vmt_skip "no $ELF (make vm-tests)"
# VFIO migration v2 arrived in QEMU 8.0; Debian 12's 7.2 has none
qemu-system-x86_64 -device vfio-pci,help 2>/dev/null | grep -q 'enable-migration' ||
	vmt_skip "this QEMU has no VFIO migration v2 (enable-migration)"

# The host side's helper: QMP, the frames and the consoles.
cat >"$T/mig.py" <<'PY'
import json, re, socket, sys, time

def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    f = s.makefile("rw")
    json.loads(f.readline())
    q = (s, f)
    cmd(q, "qmp_capabilities")
    return q

def cmd(q, c, **a):
    f = q[1]
    f.write(json.dumps({"execute": c, "arguments": a} if a else {"execute": c}) + "\n")
    f.flush()
    while True:
        r = json.loads(f.readline())
        if "return" in r:
            return r["return"]
        if "error" in r:
            raise RuntimeError(f"{c}: {r['error'].get('desc')}")

# Keep in step with selftests/vm/guest/vgpu_guest.c (run_live()).
W, H = 320, 240
FONT = [0x7b6f, 0x2c97, 0x73e7, 0x73cf, 0x5bc9, 0x79cf, 0x79ef, 0x7249, 0x7bef, 0x7bcf]
DIGITS, DX, DY, SCALE, STEP, WHITE = 8, 16, 16, 4, 16, 0xffffff

def bg(n):
    h = (n * 0x9e3779b1) & 0xffffffff
    h ^= h >> 15
    return h & 0x7f7f7f

def render(n):
    """Round n's frame as PPM pixel bytes."""
    c = bg(n)
    pix = bytearray(bytes((c >> 16, c >> 8 & 0xff, c & 0xff)) * (W * H))
    white = bytes((0xff, 0xff, 0xff)) * SCALE
    for d in range(DIGITS):
        bits = FONT[n // 10 ** d % 10]
        x0 = DX + (DIGITS - 1 - d) * STEP
        for r in range(5):
            for c in range(3):
                if bits & (1 << (14 - (r * 3 + c))):
                    for sy in range(SCALE):
                        i = ((DY + r * SCALE + sy) * W + x0 + c * SCALE) * 3
                        pix[i:i + 3 * SCALE] = white
    return bytes(pix)

def load_ppm(path):
    """Width, height and the pixel bytes. The header's four fields, then
    one whitespace byte: the pixels may begin with bytes that read as
    whitespace."""
    data = open(path, "rb").read()
    fields, pos = [], 0
    while len(fields) < 4 and pos < len(data):
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        start = pos
        while pos < len(data) and not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    if len(fields) < 4 or fields[0] != b"P6":
        raise ValueError(f"{path}: not a PPM")
    w, h = int(fields[1]), int(fields[2])
    raw = data[pos + 1:pos + 1 + w * h * 3]
    if len(raw) < w * h * 3:
        raise ValueError(f"{path}: {len(raw)} bytes of pixels, not {w * h * 3}")
    return w, h, raw

def rgb(raw, x, y):
    i = (y * W + x) * 3
    return raw[i] << 16 | raw[i + 1] << 8 | raw[i + 2]

def decode(path):
    """The round number a screendump shows; raises if it is no live frame."""
    w, h, raw = load_ppm(path)
    if (w, h) != (W, H):
        raise ValueError(f"{path}: {w}x{h}, not a {W}x{H} live frame")
    n = 0
    for d in range(DIGITS):
        x0 = DX + d * STEP
        bits = 0
        for r in range(5):
            for c in range(3):
                if rgb(raw, x0 + c * SCALE, DY + r * SCALE) == WHITE:
                    bits |= 1 << (14 - (r * 3 + c))
        if bits not in FONT:
            raise ValueError(f"{path}: digit {d} reads {bits:#06x}, no digit")
        n = n * 10 + FONT.index(bits)
    want = render(n)
    if raw != want:
        i = next(i for i in range(0, W * H * 3, 3) if raw[i:i + 3] != want[i:i + 3]) // 3
        bad = sum(raw[j:j + 3] != want[j:j + 3] for j in range(0, W * H * 3, 3))
        raise ValueError(f"{path}: frame {n}: {bad} pixels differ, first ({i % W},{i // W}) "
                         f"{rgb(raw, i % W, i // W):06x} want {rgb(want, i % W, i // W):06x}")
    return n

def console(paths):
    """The rounds of consoles read one after another: every round once, in
    order. Returns the rounds, the last one whose frame was flipped to, and
    what is wrong."""
    text = "".join(open(p, errors="replace").read() for p in paths)
    # a guest that still runs may be in the middle of its last line
    if not text.endswith("\n"):
        text = text[:text.rfind("\n") + 1]
    seqs, errs, shown = [], [], 0
    for line in text.splitlines():
        if "mismatch" in line:
            errs.append(line)
        if not line.startswith("live: seq=") or "mismatch" in line:
            continue
        m = re.fullmatch(r"live: seq=(\d+) done=(\d+) checked=(\d+) bad=(\d+) flip=([01])", line)
        if not m:
            errs.append("garbled: " + line)
            continue
        s, done, checked, bad, flip = map(int, m.groups())
        if seqs and s != seqs[-1] + 1:
            errs.append(f"round {s} after round {seqs[-1]}")
        if done != 5 * s:
            errs.append(f"round {s}: {done} packets done, not {5 * s}")
        if bad:
            errs.append(f"round {s}: {bad} of {checked} checks failed")
        if flip:
            shown = s
        seqs.append(s)
    if not seqs:
        errs.append("no round")
    if seqs and seqs[0] != 1:
        errs.append(f"the first round is {seqs[0]}")
    return seqs, shown, errs

def main():
    op = sys.argv[1]
    if op == "qmp":
        q = connect(sys.argv[2])
        print(json.dumps(cmd(q, sys.argv[3], **json.loads(sys.argv[4]) if len(sys.argv) > 4 else {})))
    elif op == "migrate":
        # migrate SOCK URI OUT: start it, then poll until it ends
        q = connect(sys.argv[2])
        cmd(q, "migrate", uri=sys.argv[3])
        for _ in range(6000):
            r = cmd(q, "query-migrate")
            if r.get("status") in ("completed", "failed", "cancelled"):
                break
            time.sleep(0.1)
        json.dump(r, open(sys.argv[4], "w"))
        print(r.get("status"), r.get("error-desc", ""))
        sys.exit(0 if r.get("status") == "completed" else 1)
    elif op == "shot":
        # shot SOCK FILE [cont]: a screendump, after "cont" when asked
        q = connect(sys.argv[2])
        if len(sys.argv) > 4:
            cmd(q, sys.argv[4])
        cmd(q, "screendump", filename=sys.argv[3])
    elif op == "frame":
        print(decode(sys.argv[2]))
    elif op == "same":
        a, b = load_ppm(sys.argv[2]), load_ppm(sys.argv[3])
        if a != b:
            print(f"{sys.argv[2]} and {sys.argv[3]} differ")
            sys.exit(1)
    elif op == "console":
        seqs, shown, errs = console(sys.argv[2:])
        for e in errs[:10]:
            print("#", e)
        print(f"rounds {seqs[0] if seqs else 0} to {seqs[-1] if seqs else 0}, the last shown {shown}")
        sys.exit(1 if errs else 0)
    elif op == "shown":
        print(console(sys.argv[2:])[1])
    elif op == "uart":
        # uart SOCK h|g CONSOLE: hold or release the guest's flips (COM1),
        # and wait until the guest says it read it
        ack = {"h": "live: hold", "g": "live: go"}[sys.argv[3]]
        def acks():
            try:
                return open(sys.argv[4], errors="replace").read().splitlines().count(ack)
            except OSError:
                return 0
        n = acks()
        s = socket.socket(socket.AF_UNIX)
        s.connect(sys.argv[2])
        s.sendall(sys.argv[3].encode())
        for _ in range(1500):
            if acks() > n:
                return
            time.sleep(0.1)
        print(f"the guest did not say \"{ack}\"")
        sys.exit(1)
    elif op == "stats":
        # stats RESULT.JSON TRACE: what a migration cost
        r = json.load(open(sys.argv[2]))
        pre = tot = 0
        state = "setup"
        for line in open(sys.argv[3], errors="replace"):
            if "vfio_save_complete_precopy" in line:
                state = "stop"
            m = re.search(r"vfio_save_block .* data_size (\d+)", line)
            if m:
                tot += int(m.group(1))
                if state == "setup":
                    pre += int(m.group(1))
        print(r.get("downtime", "-"), r.get("total-time", "-"), r.get("setup-time", "-"),
              r.get("vfio", {}).get("transferred", "-"), r.get("ram", {}).get("transferred", "-"),
              tot, pre)

try:
    main()
except (OSError, ValueError, RuntimeError) as e:
    print(e)
    sys.exit(1)
PY
mig() { python3 "$T/mig.py" "$@"; }

# qemu_on NAME UUID [ARG...]: QEMU with the live guest on mdev UUID, in the
# background; its pid in Q<NAME>, its console in $T/NAME.con, QMP at
# $T/NAME.qmp, COM1 at $T/NAME.ser, its output in $T/NAME.out, trace events
# in $T/NAME.trace.
qemu_on() {
	local name=$1 uuid=$2

	shift 2
	qemu-system-x86_64 -accel tcg -machine q35 -nodefaults -m 64 -display none \
		-no-reboot -kernel "$ELF" -append mode=live \
		-debugcon file:"$T/$name.con" -qmp unix:"$T/$name.qmp",server=on,wait=off \
		-serial unix:"$T/$name.ser",server=on,wait=off \
		-trace 'vfio_save_*' -trace 'vfio_migration_set_state' -D "$T/$name.trace" \
		-device vfio-pci,id=gpu,sysfsdev="$MDEV/$uuid",display=on,enable-migration=on "$@" \
		>"$T/$name.out" 2>&1 &
	printf -v "Q$name" %s $!
}

# wait_qmp NAME: its QMP socket is up
wait_qmp() {
	local i pid=Q$1

	for ((i = 0; i < 600; i++)); do
		[ -S "$T/$1.qmp" ] && return 0
		kill -0 "${!pid}" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# wait_round NAME N CONSOLE...: the guest in QEMU NAME has finished round
# N (fails when it reports a failure or that QEMU is gone)
wait_round() {
	local pid=Q$1 n=$2 i last

	shift 2
	for ((i = 0; i < 1500; i++)); do
		last=$(cat "$@" 2>/dev/null | grep -o '^live: seq=[0-9]*' | tail -n1)
		[ "${last#live: seq=}" -ge "$n" ] 2>/dev/null && return 0
		grep -q 'mismatch\|^result: fail' "$@" 2>/dev/null && return 1
		[ -n "${!pid}" ] && kill -0 "${!pid}" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# last_round CONSOLE...: the last round the consoles report
last_round() {
	local l

	l=$(cat "$@" 2>/dev/null | grep -o '^live: seq=[0-9]*' | tail -n1)
	echo "${l#live: seq=}"
}

# mget SIM UUID KEY: a value of the vGPU's migration file in debugfs
mget() {
	local l

	while IFS= read -r l; do
		[ "${l%%: *}" = "$3" ] && { echo "${l#*: }"; return; }
	done <"$MIG/$1/vgpus/$2/migration" 2>/dev/null
	echo "?"
}

# quit NAME: QMP quit, and reap the process
quit() {
	local pid=Q$1

	[ -n "${!pid}" ] || return 0
	mig qmp "$T/$1.qmp" quit >/dev/null 2>&1
	wait "${!pid}"
	printf -v "Q$1" %s ""
}

# report WHAT RESULT.JSON TRACE BACKED_PAGES: the figures of a migration
report() {
	local down total setup vfio ram tot pre

	[ -s "$2" ] || return 0
	read -r down total setup vfio ram tot pre < <(mig stats "$2" "$3")
	ktap_diag "$1: downtime ${down} ms, total ${total} ms (setup ${setup} ms);" \
		"$1: device stream ${vfio} bytes (QEMU), ${tot} read by QEMU's saves, ${pre} of them in pre-copy;" \
		"$1: RAM ${ram} bytes; VRAM backed for the guest $(($4 * 4096)) bytes," \
		"$1: stream / backed VRAM $(awk -v s="$vfio" -v b="$4" 'BEGIN { if (b > 0 && s ~ /^[0-9]+$/) printf "%.3f", s / (b * 4096); else print "-" }')"
}

# backed SIM: the pages the simulated GPU backs
backed() {
	local l

	while IFS= read -r l; do
		[ "${l%%: *}" = backed_pages ] && { echo "${l#*: }"; return; }
	done <"$HW/$1/vram"
	echo 0
}

# wait_held CONSOLE: the guest has reported a round whose flip it held
wait_held() {
	local i

	for ((i = 0; i < 3000; i++)); do
		grep -q ' flip=0$' "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# handover SRC DST CONSOLE...: DST, paused after the move, shows SRC's last
# frame first. SRC is stopped: its screendump is the last frame. DST's
# guest is told to hold its flips (a byte on COM1, which the UART keeps
# while DST is paused), then DST runs until its guest reports a held round,
# and its screendump is taken: it is SRC's last frame, pixel for pixel, and
# the last frame the consoles (SRC's and DST's, in order) say was shown.
# One case differs, and is told apart: SRC stopped the guest between its
# hold check and its flip, which the guest then made on DST (its first
# round there says flip=1): DST shows that next frame. Sets n_src, n_dst.
handover() {
	local src=$1 dst=$2 upid shown rc

	shift 2
	n_src='' n_dst='' shown=''
	mig uart "$T/$dst.ser" h "$T/$dst.con" >"$T/$dst.hold" 2>&1 &
	upid=$!
	mig shot "$T/$src.qmp" "$T/$src-last.ppm" >"$T/$dst.hand" 2>&1
	rc=$?
	# the guest goes on whatever the screendump was
	mig qmp "$T/$dst.qmp" cont >>"$T/$dst.hand" 2>&1 && [ $rc -eq 0 ] &&
		n_src=$(mig frame "$T/$src-last.ppm") &&
		wait $upid && wait_held "$T/$dst.con" &&
		mig shot "$T/$dst.qmp" "$T/$dst-first.ppm" >>"$T/$dst.hand" 2>&1 &&
		n_dst=$(mig frame "$T/$dst-first.ppm") && shown=$(mig shown "$@")
	rc=$?
	kill $upid 2>/dev/null
	ktap_diag "$(cat "$T/$dst.hold" "$T/$dst.hand")" \
		"$src's last frame: ${n_src:-?}; $dst's first: ${n_dst:-?}; the consoles' last shown: ${shown:-?}"
	[ $rc -eq 0 ] && [ "$n_dst" = "$shown" ] || return 1
	if [ "$n_dst" = "$n_src" ]; then
		mig same "$T/$src-last.ppm" "$T/$dst-first.ppm"
		return
	fi
	ktap_diag "$src stopped the guest between its hold check and its flip: $dst made the flip"
	[ "$n_dst" = $((n_src + 1)) ] && grep -m1 '^live: seq=' "$T/$dst.con" | grep -q "seq=$n_dst .* flip=1$"
}

# held_frame NAME CONSOLE...: hold the guest's flips, take NAME's
# screendump, check that it is the last frame the consoles say was shown,
# and let the flips go again. Sets n_held.
held_frame() {
	local name=$1 shown rc

	shift
	n_held=''
	mig uart "$T/$name.ser" h "$T/$name.con" >"$T/$name.held" 2>&1 &&
		mig shot "$T/$name.qmp" "$T/$name-held.ppm" >>"$T/$name.held" 2>&1 &&
		n_held=$(mig frame "$T/$name-held.ppm") && shown=$(mig shown "$@") &&
		mig uart "$T/$name.ser" g "$T/$name.con" >>"$T/$name.held" 2>&1
	rc=$?
	ktap_diag "$(cat "$T/$name.held")" "$name's frame while held: ${n_held:-?}; the consoles' last shown: ${shown:-?}"
	[ $rc -eq 0 ] && [ "$n_held" = "$shown" ]
}

ktap_plan 13
vmt_kmsg_mark
vmt_load gpuvirt gpuvirt_sim &&
	echo "0 a100-40gb" >"$BUS/new_device" && echo "1 a100-40gb" >"$BUS/new_device" &&
	echo "2 a100-40gb" >"$BUS/new_device" &&
	echo $UA >"$BUS/devices/sim0/gpu/$TYPES-A100-1B/create" &&
	echo $UB >"$BUS/devices/sim1/gpu/$TYPES-A100-1B/create" &&
	echo $UC >"$BUS/devices/sim2/gpu/$TYPES-A100-2B/create"
rc=$?
ktap_result $rc "three simulated A100s; A100-1B vGPUs A (sim0) and B (sim1), A100-2B vGPU C (sim2)"
[ $rc -eq 0 ] || ktap_finish

# --- 1. live ----------------------------------------------------------------

qemu_on A $UA
wait_qmp A && wait_round A 3 "$T/A.con"
rc=$?
ktap_diag "$(grep -v '^live: seq=' "$T/A.con" | head -n 30)" "$(cat "$T/A.out")"
ktap_result $rc "the guest works on A: rounds of checked ring work, a frame each"

qemu_on B $UB -incoming unix:"$T/live.sock" -S
wait_qmp B && mig migrate "$T/A.qmp" unix:"$T/live.sock" "$T/live.json" >"$T/live.log" 2>&1
rc=$?
ktap_diag "$(cat "$T/live.log" "$T/B.out")" "$(grep -h 'set_state' "$T/A.trace" | sed 's/^[0-9@.:]* *//')"
grep -q 'vfio_migration_set_state .*PRE_COPY' "$T/A.trace"
pre=$?
[ $rc -eq 0 ] && [ $pre -eq 0 ]
ktap_result $? "QMP migrate moved the guest from A to B, through PRE_COPY"
report live "$T/live.json" "$T/A.trace" "$(backed sim0)"

# The source stopped with its last frame on head 0; B shows it when it
# takes over.
handover A B "$T/A.con" "$T/B.con"
ktap_result $? "B's first screendump is A's last frame, pixel for pixel"

n=$(last_round "$T/A.con")
mig uart "$T/B.ser" g "$T/B.con" >"$T/B.go" 2>&1 &&
	wait_round B $((n + 3)) "$T/B.con" && held_frame B "$T/A.con" "$T/B.con" &&
	[ "$n_held" -gt "$n_dst" ] && mig console "$T/A.con" "$T/B.con" >"$T/chain.log"
rc=$?
ktap_diag "$(cat "$T/B.go" "$T/chain.log")" \
	"on A to round $n, on B to round $(last_round "$T/B.con"); B's frames: $n_dst, then ${n_held:-?}"
ktap_result $rc "on B the guest goes on: every round once and in order, 5 packets each, no bad result, the frame counter counts on"

# The hardware: A saved once, B resumed once, and both saw the stream QEMU
# sent; B's head scans out the guest's frame and sim1 runs its packets.
vfio=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("vfio", {}).get("transferred", -1))' "$T/live.json")
sa=$(mget sim0 $UA bytes_saved) rb=$(mget sim1 $UB bytes_resumed)
ktap_diag "A: $(tr '\n' ' ' <"$MIG/sim0/vgpus/$UA/migration")" "B: $(tr '\n' ' ' <"$MIG/sim1/vgpus/$UB/migration")" \
	"QEMU's vfio transferred: $vfio" "$(grep '^head0:' "$MIG/sim1/vgpus/$UB/display")" "$(grep '^ctx' "$HW/sim1/engine")"
[ "$(mget sim0 $UA saves)" = 1 ] && [ "$(mget sim0 $UA state)" = stop ] && [ "$(mget sim0 $UA tracking)" = 0 ] &&
	[ "$(mget sim1 $UB resumes)" = 1 ] && [ "$(mget sim1 $UB refused)" = 0 ] &&
	[ "$(mget sim1 $UB state)" = running ] &&
	[ "$sa" -gt 0 ] && [ "$sa" = "$rb" ] && [ "$sa" = "$vfio" ] &&
	grep -q '^head0: enabled=1 .* width=320 height=240 stride=1408 ' "$MIG/sim1/vgpus/$UB/display" &&
	grep -Eq '^ctx [0-9]+: cmds [1-9]' "$HW/sim1/engine"
ktap_result $? "debugfs: A saved once, B resumed once, the same bytes as QEMU sent; B scans out and sim1 runs its work"

# --- 2. save to a file, restore on A ----------------------------------------

quit A
mig migrate "$T/B.qmp" file:"$T/vm.img" "$T/save.json" >"$T/save.log" 2>&1
rc=$?
ktap_diag "$(cat "$T/save.log")" "image: $(stat -c %s "$T/vm.img" 2>&1) bytes"
[ $rc -eq 0 ] && [ "$(mget sim1 $UB saves)" = 1 ]
ktap_result $? "B's guest saved to a file (migrate file:)"
report save "$T/save.json" "$T/B.trace" "$(backed sim1)"

qemu_on R $UA -incoming file:"$T/vm.img" -S
wait_qmp R && for ((i = 0; i < 3000; i++)); do
	s=$(mig qmp "$T/R.qmp" query-migrate 2>/dev/null)
	case $s in *'"completed"'*|*'"failed"'*) break ;; esac
	sleep 0.2
done
ktap_diag "restore: $s" "$(cat "$T/R.out")"
handover B R "$T/A.con" "$T/B.con" "$T/R.con" && [ "$(mget sim0 $UA resumes)" = 1 ]
ktap_result $? "restored on A from the file (-incoming file:): its first screendump is the saved frame"
quit B

n=$(last_round "$T/A.con" "$T/B.con")
mig uart "$T/R.ser" g "$T/R.con" >"$T/R.go" 2>&1 &&
	wait_round R $((n + 3)) "$T/R.con" && mig console "$T/A.con" "$T/B.con" "$T/R.con" >"$T/chain2.log"
rc=$?
ktap_diag "$(cat "$T/chain2.log")" "to round $n before the save, $(last_round "$T/R.con") after"
ktap_result $rc "the restored guest goes on: every round once and in order, no bad result"

# --- 3. a vGPU of another type is refused ------------------------------------

qemu_on C $UC -incoming unix:"$T/bad.sock"
wait_qmp C && mig migrate "$T/R.qmp" unix:"$T/bad.sock" "$T/bad.json" >"$T/bad.log" 2>&1
rc=$?
wait "$QC"
crc=$?
QC=
ktap_diag "$(cat "$T/bad.log")" "C's QEMU: exit $crc: $(cat "$T/C.out")" \
	"C: $(tr '\n' ' ' <"$MIG/sim2/vgpus/$UC/migration")" "$(vmt_kmsg | grep 'migration stream refused')"
[ $rc -ne 0 ] && grep -q '^failed' "$T/bad.log" && [ "$(mget sim2 $UC refused)" = 1 ] &&
	[ "$(mget sim2 $UC resumes)" = 0 ] &&
	vmt_kmsg | grep -q "migration stream refused: it is of vGPU type A100-1B, this vGPU is A100-2B"
ktap_result $? "a migration to the A100-2B vGPU fails: C refuses the stream and says why"

n=$(last_round "$T/R.con")
st=$(mig qmp "$T/R.qmp" query-status 2>&1)
wait_round R $((n + 3)) "$T/R.con" && mig console "$T/A.con" "$T/B.con" "$T/R.con" >"$T/chain3.log" &&
	[[ $st == *'"running"'* ]] && [ "$(mget sim0 $UA state)" = running ] && [ "$(mget sim0 $UA tracking)" = 0 ]
rc=$?
ktap_diag "$st" "$(cat "$T/chain3.log")" "round $n at the refusal, $(last_round "$T/R.con") after" \
	"A: $(tr '\n' ' ' <"$MIG/sim0/vgpus/$UA/migration")"
ktap_result $rc "the source VM runs on after the refusal, its guest's work checked, A back to running"

quit R
rc=$?
"$CTL" -j vgpu show uuid $UA >"$T/show.json" 2>&1
[ $rc -eq 0 ] && python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
v = v.get("vgpu", v) if isinstance(v, dict) else v
v = v[0] if isinstance(v, list) else v
sys.exit(0 if v.get("open") is False else 1)' "$T/show.json" &&
	[ "$(mget sim0 $UA state)" = running ] && [ "$(mget sim1 $UB state)" = running ]
ktap_result $? "QEMU quit cleanly; the vGPUs are closed and back to running"

vmt_kernel_quiet
ktap_result $? "no kernel warning"

ktap_finish
