#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The debug lane's commands (selftests/debug/COMMANDS), run in a guest of
# the debug kernel by scripts/check-debug.sh (vm-run.sh --cmd): each one in
# turn, its KTAP nested under its own result, then
# selftests/debug/after-test.sh --ktap (a leak of ours or lockdep switched
# off fails "leaks after NAME").
#
# Usage: selftests/debug/commands.sh [--full] [NAME...]
#   --full  the "full" line of each name where it has one (make check-full);
#           otherwise the "check" lines
#   NAME    these commands only (default: every name, in file order)
# GPUVIRT_SEED is passed on to the commands (default 0).
# Prints KTAP; exits 1 if anything failed.
set -uo pipefail

list=selftests/debug/COMMANDS
tier=check
[ "${1:-}" = --full ] && { tier=full; shift; }
export GPUVIRT_SEED=${GPUVIRT_SEED:-0}

# NAME<TAB>COMMAND for the chosen tier, a name's "full" line standing in
# for its "check" line in --full.
entries() {
	sed -e 's/^[[:space:]]*//' -e '/^#/d' -e '/^$/d' "$list" |
		awk -v tier="$tier" '
		{
			t = $1; name = $2
			cmd = $0
			sub(/^[^ \t]+[ \t]+[^ \t]+[ \t]+/, "", cmd)
			if (t != "check" && t != "full") {
				printf "commands: bad tier \"%s\" in line: %s\n", t, $0 > "/dev/stderr"
				bad = 1
				next
			}
			if (!(name in order)) { order[name] = ++n; names[n] = name }
			if (t == "check" && !(name in pick)) pick[name] = cmd
			if (t == "full" && tier == "full") pick[name] = cmd
		}
		END {
			for (i = 1; i <= n; i++)
				if (names[i] in pick)
					printf "%s\t%s\n", names[i], pick[names[i]]
			exit bad
		}'
}

declare -A cmds=()
order=()
while IFS=$'\t' read -r name cmd; do
	cmds[$name]=$cmd
	order+=("$name")
done < <(entries)
if [ $# -gt 0 ]; then
	for name in "$@"; do
		[ -n "${cmds[$name]:-}" ] || { echo "commands: no $tier line for '$name' in $list" >&2; exit 1; }
	done
	order=("$@")
fi
[ ${#order[@]} -gt 0 ] || { echo "1..0 # SKIP no commands in $list"; exit 4; }

echo "TAP version 13"
echo "1..$((2 * ${#order[@]}))"
echo "# commands: ${order[*]} ($tier, seed $GPUVIRT_SEED)"
n=0
failed=0
for name in "${order[@]}"; do
	n=$((n + 1))
	s=$(date +%s)
	echo "# $name: ${cmds[$name]}"
	bash -c "${cmds[$name]}" </dev/null 2>&1 | sed -u 's/^/    /'
	rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 0 ]; then
		echo "ok $n $name # $(($(date +%s) - s)) s"
	elif [ "$rc" -eq 4 ]; then
		echo "ok $n $name # SKIP exit 4"
	else
		echo "not ok $n $name # exit $rc after $(($(date +%s) - s)) s"
		failed=$((failed + 1))
	fi

	n=$((n + 1))
	selftests/debug/after-test.sh --ktap "$n" "$name" || failed=$((failed + 1))
done
[ $failed -eq 0 ]
