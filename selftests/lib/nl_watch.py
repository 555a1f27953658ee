# SPDX-License-Identifier: GPL-2.0-only
"""Run commands and say what vgpu-get requests each sent and got, as seen
on the wire.

    python3 nl_watch.py IFACE HEADER OUTDIR < COMMANDS

IFACE is an nlmon device that is up (the kernel's netlink tap: it sees
every netlink message, the requests user space sends and what the kernel
answers); HEADER is include/uapi/linux/gpuvirt.h, for the numbers. Each
line of COMMANDS is "NAME WORD...", the words split as a shell would
(shlex). Each command runs alone, and OUTDIR/NAME.out, NAME.err and
NAME.rc get its stdout, stderr and exit status, and NAME.nl one line for
each vgpu-get request of gpuvirt's family it sent, in order:

    vgpu-get do|dump omit=MASK|- ok|refused=ERRNO:MESSAGE replies=N stats=S migration=M

omit is the value of its omit attribute ("-" without one); then the
kernel's answer: ok, or the error and extack message it refused the
request with; N replies, S of them with a stats nest and M with a
migration nest. IFACE "-" runs the commands without a tap, and writes
no NAME.nl.

The tap hands the messages over while the command sends and receives
them, so once the command has exited everything it exchanged is queued
on the packet socket: draining it then takes no wait and no timing.
"""
import os
import re
import shlex
import socket
import struct
import subprocess
import sys

ETH_P_ALL = 0x0003
SO_RCVBUFFORCE = 33
NETLINK_GENERIC = 16
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLM_F_CAPPED, NLM_F_ACK_TLVS = 0x100, 0x200
NLMSGERR_ATTR_MSG = 1
GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 0x10, 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
NLA_TYPE_MASK = 0x3FFF


def uapi_enums(path):
    """NAME -> value of every enum member of the uapi header."""
    vals = {}
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    for body in re.findall(r"enum\s*(?:\w+\s*)?\{([^}]*)\}", text):
        nxt = 0
        for item in body.split(","):
            item = item.strip()
            if not item:
                continue
            m = re.fullmatch(r"(\w+)(?:\s*=\s*(.+))?", item, flags=re.S)
            if not m:
                continue
            if m.group(2):
                try:
                    nxt = int(m.group(2), 0)
                except ValueError:
                    continue  # X_MAX = (__X_MAX - 1)
            vals[m.group(1)] = nxt
            nxt += 1
    return vals


def attrs(buf):
    """(type, payload) of each attribute in buf."""
    off = 0
    while off + 4 <= len(buf):
        alen, atype = struct.unpack_from("=HH", buf, off)
        if alen < 4 or off + alen > len(buf):
            return
        yield atype & NLA_TYPE_MASK, buf[off + 4:off + alen]
        off += (alen + 3) & ~3


def messages(buf):
    """(type, flags, seq, pid, payload) of each netlink message in buf."""
    off = 0
    while off + 16 <= len(buf):
        mlen, mtype, flags, seq, pid = struct.unpack_from("=IHHII", buf, off)
        if mlen < 16 or off + mlen > len(buf):
            return
        yield mtype, flags, seq, pid, buf[off + 16:off + mlen]
        off += (mlen + 3) & ~3


