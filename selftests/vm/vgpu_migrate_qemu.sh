#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# QEMU migrates a working guest with an mdev vGPU: live, to a file and back,
# and not to a vGPU of another type; and live between two SR-IOV VF vGPUs.
# Runs in the test VM (lane 7: Debian 13's QEMU 10, which speaks VFIO
# migration v2); KTAP.
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
# (a GPU takes vGPUs of one type at a time); two more, sim3 and sim4, in
# the sriov vGPU model, with a VF each typed A100-1B (V and W).
#
#  1. live: QEMU on A runs the guest; QEMU on B waits with -incoming defer
#     and -S, and listens (QMP migrate-incoming); QMP "migrate" moves it
#     (pre-copy: the kernel offers it). The source's last frame
#     (screendump) is what B shows first (its flips held from its first
#     round on), then the frames count on, and the guest's console goes on
#     from where the source's stopped: every round once, in order, its
#     work checked and its packet count 5 per round.
#  2. save and restore: B's QEMU migrates to a file; a new QEMU on A takes
#     it with -incoming file:, and the guest goes on again.
#  3. refused: a QEMU on C (another type) is given A's guest: C refuses the
#     stream and exits, the migration fails, and the guest goes on on A.
#  4. live between VFs: QEMU on VF V (-device vfio-pci,host=BDF) hands the
#     guest to QEMU on VF W, with the checks of 1.
# Each move is also checked on the hardware side: the migration counters
# and state in the core's debugfs, the stream's bytes counted by the
# source, the destination and QEMU alike, the destination's engine running
# the guest's packets and its head scanning out the guest's frame.
#
# Every wait has a bound (BOUND_*, far above what a step takes): one that
# runs out fails its step and says which wait it was and, for a QEMU that
# does not exit, where its threads are.
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
PCI=/sys/bus/pci/devices
VV=8003:00:00.1 VW=8004:00:00.1	# the VFs of sim3 and sim4
UV='' UW=''
# shellcheck disable=SC2034 # set by qemu_on, read through ${!pid}
QA='' QB='' QR='' QC='' QV='' QW=''

vmt_on_exit vmt_unload gpuvirt_sim gpuvirt
vmt_on_exit vmt_remove_mdevs "$UA" "$UB" "$UC"
vmt_on_exit vmt_reap QA QB QR QC QV QW
vmt_need_cmds qemu-system-x86_64 python3
vmt_need_modules gpuvirt gpuvirt_sim
[ -e "$ELF" ] || vmt_skip "no $ELF (make vm-tests)"
# VFIO migration v2 is on by default from QEMU 8.1 (enable-migration);
# Debian 12's 7.2 has only v1's experimental x-enable-migration
qemu-system-x86_64 -device vfio-pci,help 2>/dev/null | grep -Eq '^ *enable-migration=' ||
	vmt_skip "this QEMU has no VFIO migration v2 (enable-migration)"

# The host side's helper: QMP, the frames and the consoles.
cat >"$T/mig.py" <<'PY'
import json, os, re, socket, sys, time

# Every QMP exchange and every wait has a bound (the shell's BOUND_*): a
# QEMU or a guest that does not answer is named, not waited for.
QMP_BOUND = int(os.environ.get("BOUND_QMP", 60))
ROUND_BOUND = int(os.environ.get("BOUND_ROUND", 120))
T = os.path.dirname(os.path.abspath(__file__))

def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(QMP_BOUND)
    try:
        s.connect(path)
        f = s.makefile("rw")
        line = f.readline()
    except socket.timeout:
        raise RuntimeError(f"{path}: no QMP greeting in {QMP_BOUND} s")
    if not line:
        raise RuntimeError(f"{path}: QMP closed before its greeting")
    q = (s, f)
    cmd(q, "qmp_capabilities")
    return q

def cmd(q, c, **a):
    f = q[1]
    f.write(json.dumps({"execute": c, "arguments": a} if a else {"execute": c}) + "\n")
    f.flush()
    while True:
        try:
            line = f.readline()
        except socket.timeout:
            raise RuntimeError(f"{c}: no answer from QMP in {QMP_BOUND} s")
        if not line:
            raise RuntimeError(f"{c}: QMP closed")
        r = json.loads(line)
        if "return" in r:
            return r["return"]
        if "error" in r:
            raise RuntimeError(f"{c}: {r['error'].get('desc')}")

