#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where the processes of a hang wait, in one process (a fork is slow
under TCG, and python's start is paid once).

Usage: hangdump.py [--procs ERE] [--qmp SOCKET [--trace SECONDS --log FILE]]
                   [--busy N]

  --busy N       the N processes with the most CPU time, and the load
  --procs ERE    every thread of each process whose name (comm) matches
                 ERE: state, kernel wait channel, system call with the
                 file its fd argument names, kernel stack
  --qmp SOCKET   through a QMP socket of QEMU's (not libvirt's):
                 query-status, query-migrate twice a second apart, the
                 migration parameters; with --trace, QEMU's migration and
                 VFIO pending-size and save trace events are on for
                 SECONDS, and read back from QEMU's log (its stderr, FILE):
                 the last of each kind. Then a line "verdict: ..." when
                 it is QEMU's stall of a paused domain's migration (a
                 stopped VFIO device's state above the threshold QEMU
                 derives from its throughput, which is near zero)

Output goes to stdout, a line a fact. Used by selftests/lib/hangwatch.sh.
"""

import argparse
import json
import os
import re
import socket
import time

# x86-64 system calls a waiting thread shows; "fd" when the first argument
# is a file descriptor
SYSCALLS = {
    0: "read fd", 1: "write fd", 7: "poll", 16: "ioctl fd", 17: "pread64 fd",
    18: "pwrite64 fd", 19: "readv fd", 20: "writev fd", 23: "select",
    35: "nanosleep", 40: "sendfile fd", 43: "accept fd", 46: "sendmsg fd",
    47: "recvmsg fd", 61: "wait4", 128: "rt_sigtimedwait", 202: "futex",
    219: "restart_syscall", 230: "clock_nanosleep", 232: "epoll_wait fd",
    247: "waitid", 270: "pselect6", 271: "ppoll", 275: "splice fd",
    281: "epoll_pwait fd", 288: "accept4 fd", 295: "preadv fd",
    296: "pwritev fd", 326: "copy_file_range fd", 426: "io_uring_enter fd",
    441: "epoll_pwait2 fd",
}
STACK_LINE = re.compile(r"^\[<[0-9a-fx]*>\] ([^+ ]+)")


def rd(path, default="?"):
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace").strip()
    except OSError:
        return default


def syscall(pid, tid):
    w = rd(f"/proc/{pid}/task/{tid}/syscall").split()
    if not w or w[0] in ("running", "-1", "?"):
        return w[0] if w else "?"
    nr = int(w[0])
    name = SYSCALLS.get(nr, f"syscall {nr}")
    if name.endswith(" fd"):
        fd = int(w[1], 16)
        try:
            what = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            what = "?"
        return f"{name[:-3]}({fd} -> {what})"
    return f"{name}({w[1]}, ...)"


def threads(pid):
    cmd = rd(f"/proc/{pid}/cmdline").replace("\0", " ")[:200]
    print(f"pid {pid}: {cmd}")
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError:
        print("  gone")
        return
    for tid in tids:
        t = f"/proc/{pid}/task/{tid}"
        st = rd(f"{t}/stat", "")
        state = st[st.rfind(")") + 2:].split(" ", 1)[0] if st else "?"
        stack = [m.group(1) for m in map(STACK_LINE.match, rd(f"{t}/stack", "").splitlines()) if m]
        print(f"  {tid} {rd(t + '/comm')} ({state}) wchan={rd(t + '/wchan')} {syscall(pid, tid)}")
        print(f"    kernel: {' '.join(stack) or '-'}")


def procs(ere):
    r = re.compile(ere)
    pids = [p for p in os.listdir("/proc") if p.isdigit() and r.search(rd(f"/proc/{p}/comm", ""))]
    for p in sorted(pids, key=int):
        threads(p)
        if "qemu" in rd(f"/proc/{p}/comm", ""):
            fds = []
            try:
                for fd in sorted(os.listdir(f"/proc/{p}/fd"), key=int):
                    fds.append(f"{fd}->{os.readlink(f'/proc/{p}/fd/{fd}')}")
            except OSError:
                pass
            print(f"  files: {' '.join(fds)}")


def busy(n):
    tick = os.sysconf("SC_CLK_TCK")
    rows = []
    for p in filter(str.isdigit, os.listdir("/proc")):
        st = rd(f"/proc/{p}/stat", "")
        if not st:
            continue
        f = st[st.rfind(")") + 2:].split()
        cpu = (int(f[11]) + int(f[12])) / tick
        rows.append((cpu, p, f[0], rd(f"/proc/{p}/cmdline", "").replace("\0", " ")[:120]
                     or st[st.find("("):st.rfind(")") + 1]))
    print(f"load: {rd('/proc/loadavg')}; the busiest processes (CPU s, pid, state):")
    for cpu, p, state, cmd in sorted(rows, reverse=True)[:n]:
        print(f"  {cpu:8.1f} {p:>6} {state} {cmd}")


def qmp(path, trace, log):
    """QEMU's migration through QMP; its trace events into @log for
    @trace seconds. Returns what the verdict needs."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    f = s.makefile("rw")
    f.readline()

    def cmd(what, **args):
        f.write(json.dumps({"execute": what, "arguments": args}) + "\n")
        f.flush()
        while True:
            r = json.loads(f.readline())
            if "return" in r or "error" in r:
                return r.get("return", r.get("error"))

    cmd("qmp_capabilities")
    got = {}
    for c in ("query-status", "query-migrate", "query-migrate-parameters"):
        got[c] = cmd(c)
        print(f"{c}: {json.dumps(got[c], sort_keys=True)}")
    time.sleep(1)
    got["later"] = cmd("query-migrate")
    print(f"query-migrate a second later: {json.dumps(got['later'], sort_keys=True)}")
    if trace:
        ev = ("migrate_pending*", "migrate_transferred", "migration_thread_low_pending",
              "vfio_state_pending*", "vfio_save_*", "vfio_migration_set_state")
        off = os.path.getsize(log) if log else 0
        for e in ev:
            cmd("trace-event-set-state", name=e, enable=True)
        time.sleep(trace)
        for e in ev:
            cmd("trace-event-set-state", name=e, enable=False)
        if log:
            got["trace"] = events(log, off, trace)
    return got


