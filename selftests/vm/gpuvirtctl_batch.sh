#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# gpuvirtctl -batch against the real module: a file of commands (comments,
# blank lines, quotes, joined lines) creates and removes vGPUs, which show in
# sysfs, in the core's debugfs and in the sim's; the first failure stops the
# batch with FILE:LINE in its message and later lines are not run; -force
# runs them all and still fails; "-" reads stdin; -j prints one JSON document
# per command; the whole batch uses one netlink socket.
#
# Runs as root in the test VM (selftests/vm-run.sh). Prints KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

U=6c1e2b6a-1d3f-4a8e-9b2c-0d4e5f6a7c0

vmt_start_clean gpuvirt_sim gpuvirt
vmt_need_ctl
vmt_need_modules gpuvirt

# vgpu_is N TYPE GPU: vGPU $U$N exists in sysfs with mdev type TYPE on GPU
# simGPU, and the core's debugfs has it under that GPU
vgpu_is() {
	local t
	t=$(readlink "$MDEV/$U$1/mdev_type") || {
		echo "# no vGPU $U$1 in sysfs"
		return 1
	}
	[ "${t##*/}" = "gpuvirt_sim-$2" ] || {
		echo "# vGPU $U$1 has type ${t##*/}, not $2"
		return 1
	}
	[ -d "$CORE/sim$3/vgpus/$U$1" ] || {
		echo "# no $CORE/sim$3/vgpus/$U$1"
		return 1
	}
}

# gone N: vGPU $U$N is neither in sysfs nor in the core's debugfs
gone() {
	if [ -e "$MDEV/$U$1" ] || ls -d "$CORE"/sim*/vgpus/"$U$1" 2>/dev/null; then
		echo "# vGPU $U$1 still exists"
		return 1
	fi
}

# counts N0 N1: the schedulers of sim0 and sim1 hold N0 and N1 vGPUs
# (core debugfs), and so many vGPUs are in sysfs
counts() {
	local n
	n=$(find "$MDEV" -mindepth 1 -maxdepth 1 | wc -l)
	grep -qx "vgpus: $1" "$CORE/sim0/sched" && grep -qx "vgpus: $2" "$CORE/sim1/sched" &&
		[ "$n" -eq $(($1 + $2)) ] || {
		echo "# want $1 + $2 vGPUs; sysfs has $n; sched: $(grep vgpus "$CORE"/sim*/sched | tr '\n' ' ')"
		return 1
	}
}

ktap_plan 12

vmt_load gpuvirt gpuvirt_sim &&
	echo "0 h200-141gb" >$BUS/new_device && echo "1 h200-141gb" >$BUS/new_device
ktap_result $? "modules load, two simulated H200s"

# 2: a file with comments, blank lines, quotes and a joined line
cat >"$T/ok.batch" <<EOF
# two vGPUs on sim0, one on sim1

vgpu add gpu 0 type H200-35C uuid ${U}1   # a comment after a command
  vgpu add gpu 0 type 'H200-35C' uuid "${U}2" \\
	weight 300
vgpu add gpu 1 type H200-4C uuid ${U}3
vgpu set uuid ${U}1 weight 50
EOF
run -batch "$T/ok.batch"
diag_file "$T/out"
[ $rc -eq 0 ] && [ ! -s "$T/err" ] && [ "$(wc -l <"$T/out")" -eq 3 ] &&
	grep -q "^vgpu ${U}2 gpu 0 type H200-35C weight 300 " "$T/out" &&
	vgpu_is 1 H200-35C 0 && vgpu_is 2 H200-35C 0 && vgpu_is 3 H200-4C 1 &&
	grep -qx "weight: 50" "$CORE/sim0/vgpus/${U}1/sched" &&
	grep -qx "weight: 300" "$CORE/sim0/vgpus/${U}2/sched" && counts 2 1 &&
	grep -qx "registered: 1" "$HW/sim0/hw" && grep -qx "registered: 1" "$HW/sim1/hw"
ktap_result $? "batch file: three vGPUs made and one set, in sysfs and both debugfs"

# 3: -j: one JSON document per command that prints, in order
cat >"$T/json.batch" <<EOF
gpu show id 1
vgpu show uuid ${U}2
vgpu set uuid ${U}2 weight 200
type show gpu 1 name H200-4C
EOF
run -j -batch "$T/json.batch"
diag_file "$T/out"
[ $rc -eq 0 ] && python3 - "$T/out" "${U}2" <<'PY'
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
assert [list(d) for d in docs] == [["gpu"], ["vgpu"], ["type"]], docs
assert docs[0]["gpu"][0]["id"] == 1, docs[0]
assert docs[1]["vgpu"][0]["uuid"] == sys.argv[2], docs[1]
assert docs[1]["vgpu"][0]["weight"] == 300, docs[1]
t = docs[2]["type"][0]
assert t["name"] == "H200-4C" and t["available-instances"] == 31, t
PY
[ $? -eq 0 ] && grep -qx "weight: 200" "$CORE/sim0/vgpus/${U}2/sched"
ktap_result $? "-j -batch: one JSON document a line, one per printing command"

# 4: the first failure stops the batch, naming the file and line
cat >"$T/bad.batch" <<EOF
vgpu add gpu 1 type H200-4C uuid ${U}4

