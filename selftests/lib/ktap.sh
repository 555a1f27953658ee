# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# KTAP output for shell tests: source it, call ktap_plan N, then
# ktap_result STATUS DESC, ktap_check DESC CMD... or ktap_skip DESC REASON
# for each test, and finish with ktap_finish, which exits 0 when no test
# failed and 1 otherwise.

KTAP_N=0
KTAP_FAIL=0
KTAP_SKIP=0

ktap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

# ktap_result STATUS DESC: STATUS 0 is a pass.
ktap_result() {
	KTAP_N=$((KTAP_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $KTAP_N $2"
	else
		echo "not ok $KTAP_N $2"
		KTAP_FAIL=$((KTAP_FAIL + 1))
	fi
}

# ktap_check DESC CMD...: passes when CMD succeeds.
ktap_check() {
	local desc=$1
	shift
	"$@"
	ktap_result $? "$desc"
}

# ktap_skip DESC REASON: a test that did not run, counted as a skip.
ktap_skip() {
	KTAP_N=$((KTAP_N + 1))
	KTAP_SKIP=$((KTAP_SKIP + 1))
	echo "ok $KTAP_N $1 # SKIP $2"
}

ktap_diag() {
	printf '%s\n' "$@" | sed 's/^/# /'
}

ktap_finish() {
	[ "$KTAP_FAIL" -eq 0 ] && exit 0
	exit 1
}
