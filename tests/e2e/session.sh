# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, one guest): real sessions of our client against
# our server over two rxe devices on a veth pair: the rtrs-session KUnit
# suite against tests/user/rtrs-test-srv.ko.

. "$RTRS_TOP/tests/e2e/topology.sh"

# listening_on PORT: an RDMA CM id listens on PORT.
listening_on() {
	rdma res show cm_id | grep -q "LISTEN.*:$1\b"
}

# keep_ktap SUITE TAG: keep the results of SUITE's last run as SUITE-TAG.
keep_ktap() {
	mv "$RESULTS/kunit/$1.ktap" "$RESULTS/kunit/$1-$2.ktap"
}

b=$(rtrs_build_dir)
check "veth pair with rxe on both ends" topology_pair
# The suite measures the transport, not first contact: make sure the pair
# carries RDMA CM traffic (GIDs, neighbours) before its first open.
on_new_pair 1 "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
modprobe -a ib_core rdma_cm
for m in rtrs-core rtrs-server rtrs-client tests/user/rtrs-test-srv; do
	check "load $(basename $m)" insmod "$b/$m.ko"
done

# The suite twice: sessions of protocol 2.1, the default between our
# client and server, then of 2.0, which the server agrees to when told so.
kunit_run "$RTRS_TOP/tests/kunit/rtrs-session-test.c"
keep_ktap rtrs-session 2.1
check "server agrees to 2.0 only" \
	sh -c "echo 0 > /sys/module/rtrs_server/parameters/max_proto_minor"
kunit_run "$RTRS_TOP/tests/kunit/rtrs-session-test.c"
keep_ktap rtrs-session 2.0
check "server agrees to 2.1 again" \
	sh -c "echo 1 > /sys/module/rtrs_server/parameters/max_proto_minor"

# A module under a user cannot go: the test server holds an open server
# context, and the transport modules hold the core.
check "rtrs-server stays while its user is loaded" not rmmod rtrs-server
check "rtrs-core stays under client and server" not rmmod rtrs-core
check "test server still listens" listening_on 1234

for m in rtrs-test-srv rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done
