# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Catch a hang while it happens (source it after vmtest.sh): run a command that may hang
# (virsh save, a QEMU that migrates) under a watch that, once the command
# has run past a first bound, has the test say where the processes that
# matter wait, and that gives up at a second bound. Silent while the
# command ends in time.
#
#   hw_watch WARN MAX DUMP OUT CMD...
#        run CMD, its output to the file OUT; past WARN seconds, run DUMP
#        once with "running for WARN s" (its output goes to stdout, which
#        a KTAP test turns into diagnostics with hw_diag); past MAX
#        seconds, run DUMP again, then kill CMD (SIGTERM, SIGKILL 10 s
#        later) and return 124. Else CMD's status.
#   hw_dump [ARG...]
#        selftests/lib/hangdump.py: every thread of the processes named
#        (--procs ERE) with its state, kernel wait channel, system call
#        and the file its fd argument names, and kernel stack; QEMU's
#        migration through a QMP socket of its own (--qmp SOCKET), with
#        its migration and VFIO trace events on for a while (--trace S);
#        the busiest processes (--busy N). One python process: a fork is
#        slow under TCG.
#   hw_diag      stdin as KTAP diagnostics ("# " lines)

hw_diag() {
	sed 's/^/# /'
}

hw_dump() {
	timeout 60 python3 "${GPUVIRT_SRC:-.}/selftests/lib/hangdump.py" "$@" 2>&1
}

hw_watch() {
	local warn=$1 max=$2 dump=$3 out=$4 pid t0=$SECONDS warned=0

	shift 4
	"$@" >"$out" 2>&1 &
	pid=$!
	while vmt_alive "$pid"; do
		if [ $warned = 0 ] && [ $((SECONDS - t0)) -ge "$warn" ]; then
			warned=1
			"$dump" "running for $warn s"
		fi
		if [ $((SECONDS - t0)) -ge "$max" ]; then
			"$dump" "running for $max s: given up"
			vmt_reap pid
			return 124
		fi
		sleep 0.5
	done
	wait "$pid"
}