def until_done(q, bound):
    """Poll query-migrate until the migration ends or BOUND seconds pass:
    the last answer, and whether it ended."""
    end = time.monotonic() + bound
    while True:
        r = cmd(q, "query-migrate")
        if r.get("status") in ("completed", "failed", "cancelled"):
            return r, True
        if time.monotonic() >= end:
            return r, False
        time.sleep(0.1)

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

def text_of(path):
    """A console's complete lines (a running guest may be in the middle of
    its last one)."""
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return ""
    return text[:text.rfind("\n") + 1]

def last_round(text):
    m = re.findall(r"^live: seq=(\d+)", text[-4096:], re.M)
    return int(m[-1]) if m else 0

def waits(what, bound, test):
    """Poll TEST until it holds; raise, naming WHAT, after BOUND seconds."""
    end = time.monotonic() + bound
    while True:
        r = test()
        if r:
            return r
        if time.monotonic() >= end:
            raise RuntimeError(f"timed out: {what} after {bound} s")
        time.sleep(0.1)

def uart(name, byte):
    """Hold (h) or let go (g) the flips of QEMU NAME's guest, and wait
    until it says it read it."""
    ack = {"h": "live: hold", "g": "live: go"}[byte]
    con = f"{T}/{name}.con"
    count = lambda: ("\n" + text_of(con)).count("\n" + ack + "\n")
    n = count()
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(QMP_BOUND)
    s.connect(f"{T}/{name}.ser")
    s.sendall(byte.encode())
    s.close()
    return lambda: waits(f"{name}'s guest did not say \"{ack}\"", QMP_BOUND, lambda: count() > n)

def shot(name, path, *before):
    q = connect(f"{T}/{name}.qmp")
    for c in before:
        cmd(q, c)
    cmd(q, "screendump", filename=path)
    return decode(path)

def results(**kv):
    """The frames found, for the shell: NAME=VALUE lines in $T/frames."""
    with open(f"{T}/frames", "a") as f:
        for k, v in kv.items():
            f.write(f"{k}={v}\n")

def handover(src, dst, cons):
    """DST, paused after the move, shows SRC's last frame first (the
    shell's handover() says how)."""
    n_src = n_dst = shown = "?"
    acked = uart(dst, "h")
    try:
        n_src = shot(src, f"{T}/{src}-last.ppm")
    finally:
        # the guest goes on whatever the screendump was
        cmd(connect(f"{T}/{dst}.qmp"), "cont")
        results(n_src=n_src)
    acked()
    waits(f"{dst}'s guest reported no held round", ROUND_BOUND,
          lambda: " flip=0\n" in text_of(f"{T}/{dst}.con"))
    n_dst = shot(dst, f"{T}/{dst}-first.ppm")
    shown = console(cons)[1]
    results(n_dst=n_dst)
    print(f"{src}'s last frame: {n_src}; {dst}'s first: {n_dst}; the consoles' last shown: {shown}")
    if n_dst != shown:
        return False
    if n_dst == n_src:
        if load_ppm(f"{T}/{src}-last.ppm") != load_ppm(f"{T}/{dst}-first.ppm"):
            print(f"{src}-last.ppm and {dst}-first.ppm differ")
            return False
        return True
    print(f"{src} stopped the guest between its hold check and its flip: {dst} made the flip")
    first = re.search(r"^live: seq=.*$", text_of(f"{T}/{dst}.con"), re.M)
    return n_dst == n_src + 1 and first is not None and \
        first.group(0).startswith(f"live: seq={n_dst} ") and first.group(0).endswith(" flip=1")

