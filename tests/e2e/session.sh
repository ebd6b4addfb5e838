# SPDX-License-Identifier: GPL-2.0-or-later
#
# Scenario (test kernel, one guest): real sessions of our client against
# our server over two rxe devices on a veth pair: the rtrs-session KUnit
# suite against tests/user/rtrs-test-srv.ko.

. "$RTRS_TOP/tests/e2e/topology.sh"

# listening_on PORT: an RDMA CM id listens on PORT.
listening_on() {
	rdma res show cm_id | grep -q "LISTEN.*:$1\b"
}

b=$(rtrs_build_dir)
check "veth pair with rxe on both ends" topology_pair
# The suite measures the transport, not first contact: make sure the pair
# carries RDMA CM traffic (GIDs, neighbours) before its first open.
check "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
modprobe -a ib_core rdma_cm
for m in rtrs-core rtrs-server rtrs-client tests/user/rtrs-test-srv; do
	check "load $(basename $m)" insmod "$b/$m.ko"
done

# Count, by kprobes, the answers the server posts, the completions of
# answers it takes and of its watchdog's probes: only one answer in
# rsp_interval (up to 16) asks for a completion, so the suite's hundreds
# of answers must bring far fewer.
TRACING=/sys/kernel/tracing
kprobes_on() {
	echo 'p:rtrs_answers rtrs_server:rtrs_srv_resp_rdma' >>"$TRACING/kprobe_events" &&
	echo 'p:rtrs_answer_cqes rtrs_server:rtrs_srv_rsp_done' >>"$TRACING/kprobe_events" &&
	echo 'p:rtrs_probes rtrs_server:rtrs_srv_probe_done' >>"$TRACING/kprobe_events" &&
	echo 1 >"$TRACING/events/kprobes/enable"
}
hits() { awk -v e="$1" '$1 == e { print $2 }' "$TRACING/kprobe_profile"; }
# answers_batched: at least 200 answers, and completions for at most a
# quarter of them (flushes at close come on top of the signaled ones).
answers_batched() {
	local a c
	a=$(hits rtrs_answers) c=$(hits rtrs_answer_cqes)
	echo "answers $a, answer completions $c"
	[ "${a:-0}" -ge 200 ] && [ "${c:-0}" -le $(( a / 4 )) ]
}
check "kprobes on the server's answers" kprobes_on

kunit_run "$b/tests/kunit/rtrs-session-test.ko"

check "one answer completion for many answers" answers_batched
# lone_answer_then_quiet leaves an unsignaled answer on a quiet path: the
# server's watchdog must have sent a probe behind it, which completed,
# and closed no path for it.
probed() {
	echo "probes completed: $(hits rtrs_probes)"
	[ "$(hits rtrs_probes)" -ge 1 ] && ! dmesg | grep -q "stopped moving"
}
check "the server probes behind unsignaled answers" probed
echo 0 >"$TRACING/events/kprobes/enable"
echo >"$TRACING/kprobe_events"

# A module under a user cannot go: the test server holds an open server
# context, and the transport modules hold the core.
check "rtrs-server stays while its user is loaded" not rmmod rtrs-server
check "rtrs-core stays under client and server" not rmmod rtrs-core
check "test server still listens" listening_on 1234

for m in rtrs-test-srv rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done
