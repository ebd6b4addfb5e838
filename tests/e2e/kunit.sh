# SPDX-License-Identifier: GPL-2.0-or-later
#
# Scenario (test kernel, one guest, no network): the modules load and
# unload cleanly, and every KUnit suite under tests/kunit passes.

b=$(rtrs_build_dir)
for m in rtrs-core rtrs-server rtrs-client; do
	check "load $m" insmod "$b/$m.ko"
done
for m in rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done

# The suites may call into rtrs-core: load it under them.
modprobe -a ib_core rdma_cm 2>/dev/null
insmod "$b/rtrs-core.ko"
kunit_run "$b"/tests/kunit/*.ko
check "unload rtrs-core after the suites" rmmod rtrs-core