def goes_on(dst, pid, n, first, cons):
    """DST's guest, its flips let go, runs to round N; a frame held then is
    the last one the consoles say was shown, and a later one than DST's
    first (FIRST); the consoles read in order are right."""
    con = f"{T}/{dst}.con"
    uart(dst, "g")()

    def reached():
        text = text_of(con)
        if "mismatch" in text or "\nresult: fail" in text:
            raise RuntimeError(f"{dst}'s guest failed: " + " / ".join(
                l for l in text.splitlines() if "mismatch" in l or l.startswith("result: fail"))[:300])
        try:
            os.kill(pid, 0)
        except OSError:
            raise RuntimeError(f"QEMU {dst} is gone, its guest at round {last_round(text)}, not {n}")
        return last_round(text) >= n
    waits(f"QEMU {dst}'s guest is not at round {n}", ROUND_BOUND, reached)
    uart(dst, "h")()
    n_held = shot(dst, f"{T}/{dst}-held.ppm")
    seqs, shown, errs = console(cons)
    uart(dst, "g")()
    results(n_held=n_held)
    print(f"{dst}'s frame while held: {n_held}; the consoles' last shown: {shown}")
    for e in errs[:10]:
        print("#", e)
    print(f"rounds {seqs[0] if seqs else 0} to {seqs[-1] if seqs else 0}, the last shown {shown}")
    if not first.isdigit():
        print(f"{dst}'s first frame is not known")
        return False
    return not errs and n_held == shown and n_held > int(first)

def main():
    op = sys.argv[1]
    if op == "qmp":
        q = connect(sys.argv[2])
        print(json.dumps(cmd(q, sys.argv[3], **json.loads(sys.argv[4]) if len(sys.argv) > 4 else {})))
    elif op == "migrate":
        # migrate SOCK URI OUT BOUND: start it, then poll until it ends; one
        # still going after BOUND seconds is cancelled and said so
        q = connect(sys.argv[2])
        cmd(q, "migrate", uri=sys.argv[3])
        r, done = until_done(q, float(sys.argv[5]))
        json.dump(r, open(sys.argv[4], "w"))
        if not done:
            cmd(q, "migrate_cancel")
            print(f"timed out: the migration is still {r.get('status')} after {sys.argv[5]} s; cancelled")
            sys.exit(1)
        print(r.get("status"), r.get("error-desc", ""))
        sys.exit(0 if r.get("status") == "completed" else 1)
    elif op == "incoming":
        # incoming SOCK URI: a QEMU started with -incoming defer listens on
        # URI once this returns
        cmd(connect(sys.argv[2]), "migrate-incoming", uri=sys.argv[3])
    elif op == "landed":
        # landed SOCK BOUND: the incoming migration ended (completed or not)
        r, done = until_done(connect(sys.argv[2]), float(sys.argv[3]))
        print(json.dumps(r) if done else
              f"timed out: the incoming migration is still {r.get('status')} after {sys.argv[3]} s")
        sys.exit(0 if r.get("status") == "completed" else 1)
    elif op == "console":
        seqs, shown, errs = console(sys.argv[2:])
        for e in errs[:10]:
            print("#", e)
        print(f"rounds {seqs[0] if seqs else 0} to {seqs[-1] if seqs else 0}, the last shown {shown}")
        sys.exit(1 if errs else 0)
    elif op == "handover":
        # handover SRC DST CONSOLE...
        sys.exit(0 if handover(sys.argv[2], sys.argv[3], sys.argv[4:]) else 1)
    elif op == "goes-on":
        # goes-on DST PID N N_DST CONSOLE...
        sys.exit(0 if goes_on(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                              sys.argv[5], sys.argv[6:]) else 1)
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

# Bounds, in seconds, on every wait: a step that runs past one fails and
# says which wait it was, instead of holding the VM until its own bound.
# They are hang guards, far above what a step takes.
BOUND_QMP=60		# a QMP answer, a QEMU's start and exit, the guest's UART
BOUND_MIG=180		# a migration's end
BOUND_ROUND=120		# the guest's next rounds
export BOUND_QMP BOUND_ROUND

# qemu_on NAME DEV [ARG...]: QEMU with the live guest on vfio-pci device DEV
# (sysfsdev=MDEV or host=BDF), in the background; its pid in Q<NAME>, its
# console in $T/NAME.con, QMP at $T/NAME.qmp, COM1 at $T/NAME.ser, its
# output in $T/NAME.out, trace events in $T/NAME.trace.
qemu_on() {
	local name=$1 dev=$2

	shift 2
	qemu-system-x86_64 -accel tcg -machine q35 -nodefaults -m 64 -display none \
		-no-reboot -kernel "$ELF" -append mode=live \
		-debugcon file:"$T/$name.con" -qmp unix:"$T/$name.qmp",server=on,wait=off \
		-serial unix:"$T/$name.ser",server=on,wait=off \
		-trace 'vfio_save_*' -trace 'vfio_migration_set_state' -D "$T/$name.trace" \
		-device vfio-pci,id=gpu,"$dev",display=on,enable-migration=on "$@" \
		>"$T/$name.out" 2>&1 &
	printf -v "Q$name" %s $!
}

