# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, one guest): real sessions of our client against
# our server over two rxe devices on a veth pair: the rtrs-session KUnit
# suite against tests/user/rtrs-test-srv.ko, then packed responses with
# tests/user/rtrs-test-clt.ko.  First the rtrs-srv-op-take suite, which
# needs this guest's two CPUs.

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/test-clt-lib.sh"

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

# A request's handle taken while the response before it is being posted
# on the other CPU: the case skips itself on one CPU, which must not pass
# here unseen.
kunit_run "$RTRS_TOP/tests/kunit/rtrs-srv-op-test.c"
check "rtrs-srv-op-take ran every case, on $(nproc) CPUs" \
	not grep -q '# SKIP' "$RESULTS/kunit/rtrs-srv-op-take.ktap"

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

# packed_io TAG: a session of eight threads of verified 4 KiB IO (inline
# WRITEs, READ_BUFs), 8 in flight: every read matches its write, and the
# responses of WRITEs that leave together come packed.  TAG ends the name
# of each check.
packed_io() {
	check "open a session, 8 threads of 4 KiB$1" \
		insmod "$b/tests/user/rtrs-test-clt.ko" \
		"paths=ip:$PAIR_A@ip:$PAIR_B" threads=8 io_size=4096
	check "start verified IO$1" sh -c "echo 1 > $PARAMS/run"
	check "verified IO goes on$1" ios_grow 5
	check "stop IO$1" sh -c "echo 0 > $PARAMS/run"
	check "no IO error, no read differed$1" \
		test "$(counter io_errors) $(counter verify_errors)" = "0 0"
	check "the WRITEs' responses came packed$1" \
		tstat_above packed_rsps 100
	check "the READs' SENDs went unsignaled$1" \
		tstat_above unsig_sends 100
	figure "packed$1: ios $(counter ios), responses packed $(tstat packed_rsps), unsignaled sends $(tstat unsig_sends), steered $(tstat steered)"
	check "close the session$1" rmmod rtrs-test-clt
}

# Packed responses (2.1): first with the test server answering 8
# requests at a time, as a disk that completes a batch.
check "test server answers 8 requests at a time" \
	sh -c "echo 8 > $TSP/gather"
packed_io ""
check "test server answers at once again" sh -c "echo 0 > $TSP/gather"
# Then with it answering each request from within its arrival, as
# rtrs-bench's server and rnbd over a fast disk do: the server sees the
# next request only once it has answered this one, and still packs the
# answers it makes while a pack is in flight.
packed_io ", answered at once"

# A module under a user cannot go: the test server holds an open server
# context, and the transport modules hold the core.
check "rtrs-server stays while its user is loaded" not rmmod rtrs-server
check "rtrs-core stays under client and server" not rmmod rtrs-core
check "test server still listens" listening_on 1234

for m in rtrs-test-srv rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done