TRACE = re.compile(r"^\d+@[\d.]+:(\w+) (.*)")


def events(log, off, secs):
    """The trace events QEMU wrote to @log from @off: counted, the last of
    each kind kept."""
    with open(log, "rb") as f:
        f.seek(off)
        lines = f.read().decode(errors="replace").splitlines()
    count, last = {}, {}
    for line in lines:
        m = TRACE.match(line)
        if m:
            count[m.group(1)] = count.get(m.group(1), 0) + 1
            last[m.group(1)] = m.group(2)
    print(f"QEMU's trace events in {secs:g} s: " +
          " ".join(f"{k} {v}" for k, v in sorted(count.items())))
    for k in sorted(last):
        print(f"  last {k}: {last[k]}")
    return last


def number(text, after):
    m = re.search(re.escape(after) + r"\s*=?\s*(\d+)", text or "")
    return int(m.group(1)) if m else None


def verdict(got):
    """Name QEMU's stall of a paused domain's migration when it is that:
    the VM stopped, the migration active with no RAM left to send, QEMU
    syncing again and again, and what is pending (the VFIO device state a
    stopped device sends only at switchover) above the threshold that QEMU
    derives from the last 100 ms's throughput and the downtime limit."""
    st, mig, later = got.get("query-status", {}), got.get("query-migrate", {}), got.get("later", {})
    tr = got.get("trace", {})
    syncs = (mig.get("ram", {}).get("dirty-sync-count"), later.get("ram", {}).get("dirty-sync-count"))
    pending = number(tr.get("migrate_pending_exact"), "exact pending size")
    threshold = number(tr.get("migrate_transferred"), "max_size")
    stopcopy = number(tr.get("vfio_state_pending_exact"), "stopcopy size")
    if (st.get("running") is False and later.get("status") == "active" and
            later.get("ram", {}).get("remaining") == 0 and None not in syncs and
            syncs[1] > syncs[0] and None not in (pending, threshold) and pending > threshold):
        print(f"verdict: QEMU's stall of a paused domain's migration: the VM is {st.get('status')}, "
              f"its migration active with no RAM left, and QEMU syncs without end "
              f"(dirty-sync-count {syncs[0]} -> {syncs[1]} in a second) but never switches over: "
              f"{pending} bytes are pending ({stopcopy} of them the VFIO device state that a "
              f"stopped device sends only at switchover), above the {threshold} bytes that QEMU "
              f"takes as sendable within its downtime limit "
              f"({got.get('query-migrate-parameters', {}).get('downtime-limit')} ms) at the "
              f"throughput of the last 100 ms, which with nothing left to send stays near zero")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs")
    ap.add_argument("--qmp")
    ap.add_argument("--trace", type=float, default=0)
    ap.add_argument("--log")
    ap.add_argument("--busy", type=int, default=0)
    a = ap.parse_args()
    if a.procs:
        procs(a.procs)
    if a.qmp:
        try:
            verdict(qmp(a.qmp, a.trace, a.log))
        except (OSError, ValueError) as e:
            print(f"QMP {a.qmp}: {e}")
    if a.busy:
        busy(a.busy)


main()
