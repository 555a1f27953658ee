# SPDX-License-Identifier: GPL-2.0-only
"""Judge the debug console of the bare-metal test guest in its live mode.

    python3 guest_console.py CONSOLE... [--after N] [--min M]

The guest (selftests/vm/guest/, run_live()) prints one line a round:
"live: seq=N done=D checked=C bad=B flip=F", and "live: seq=N mismatch ..."
when a result is wrong. The consoles are read one after another, as one
guest's life across QEMU processes. The rounds must come once each and in
order from round 1, with 5 packets done per round and no check failed.
--after N: some round after round N is there (the guest went on after a
move that happened at round N). --min M: at least M rounds.

Prints the first and last round; exit status 1 with what is wrong.
"""
import re
import sys

LINE = re.compile(r"live: seq=(\d+) done=(\d+) checked=(\d+) bad=(\d+) flip=([01])")


def rounds(text):
    """The rounds of a console's text and the faults found in it."""
    # a guest that still runs may be in the middle of its last line
    text = text[:text.rfind("\n") + 1]
    seen, faults = [], []
    for line in text.splitlines():
        if not line.startswith("live: seq="):
            continue
        if "mismatch" in line:
            faults.append(line)
            continue
        m = LINE.fullmatch(line)
        if not m:
            faults.append("garbled: " + line)
            continue
        seq, done, checked, bad, _ = (int(g) for g in m.groups())
        want = seen[-1] + 1 if seen else 1
        if seq != want:
            faults.append(f"round {seq} where round {want} was due")
        if done != 5 * seq:
            faults.append(f"round {seq}: {done} packets done, not {5 * seq}")
        if bad:
            faults.append(f"round {seq}: {bad} of {checked} checks failed")
        seen.append(seq)
    return seen, faults


def main(argv):
    after, least, paths = 0, 1, []
    args = iter(argv)
    for a in args:
        if a == "--after":
            after = int(next(args))
        elif a == "--min":
            least = int(next(args))
        else:
            paths.append(a)
    text = ""
    for p in paths:
        with open(p, errors="replace") as f:
            text += f.read()
    seen, faults = rounds(text)
    if len(seen) < least:
        faults.append(f"{len(seen)} rounds, fewer than {least}")
    if seen and seen[-1] <= after:
        faults.append(f"no round after round {after}")
    print(f"rounds {seen[0] if seen else '-'}..{seen[-1] if seen else '-'}")
    for f in faults[:10]:
        print(f)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
