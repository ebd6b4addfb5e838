# SPDX-License-Identifier: GPL-2.0-or-later
#
# Scenario (test kernel, one guest): verified IO of tests/user/rtrs-test-clt
# over one path (a veth pair, rxe on both ends) while netem drops packets
# both ways, so that rxe retransmits all the time.  rxe runs the memory
# registrations posted after a retransmitted request again
# (rtrs_replays_local_ops()); the path must not stall, fail or lose a
# request over it.
#
# LOSSY_SECS sets how long the loss lasts, LOSSY_PCT how much is lost.

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/test-clt-lib.sh"

SECS=${LOSSY_SECS:-60}
PCT=${LOSSY_PCT:-2}
exec 3>&1
figure() { echo "figure: $*" >&3; }
P1="ip:$PAIR_A@ip:$PAIR_B"
CS=/sys/class/rtrs-client/rtrs-test-clt

pstat() { cat "$CS/paths/$P1/stats/$1"; }
# The requester's retries, both ends of the pair.
retries() {
	echo $(( $(rxe_counter rxe0 completer_retry_err) +
		 $(rxe_counter rxe1 completer_retry_err) ))
}

# under_loss: IO goes on the whole time, every 10 s, with retransmissions.
under_loss() {
	local t r0 ios0
	r0=$(retries)
	ios0=$(counter ios)
	for t in $(seq 10 10 "$SECS"); do
		ios_grow 10 || { echo "stalled after $t s"; return 1; }
	done
	figure "$PCT % loss for $SECS s: $(( $(counter ios) - ios0 )) verified" \
		"pairs, $(( $(retries) - r0 )) rxe retries"
	[ "$(retries)" -gt "$r0" ] || { echo "no retransmission happened"; return 1; }
}

# The client's and the server's tracepoints, on and off; off, the trace
# so far goes to RTRS_TMP/trace.
TRACING=/sys/kernel/tracing
trace_on() {
	[ -d "$TRACING/events" ] || mount -t tracefs nodev "$TRACING" || return 1
	echo >"$TRACING/trace" &&
	echo 1 >"$TRACING/events/rtrs_clt/enable" &&
	echo 1 >"$TRACING/events/rtrs_srv/enable"
}

trace_off() {
	echo 0 >"$TRACING/events/rtrs_clt/enable" &&
	echo 0 >"$TRACING/events/rtrs_srv/enable" &&
	cat "$TRACING/trace" >"$RTRS_TMP/trace" && echo >"$TRACING/trace" &&
	head -n 60 "$RTRS_TMP/trace" >"$RESULTS/trace-head"
}

# traced EVENT: EVENT is in the trace, and how often.
traced() {
	local n
	n=$(grep -c " $1: " "$RTRS_TMP/trace")
	echo "$1: $n"
	[ "$n" -gt 0 ]
}

kernel_log_quiet() {
	! dmesg | grep -E "stopped moving|not free|failed: |closing the path"
}

b=$(rtrs_build_dir)
check "veth pair with rxe on both ends" topology_pair
on_new_pair 1 "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
modprobe -a ib_core rdma_cm sch_netem
check "load rtrs-core" insmod "$b/rtrs-core.ko"
check "load rtrs-server" insmod "$b/rtrs-server.ko" sess_queue_depth=128
for m in rtrs-client tests/user/rtrs-test-srv; do
	check "load $(basename $m)" insmod "$b/$m.ko"
done
check "tracepoints on" trace_on
check "open a session over one path" \
	insmod "$b/tests/user/rtrs-test-clt.ko" paths="$P1" threads=4
check "start verified IO" sh -c "echo 1 > $PARAMS/run"
check "IO flows" ios_grow 3
check "tracepoints off" trace_off
for ev in rtrs_clt_path_state rtrs_clt_submit rtrs_clt_complete \
	  rtrs_srv_path_state rtrs_srv_request rtrs_srv_answer; do
	check "trace shows $ev" traced "$ev"
done
check "trace shows the path come up" grep -q \
	"rtrs_clt_path_state: rtrs-test-clt: path to $PAIR_B:1234: connecting -> connected" \
	"$RTRS_TMP/trace"

for dev in veth0 veth1; do
	check "$PCT % loss on $dev" tc qdisc add dev "$dev" root netem loss "$PCT%"
done
check "IO goes on under loss" under_loss
for dev in veth0 veth1; do
	check "no loss on $dev" tc qdisc del dev "$dev" root
done
check "IO flows after the loss" ios_grow 3
check "stop IO" sh -c "echo 0 > $PARAMS/run"

check "no IO error" test "$(counter io_errors)" -eq 0
check "no read ever differed from its write" test "$(counter verify_errors)" -eq 0
check "path never failed" test "$(pstat reconnects)$(pstat reconnect_fails)" = 00
check "no stall, failure or refused registration in the kernel log" \
	kernel_log_quiet
figure "final: ios $(counter ios) io_errors $(counter io_errors)"

for m in rtrs-test-clt rtrs-test-srv rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done