def family_id(name):
    """The id of generic netlink family name, asked of nlctrl."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    try:
        s.bind((0, 0))
        val = name.encode() + b"\0"
        attr = struct.pack("=HH", 4 + len(val), CTRL_ATTR_FAMILY_NAME) + val
        attr += b"\0" * (-len(attr) % 4)
        body = struct.pack("=BBH", CTRL_CMD_GETFAMILY, 1, 0) + attr
        s.send(struct.pack("=IHHII", 16 + len(body), GENL_ID_CTRL,
                           NLM_F_REQUEST, 1, 0) + body)
        for mtype, _, _, _, payload in messages(s.recv(65536)):
            if mtype == NLMSG_ERROR:
                sys.exit("nl_watch: no netlink family %s" % name)
            for atype, val in attrs(payload[4:]):
                if atype == CTRL_ATTR_FAMILY_ID:
                    return struct.unpack_from("=H", val)[0]
    finally:
        s.close()
    sys.exit("nl_watch: nlctrl did not answer for %s" % name)


class Watch:
    def __init__(self, iface, header):
        e = uapi_enums(header)
        self.cmd = e["GPUVIRT_CMD_VGPU_GET"]
        self.a_omit = e["GPUVIRT_A_VGPU_OMIT"]
        self.a_stats = e["GPUVIRT_A_VGPU_STATS"]
        self.a_mig = e["GPUVIRT_A_VGPU_MIGRATION"]
        self.fam = family_id("gpuvirt")
        self.sk = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                socket.htons(ETH_P_ALL))
        # past rmem_max (root may): a message the tap drops would fail a
        # check, never pass one, but should not happen
        try:
            self.sk.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        except PermissionError:
            self.sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sk.bind((iface, ETH_P_ALL))
        self.sk.setblocking(False)

    def drain(self):
        """Every message queued on the tap now, in order."""
        out = []
        while True:
            try:
                buf, addr = self.sk.recvfrom(1 << 20)
            except BlockingIOError:
                return out
            if addr[1] == NETLINK_GENERIC:
                out.extend(messages(buf))

    def requests(self, msgs):
        """The vgpu-get requests among msgs, each with its answer."""
        reqs, by_seq = [], {}
        for mtype, flags, seq, _, payload in msgs:
            if mtype == self.fam and flags & NLM_F_REQUEST:
                if len(payload) < 4 or payload[0] != self.cmd:
                    continue
                r = {"dump": flags & NLM_F_DUMP == NLM_F_DUMP, "omit": None,
                     "err": None, "replies": 0, "stats": 0, "mig": 0}
                for atype, val in attrs(payload[4:]):
                    if atype == self.a_omit and len(val) == 4:
                        r["omit"] = struct.unpack("=I", val)[0]
                reqs.append(r)
                # a request's pid is 0 (the kernel's), its answers' the
                # socket's: the sequence number ties them
                by_seq[seq] = r
                continue
            r = by_seq.get(seq)
            if r is None:
                continue
            if mtype == self.fam:
                r["replies"] += 1
                types = {t for t, _ in attrs(payload[4:])}
                r["stats"] += self.a_stats in types
                r["mig"] += self.a_mig in types
            elif mtype in (NLMSG_ERROR, NLMSG_DONE) and len(payload) >= 4:
                err = -struct.unpack_from("=i", payload)[0]
                msg = ""
                if mtype == NLMSG_ERROR and flags & NLM_F_ACK_TLVS:
                    # the request's header alone when capped
                    skip = 4 + (16 if flags & NLM_F_CAPPED else
                                struct.unpack_from("=I", payload, 4)[0])
                    for atype, val in attrs(payload[skip:]):
                        if atype == NLMSGERR_ATTR_MSG:
                            msg = val.rstrip(b"\0").decode(errors="replace")
                r["err"] = (err, msg) if err else 0
        return reqs

    def line(self, r):
        omit = "-" if r["omit"] is None else str(r["omit"])
        if r["err"] is None:
            ans = "unanswered"
        elif r["err"] == 0:
            ans = "ok"
        else:
            ans = "refused=%s:%s" % (os.strerror(r["err"][0]), r["err"][1])
        return "vgpu-get %s omit=%s %s replies=%d stats=%d migration=%d" % (
            "dump" if r["dump"] else "do", omit, ans, r["replies"],
            r["stats"], r["mig"])


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    iface, header, outdir = sys.argv[1:]
    w = Watch(iface, header) if iface != "-" else None
    for text in sys.stdin:
        words = shlex.split(text)
        if not words:
            continue
        name, argv = words[0], words[1:]
        if w:
            w.drain()
        with open(os.path.join(outdir, name + ".out"), "w") as out, \
             open(os.path.join(outdir, name + ".err"), "w") as err:
            rc = subprocess.call(argv, stdout=out, stderr=err)
        with open(os.path.join(outdir, name + ".rc"), "w") as f:
            f.write("%d\n" % rc)
        if not w:
            continue
        reqs = w.requests(w.drain())
        with open(os.path.join(outdir, name + ".nl"), "w") as f:
            for r in reqs:
                f.write(w.line(r) + "\n")


if __name__ == "__main__":
    main()