# stacks PID: where each of its threads is, in the kernel
stacks() {
	local t

	for t in /proc/"$1"/task/*; do
		echo "$(cat "$t/comm" 2>/dev/null) [$(cat "$t/wchan" 2>/dev/null)]" \
			"$(tr '\n' ' ' <"$t/stack" 2>/dev/null)"
	done
}

# live_move SRC DST NAME: DST listens on $T/NAME.sock, and QEMU SRC
# migrates its guest there (QMP report in $T/NAME.json); 0 when the move
# completed and went through PRE_COPY. Shows QEMU's words and the states.
live_move() {
	local rc

	incoming "$2" unix:"$T/$3.sock" &&
		mig migrate "$T/$1.qmp" unix:"$T/$3.sock" "$T/$3.json" $BOUND_MIG >"$T/$3.log" 2>&1
	rc=$?
	ktap_diag "$(cat "$T/$3.log" "$T/$2.out")" "$(grep -h 'set_state' "$T/$1.trace" | sed 's/^[0-9@.:]* *//')"
	[ $rc -eq 0 ] && grep -q 'vfio_migration_set_state .*PRE_COPY' "$T/$1.trace"
}

# wait_qmp NAME: QEMU NAME's QMP socket is up (mig.py's calls on it wait
# for its greeting, within their bound)
wait_qmp() {
	local pid=Q$1 end=$((SECONDS + BOUND_QMP))

	while [ $SECONDS -lt $end ]; do
		[ -S "$T/$1.qmp" ] && return 0
		kill -0 "${!pid}" 2>/dev/null || { ktap_diag "QEMU $1 exited before its QMP was up"; return 1; }
		sleep 0.1
	done
	ktap_diag "timed out: QEMU $1's QMP is not up after $BOUND_QMP s"
	return 1
}

# incoming NAME URI: QEMU NAME, started with -incoming defer, listens on
# URI. QEMU's -incoming URI would listen only once its devices are
# realized, well after its QMP socket is up: a source told to migrate
# before that fails to connect, and the destination waits on.
incoming() {
	wait_qmp "$1" && mig incoming "$T/$1.qmp" "$2" >"$T/$1.inc" 2>&1 && return 0
	ktap_diag "QEMU $1 does not listen on $2: $(cat "$T/$1.inc" 2>/dev/null)"
	return 1
}

# wait_exit NAME: QEMU NAME exits (its status in qrc); one that does not is
# named, with where its threads are, killed, and fails
wait_exit() {
	local pid=Q$1 end=$((SECONDS + BOUND_QMP))

	qrc=''
	[ -n "${!pid}" ] || return 0
	while kill -0 "${!pid}" 2>/dev/null && [ $SECONDS -lt $end ]; do
		sleep 0.1
	done
	if kill -0 "${!pid}" 2>/dev/null; then
		ktap_diag "timed out: QEMU $1 has not exited after $BOUND_QMP s; its threads:" "$(stacks "${!pid}")"
		kill -9 "${!pid}"
		wait "${!pid}"
		printf -v "Q$1" %s ""
		return 1
	fi
	wait "${!pid}"
	qrc=$?
	printf -v "Q$1" %s ""
}

