# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The command line and the cache directory shared by the project's cached
# builds (scripts/debug-kernel.sh, scripts/trixie-root.sh). Sourced, after
# the caller has set CACHE_WHO, its name in messages. A cache directory is
# complete when it holds "done", written last; a lock file per directory,
# in the directory's parent, makes concurrent callers build it once.

die() {
	echo "$CACHE_WHO: $*" >&2
	exit 1
}

# cache_mode [--with-run] ARG: set mode from the first argument: build (none),
# print, status, or run (only --with-run takes it); --help prints the
# caller's header comment and exits.
cache_mode() {
	local with_run=0
	[ "$1" = --with-run ] && { with_run=1; shift; }
	mode=build
	case ${1:-} in
	'') ;;
	--print) mode=print ;;
	--status) mode=status ;;
	--run) [ $with_run = 1 ] || die "unknown argument '$1' (see --help)"; mode=run ;;
	-h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
}

# cache_answer DIR SHOWN: answer --print and --status for the cache
# directory DIR, naming it SHOWN, and exit; in the other modes, return.
cache_answer() {
	case $mode in
	print) echo "$2"; exit 0 ;;
	status)
		if [ -e "$1/done" ]; then echo "cached $2"; exit 0; fi
		echo "missing $2"
		exit 1 ;;
	esac
}

# cache_lock DIR: hold DIR's build lock (fd 8) for the rest of the caller,
# waiting while another caller builds it.
cache_lock() {
	local parent=${1%/*} key=${1##*/}
	mkdir -p "$parent"
	exec 8>"$parent/.lock-$key"
	if ! flock -n 8; then
		echo "$CACHE_WHO: another build of $key is running; waiting" >&2
		flock 8
	fi
}
