# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The verified IO of tests/user/rtrs-test-clt, sourced by scenarios that
# run it: its counters and whether it goes on, the stats and paths of its
# session, and what tests/user/rtrs-test-srv holds back.

PARAMS=/sys/module/rtrs_test_clt/parameters
# The test client's session in the client's sysfs, and the parameters of
# the test server.
TCS=/sys/class/rtrs-client/rtrs-test-clt
TSP=/sys/module/rtrs_test_srv/parameters

# counter NAME: ios, io_errors or verify_errors so far.
counter() { cat "$PARAMS/$1"; }

# ios_grow SECONDS: verified write-read pairs keep completing.  The sleep
# is the window over which they must, not a wait for anything.
ios_grow() {
	local a b
	a=$(counter ios)
	nap "$1"
	b=$(counter ios)
	echo "ios $a -> $b"
	[ "$b" -gt "$a" ]
}

# tstat STAT: STAT summed over the paths of the test client's session.
tstat() {
	cat "$TCS"/paths/*/stats/"$1" | awk '{ n += $1 } END { print n + 0 }'
}

# tstat_above STAT N: tstat STAT is above N, read when called.
tstat_above() {
	[ "$(tstat "$1")" -gt "$2" ]
}

# tpaths_up PATH...: each PATH of the test client's session is connected.
tpaths_up() {
	local p
	for p in "$@"; do
		[ "$(cat "$TCS/paths/$p/state" 2>/dev/null)" = connected ] || return 1
	done
}

# quarantine_over PATH...: no chunk of the test client's session is in
# quarantine, and each PATH is connected: the failed path is back
# (Documentation/rtrs.rst, "Failover and chunks").
quarantine_over() {
	[ "$(tstat quarantined)" -eq 0 ] && tpaths_up "$@"
}

# held_none: the test server holds no LATE write back any more.
held_none() {
	[ "$(cat "$TSP/held_now")" -eq 0 ]
}