vgpu add gpu 1 type H200-NOPE uuid ${U}5
vgpu add gpu 1 type H200-4C uuid ${U}6
EOF
run -batch "$T/bad.batch"
[ $rc -eq 1 ] && has "$T/err" "gpuvirtctl: $T/bad.batch:3: vgpu add: " &&
	vgpu_is 4 H200-4C 1 && gone 5 && gone 6 && counts 2 2
ktap_result $? "a failing line: exit 1, FILE:3 in the message, later lines not run"

# 5: a usage error (exit 2) on a joined line is known by its first line
printf 'gpu show\nvgpu add gpu 1 \\\n type H200-4C bogus 1\nvgpu del uuid %s4\n' "$U" >"$T/usage.batch"
run -batch "$T/usage.batch"
[ $rc -eq 2 ] && has "$T/err" "$T/usage.batch:2: vgpu add: " && has "$T/err" '"bogus"' &&
	vgpu_is 4 H200-4C 1
ktap_result $? "a usage error: exit 2 with its first line, the next line not run"

# 6: -force runs every line and still fails, counting the failures
run -batch "$T/bad.batch" -force
[ $rc -eq 1 ] && has "$T/err" "$T/bad.batch:1: vgpu add: " && has "$T/err" "$T/bad.batch:3: vgpu add: " &&
	has "$T/err" "gpuvirtctl: 2 commands of $T/bad.batch failed" &&
	vgpu_is 4 H200-4C 1 && gone 5 && vgpu_is 6 H200-4C 1 && counts 2 3
ktap_result $? "-force: every line runs, exit 1, each failure with its line"

# 7: a bad quote is an error of the file, exit 2, and nothing of it runs
printf 'vgpu del uuid %s6\nvgpu add gpu 0 type "H200-35C\n' "$U" >"$T/quote.batch"
run -batch "$T/quote.batch"
[ $rc -eq 2 ] && has "$T/err" "$T/quote.batch:2: unterminated \" quote" && gone 6 && counts 2 2
ktap_result $? "an unterminated quote: exit 2 with its line; the lines before it ran"

# 8: stdin, with its errors named "stdin"
printf 'vgpu add gpu 1 type H200-4C uuid %s7\n\nvgpu del uuid %s5\n' "$U" "$U" |
	"$CTL" -batch - >"$T/out" 2>"$T/err"
rc=$?
diag_file "$T/err"
[ $rc -eq 1 ] && has "$T/err" "gpuvirtctl: stdin:3: vgpu del: " && vgpu_is 7 H200-4C 1 && counts 2 3
ktap_result $? "-batch - reads stdin; an error names stdin:LINE"

# 9: the whole batch is one process with one netlink socket: commands fed
# one at a time through a pipe, the process's sockets counted between them
mkfifo "$T/fifo"
"$CTL" -batch - <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
exec 7>"$T/fifo"
socks() {
	local f n=0
	for f in /proc/"$pid"/fd/*; do
		[[ $(readlink "$f") == socket:* ]] && n=$((n + 1))
	done
	echo $n
}
# wait_lines N: the batch has printed N lines
wait_lines() {
	local i
	for i in $(seq 200); do
		[ "$(wc -l <"$T/out")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
echo "vgpu add gpu 1 type H200-4C uuid ${U}8" >&7
wait_lines 1 && s1=$(socks)
echo "gpu show" >&7
wait_lines 3 && s2=$(socks)
echo "vgpu del uuid ${U}8" >&7
echo "vgpu show uuid ${U}7" >&7
wait_lines 4 && s3=$(socks)
exec 7>&-
wait "$pid"
rc=$?
echo "# sockets after each command: ${s1:-?} ${s2:-?} ${s3:-?}"
diag_file "$T/out"
[ $rc -eq 0 ] && [ "${s1:-}" = 1 ] && [ "${s2:-}" = 1 ] && [ "${s3:-}" = 1 ] && gone 8 && counts 2 3
ktap_result $? "one process, one netlink socket across the commands of a batch"

# 10: options: -batch takes no object, -force needs -batch, a missing file
run -batch "$T/ok.batch" gpu show
r1=$rc
run -force gpu show
r2=$rc
run -batch "$T/nope"
[ $r1 -eq 2 ] && [ $r2 -eq 2 ] && [ $rc -eq 1 ] && has "$T/err" "$T/nope"
ktap_result $? "-batch with an object, -force alone: usage errors; a missing file: exit 1"

# 11: removing everything from one batch file
{
	for n in 1 2 3 4 7; do
		echo "vgpu del uuid $U$n"
	done
} >"$T/del.batch"
run -batch "$T/del.batch"
[ $rc -eq 0 ] && counts 0 0 && gone 1 && gone 2 && gone 3 && gone 4 && gone 7
ktap_result $? "a batch of vgpu del removes every vGPU from sysfs and debugfs"

# 12: the sim's VRAM holds nothing of them
grep -qx "backed_pages: 0" "$HW/sim0/vram" && grep -qx "backed_pages: 0" "$HW/sim1/vram"
ktap_result $? "the sim's VRAM has no pages backed once they are gone"

ktap_finish