# wait_round NAME N CONSOLE: the guest in QEMU NAME has finished round N
# (fails when it reports a failure or that QEMU is gone, and says so)
wait_round() {
	local pid=Q$1 n=$2 con=$3 end=$((SECONDS + BOUND_ROUND)) last

	while :; do
		last=$(tail -c 4096 "$con" 2>/dev/null | grep -o '^live: seq=[0-9]*' | tail -n1)
		last=${last#live: seq=}
		[ "${last:-0}" -ge "$n" ] && return 0
		if grep -q 'mismatch\|^result: fail' "$con" 2>/dev/null; then
			ktap_diag "QEMU $1's guest failed: $(grep -m3 'mismatch\|^result: fail' "$con")"
			return 1
		fi
		if [ -z "${!pid}" ] || ! kill -0 "${!pid}" 2>/dev/null; then
			ktap_diag "QEMU $1 is gone, its guest at round ${last:-0}, not $n"
			return 1
		fi
		if [ $SECONDS -ge $end ]; then
			ktap_diag "timed out: QEMU $1's guest at round ${last:-0} after $BOUND_ROUND s, not $n"
			return 1
		fi
		sleep 0.2
	done
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

# quit NAME: QMP quit, and reap the process (its status in qrc)
quit() {
	local pid=Q$1 out

	qrc=''
	[ -n "${!pid}" ] || return 0
	out=$(mig qmp "$T/$1.qmp" quit 2>&1) || ktap_diag "QEMU $1: quit: $out"
	wait_exit "$1" && return "$qrc"
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

# frame KEY: a frame number mig.py's last handover or goes-on found
frame() {
	sed -n "s/^$1=//p" "$T/frames" 2>/dev/null | tail -n1
}

# handover SRC DST CONSOLE...: DST, paused after the move, shows SRC's last
# frame first. SRC is stopped: its screendump is the last frame. DST's
# guest is told to hold its flips (a byte on COM1, which the UART keeps
# while DST is paused), then DST runs until its guest reports a held round,
# and its screendump is taken: it is SRC's last frame, pixel for pixel, and
# the last frame the consoles (SRC's and DST's, in order) say was shown.
# One case differs, and is told apart: SRC stopped the guest between its
# hold check and its flip, which the guest then made on DST (its first
# round there says flip=1): DST shows that next frame. Sets n_dst.
# (One mig.py run for it all: python starts slowly under TCG.)
handover() {
	local rc

	rm -f "$T/frames"
	mig handover "$@" >"$T/$2.hand" 2>&1
	rc=$?
	n_dst=$(frame n_dst)
	ktap_diag "$(cat "$T/$2.hand")"
	return $rc
}

# goes_on SRC DST SRC_SIM SRC_UUID DST_SIM DST_UUID RESULT.JSON CONSOLE...:
# after a move, DST's guest goes on: its flips let go, it runs 3 more
# rounds, a frame held then is the last one the consoles say was shown
# and a later one than DST's first (n_dst), and the consoles, the last
# one DST's, read in order, have every round once, 5 packets each and no
# failed check. With a RESULT.JSON (a live move), the hardware's side in
# hw_rc: SRC saved once and stopped, DST resumed once and runs, both
# counted the bytes QEMU sent, DST's head scans out and its GPU runs the
# guest's packets.
goes_on() {
	local src=$1 dst=$2 ssim=$3 su=$4 dsim=$5 du=$6 json=$7 pid=Q$2 n rc vfio sa rb

	shift 7
	n=$(last_round "${@:1:$#-1}")
	rm -f "$T/frames"
	mig goes-on "$dst" "${!pid:-0}" $((n + 3)) "${n_dst:-?}" "$@" >"$T/$dst.chain" 2>&1
	rc=$?
	ktap_diag "$(cat "$T/$dst.chain")" \
		"on $src to round $n, on $dst to round $(last_round "${*: -1}"); $dst's frames: ${n_dst:-?}, then $(frame n_held)"
	[ -n "$json" ] || return $rc

	vfio=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("vfio", {}).get("transferred", -1))' "$json" 2>/dev/null)
	sa=$(mget "$ssim" "$su" bytes_saved) rb=$(mget "$dsim" "$du" bytes_resumed)
	ktap_diag "$src: $(tr '\n' ' ' <"$MIG/$ssim/vgpus/$su/migration")" \
		"$dst: $(tr '\n' ' ' <"$MIG/$dsim/vgpus/$du/migration")" \
		"QEMU's vfio transferred: $vfio" "$(grep '^head0:' "$MIG/$dsim/vgpus/$du/display")" \
		"$(grep '^ctx' "$HW/$dsim/engine")"
	[ "$(mget "$ssim" "$su" saves)" = 1 ] && [ "$(mget "$ssim" "$su" state)" = stop ] &&
		[ "$(mget "$ssim" "$su" tracking)" = 0 ] &&
		[ "$(mget "$dsim" "$du" resumes)" = 1 ] && [ "$(mget "$dsim" "$du" refused)" = 0 ] &&
		[ "$(mget "$dsim" "$du" state)" = running ] &&
		[ "$sa" -gt 0 ] && [ "$sa" = "$rb" ] && [ "$sa" = "$vfio" ] &&
		grep -q '^head0: enabled=1 .* width=320 height=240 stride=1408 ' "$MIG/$dsim/vgpus/$du/display" &&
		grep -Eq '^ctx [0-9]+: cmds [1-9]' "$HW/$dsim/engine"
	hw_rc=$?
	return $rc
}

# closed SHOW.JSON: gpuvirtctl -j vgpu show says the vGPU is not open
closed() {
	python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
v = v.get("vgpu", v) if isinstance(v, dict) else v
v = v[0] if isinstance(v, list) else v
sys.exit(0 if v.get("open") is False else 1)' "$1"
}

# vf_typed DOMAIN: the GPU in PCI domain DOMAIN in the sriov vGPU model,
# one VF, typed A100-1B (Documentation/admin-guide.rst, SR-IOV vGPUs)
vf_typed() {
	local pf=$PCI/$1:00:00.0 vf=$PCI/$1:00:00.1 id

	echo sriov >"$pf/gpuvirt/vgpu_model" && echo 1 >"$pf/sriov_numvfs" &&
		id=$(awk '$1 ~ /^[0-9]+$/ && $3 == "A100-1B" { print $1 }' "$vf/gpuvirt/creatable_vgpu_types") &&
		[ -n "$id" ] && echo "$id" >"$vf/gpuvirt/current_vgpu_type"
}

ktap_plan 19
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

t0=$SECONDS
qemu_on A sysfsdev="$MDEV/$UA"
wait_qmp A && wait_round A 3 "$T/A.con"
rc=$?
ktap_diag "$(grep -v '^live: seq=' "$T/A.con" | head -n 30)" "$(cat "$T/A.out")"
ktap_result $rc "the guest works on A: rounds of checked ring work, a frame each"

qemu_on B sysfsdev="$MDEV/$UB" -incoming defer -S
live_move A B live
ktap_result $? "QMP migrate moved the guest from A to B, through PRE_COPY"
report live "$T/live.json" "$T/A.trace" "$(backed sim0)"

# The source stopped with its last frame on head 0; B shows it when it
# takes over.
handover A B "$T/A.con" "$T/B.con"
ktap_result $? "B's first screendump is A's last frame, pixel for pixel"

goes_on A B sim0 $UA sim1 $UB "$T/live.json" "$T/A.con" "$T/B.con"
ktap_result $? "on B the guest goes on: every round once and in order, 5 packets each, no bad result, the frame counter counts on"
ktap_result "$hw_rc" "debugfs: A saved once, B resumed once, the same bytes as QEMU sent; B scans out and sim1 runs its work"
ktap_diag "live move (mdev): $((SECONDS - t0)) s"

# --- 2. save to a file, restore on A ----------------------------------------

t0=$SECONDS
quit A
mig migrate "$T/B.qmp" file:"$T/vm.img" "$T/save.json" $BOUND_MIG >"$T/save.log" 2>&1
rc=$?
ktap_diag "$(cat "$T/save.log")" "image: $(stat -c %s "$T/vm.img" 2>&1) bytes"
[ $rc -eq 0 ] && [ "$(mget sim1 $UB saves)" = 1 ]
ktap_result $? "B's guest saved to a file (migrate file:)"
report save "$T/save.json" "$T/B.trace" "$(backed sim1)"

qemu_on R sysfsdev="$MDEV/$UA" -incoming file:"$T/vm.img" -S
wait_qmp R && mig landed "$T/R.qmp" $BOUND_MIG >"$T/R.landed" 2>&1
rc=$?
ktap_diag "restore: $(cat "$T/R.landed")" "$(cat "$T/R.out")"
[ $rc -eq 0 ] && handover B R "$T/A.con" "$T/B.con" "$T/R.con" && [ "$(mget sim0 $UA resumes)" = 1 ]
ktap_result $? "restored on A from the file (-incoming file:): its first screendump is the saved frame"
quit B

goes_on B R - - - - "" "$T/A.con" "$T/B.con" "$T/R.con"
ktap_result $? "the restored guest goes on: every round once and in order, no bad result, the frame counter counts on"
ktap_diag "save and restore: $((SECONDS - t0)) s"

# --- 3. a vGPU of another type is refused ------------------------------------

# C listens before R is told to migrate: a source that cannot connect
# fails too, but C would then wait for a stream forever.
t0=$SECONDS
qemu_on C sysfsdev="$MDEV/$UC" -incoming defer
incoming C unix:"$T/bad.sock" &&
	mig migrate "$T/R.qmp" unix:"$T/bad.sock" "$T/bad.json" $BOUND_MIG >"$T/bad.log" 2>&1
rc=$?
# C ends itself once its load failed (QEMU's exit-on-error)
wait_exit C
crc=$?
ktap_diag "$(cat "$T/bad.log")" "C's QEMU: exit ${qrc:-?}: $(cat "$T/C.out")" \
	"C: $(tr '\n' ' ' <"$MIG/sim2/vgpus/$UC/migration")" "$(vmt_kmsg | grep 'migration stream refused')"
[ $rc -ne 0 ] && grep -q '^failed' "$T/bad.log" && [ $crc -eq 0 ] && [ "$qrc" -ne 0 ] &&
	[ "$(mget sim2 $UC refused)" = 1 ] && [ "$(mget sim2 $UC resumes)" = 0 ] &&
	vmt_kmsg | grep -q "migration stream refused: it is of vGPU type A100-1B, this vGPU is A100-2B"
ktap_result $? "a migration to the A100-2B vGPU fails: C refuses the stream, says why and exits"

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
[ $rc -eq 0 ] && closed "$T/show.json" &&
	[ "$(mget sim0 $UA state)" = running ] && [ "$(mget sim1 $UB state)" = running ]
ktap_result $? "QEMU quit cleanly; the vGPUs are closed and back to running"
ktap_diag "refusal: $((SECONDS - t0)) s"

# --- 4. live, between SR-IOV VF vGPUs -----------------------------------------

# Two more A100s in the sriov vGPU model, a VF each, typed A100-1B through
# current_vgpu_type; QEMU takes them by PCI address (the VFs of GPU N are
# in PCI domain 8000 + N). The same move and checks as 1.
t0=$SECONDS
echo "3 a100-40gb" >"$BUS/new_device" && echo "4 a100-40gb" >"$BUS/new_device" &&
	vf_typed 8003 && vf_typed 8004 &&
	UV=$(cat "$PCI/$VV/gpuvirt/vgpu_uuid") && UW=$(cat "$PCI/$VW/gpuvirt/vgpu_uuid") &&
	[ -n "$UV" ] && [ -n "$UW" ] && [ -d "$MIG/sim3/vgpus/$UV" ] && [ -d "$MIG/sim4/vgpus/$UW" ]
rc=$?
ktap_diag "VF $VV: vGPU ${UV:-?}, VF $VW: vGPU ${UW:-?}"
if [ $rc -eq 0 ]; then
	qemu_on V host=$VV
	wait_qmp V && wait_round V 3 "$T/V.con"
	rc=$?
	ktap_diag "$(grep -v '^live: seq=' "$T/V.con" | head -n 30)" "$(cat "$T/V.out")"
fi
ktap_result $rc "VFs $VV and $VW (sim3, sim4) typed A100-1B; the guest works on VF V (vfio-pci host=)"

qemu_on W host=$VW -incoming defer -S
live_move V W vf
ktap_result $? "QMP migrate moved the guest from VF V to VF W, through PRE_COPY"
report vf "$T/vf.json" "$T/V.trace" "$(backed sim3)"

handover V W "$T/V.con" "$T/W.con"
ktap_result $? "W's first screendump is V's last frame, pixel for pixel"

goes_on V W sim3 "$UV" sim4 "$UW" "$T/vf.json" "$T/V.con" "$T/W.con"
ktap_result $? "on VF W the guest goes on: every round once and in order, 5 packets each, no bad result, the frame counter counts on"
ktap_result "$hw_rc" "debugfs: VF V saved once, VF W resumed once, the same bytes as QEMU sent; W scans out and sim4 runs its work"

quit V
rc=$?
quit W
rc2=$?
"$CTL" -j vgpu show uuid "$UW" >"$T/showw.json" 2>&1
[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && closed "$T/showw.json" &&
	[ "$(mget sim3 "$UV" state)" = running ] && [ "$(mget sim4 "$UW" state)" = running ]
ktap_result $? "both QEMUs quit cleanly; the VF vGPUs are closed and back to running"
ktap_diag "live move (VF): $((SECONDS - t0)) s"

vmt_kernel_quiet
ktap_result $? "no kernel warning"

ktap_finish
