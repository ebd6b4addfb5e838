# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The verified IO of tests/user/rtrs-test-clt, sourced by scenarios that
# run it: its counters and whether it goes on.

PARAMS=/sys/module/rtrs_test_clt/parameters

# counter NAME: ios, io_errors or verify_errors so far.
counter() { cat "$PARAMS/$1"; }

# ios_grow SECONDS: verified write-read pairs keep completing.  The sleep
# is the window over which they must, not a wait for anything.
ios_grow() {
	local a b
	a=$(counter ios)
	sleep "$1"
	b=$(counter ios)
	echo "ios $a -> $b"
	[ "$b" -gt "$a" ]
}
