#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Print the lines of a guest console log that report a kernel problem:
# WARNING, BUG, KASAN, UBSAN, lockdep, kmemleak, hung or stalled tasks,
# oopses and panics.  Prints nothing for a clean log.
grep -a -E \
	-e 'WARNING:' \
	-e '(^|[^A-Z_])BUG[: ]' \
	-e 'KASAN' \
	-e 'UBSAN' \
	-e 'general protection fault' \
	-e 'Kernel panic' \
	-e 'Oops' \
	-e 'Call Trace:' \
	-e 'INFO: task .* blocked for more than' \
	-e 'INFO: trying to register non-static key' \
	-e 'possible (circular|recursive) locking' \
	-e 'inconsistent lock state' \
	-e 'suspicious RCU usage' \
	-e 'DEBUG_LOCKS_WARN_ON' \
	-e 'detected stalls' \
	-e 'soft lockup' \
	-e 'unreferenced object' \
	-e 'suspected memory leak' \
	"$1" | grep -a -v -e '^rtrs-guest:' -e '^ok: ' -e 'KASAN.*enabled\|KernelAddressSanitizer initialized' | head -20
