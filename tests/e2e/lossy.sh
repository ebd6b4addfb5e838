# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, one guest): verified IO of tests/user/rtrs-test-clt
# over one path (a veth pair, rxe on both ends) while netem drops packets
# both ways, so that rxe retransmits all the time.  rxe runs the memory
# registrations posted after a retransmitted request again
# (rtrs_replays_local_ops()); the path must not stall, fail or lose a
# request over it.
#
# The client's and the server's tracepoints are on while the path comes
# up and again while the session closes, whose flushed receives are
# con_error events on both ends: the trace is read back both through
# trace and trace_pipe, which must not find a string an event prints
# outside of it (trace_check_vprintf() warns, "[UNSAFE-MEMORY]").
#
# LOSSY_SECS sets how long the loss lasts, LOSSY_PCT how much is lost.

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/test-clt-lib.sh"

SECS=${LOSSY_SECS:-20}
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
# so far goes to RTRS_TMP/trace.  The events are enabled once, by the
# first trace_on, and disabled once, by events_off at the end: on and
# off in between only start and stop the recording (tracing_on), as each
# enable or disable rewrites the kernel's text at every tracepoint, on
# every CPU.  A guest of this scenario once stopped, both vCPUs busy and
# its console silent, in the read after such a disable; another time its
# disable never returned: one vCPU waited in text_poke_bp_batch() for the
# other, which kept hitting the int3 of a site in __schedule().  That
# site is sched_switch's, which the first enabled event hooks and the
# last disabled one unhooks, to record task names (option record-cmd).
# The option is off here before any event is enabled, so that the
# scheduler's text is never rewritten: the trace shows pids, not names.
TRACING=/sys/kernel/tracing
trace_on() {
	[ -d "$TRACING/events" ] || mount -t tracefs nodev "$TRACING" || return 1
	echo 0 >"$TRACING/tracing_on" && echo >"$TRACING/trace" || return 1
	if [ "$(cat "$TRACING/events/rtrs_clt/enable")" != 1 ]; then
		echo 0 >"$TRACING/options/record-cmd" || return 1
		echo 1 >"$TRACING/events/rtrs_clt/enable" &&
			echo 1 >"$TRACING/events/rtrs_srv/enable" || return 1
	fi
	echo 1 >"$TRACING/tracing_on"
}

trace_off() {
	echo 0 >"$TRACING/tracing_on" &&
	cat "$TRACING/trace" >"$RTRS_TMP/trace" && echo >"$TRACING/trace" &&
	head -n 60 "$RTRS_TMP/trace" >"$RESULTS/trace-head"
}

# events_off: the events disabled, recording on again as it was.
events_off() {
	echo 0 >"$TRACING/events/rtrs_clt/enable" &&
	echo 0 >"$TRACING/events/rtrs_srv/enable" &&
	echo 1 >"$TRACING/tracing_on"
}

# trace_off_piped: as trace_off, but before the buffer is cleared, what
# trace_pipe gives goes to RTRS_TMP/trace_pipe (read without blocking:
# EAGAIN ends the read once it is empty), and the first con_error events
# of each side to RESULTS/trace-errors.
trace_off_piped() {
	echo 0 >"$TRACING/tracing_on" &&
	cat "$TRACING/trace" >"$RTRS_TMP/trace" || return 1
	timeout -k 5 30 dd if="$TRACING/trace_pipe" of="$RTRS_TMP/trace_pipe" \
		bs=4096 iflag=nonblock status=none 2>/dev/null
	[ $? -ne 124 ] || { echo "trace_pipe blocked"; return 1; }
	echo >"$TRACING/trace" &&
	{ grep -m 10 " rtrs_clt_con_error: " "$RTRS_TMP/trace"
	  grep -m 10 " rtrs_srv_con_error: " "$RTRS_TMP/trace"; } >"$RESULTS/trace-errors"
	figure "close: $(grep -c "_con_error: " "$RTRS_TMP/trace") con_error events" \
		"traced, $(wc -l <"$RTRS_TMP/trace_pipe") lines from trace_pipe"
}

# traced EVENT [FILE]: EVENT is in FILE (RTRS_TMP/trace), and how often.
traced() {
	local n
	n=$(grep -c " $1: " "${2:-$RTRS_TMP/trace}")
	echo "$1: $n"
	[ "$n" -gt 0 ]
}

# trace_dirs: the verified IO's writes and reads are both in the trace,
# at the client and at the server.
trace_dirs() {
	local ev dir
	for ev in "rtrs_clt_submit: .*:" "rtrs_srv_request: .*:"; do
		for dir in READ WRITE; do
			grep -q " $ev $dir id " "$RTRS_TMP/trace" ||
				{ echo "no $dir in ${ev%%:*}"; return 1; }
		done
	done
}

# unsafe_free: the trace read back printed no string from outside its
# event, and the kernel did not warn about one.
unsafe_free() {
	if grep -q "UNSAFE-MEMORY" "$RTRS_TMP/trace" "$RTRS_TMP/trace_pipe"; then
		grep -h -m 1 "UNSAFE-MEMORY" "$RTRS_TMP/trace" "$RTRS_TMP/trace_pipe"
		return 1
	fi
	! dmesg | grep "WARNING: .* trace_check_vprintf"
}

# server_closed: the server has no session left.
server_closed() {
	[ -z "$(ls /sys/class/rtrs-server/ 2>/dev/null)" ]
}

# why_closed: the kernel's first lines since the scenario began on a
# failing path or request, the first of them last, since a failed check
# shows its last line of output.  Nothing when there is none.
LOG0=$(dmesg | wc -l)
why_closed() {
	dmesg | tail -n +$((LOG0 + 1)) | grep -E "stopped moving|not free|failed|closing|heartbeats|QP event|disconnect|rejected|error" |
		head -n 5 | awk '{ l[NR] = $0 } END { for (i = NR; i > 0; i--) print l[i] }'
}

kernel_log_quiet() {
	local why
	why=$(why_closed)
	[ -z "$why" ] || { echo "$why"; return 1; }
}

# path_intact: the path never failed; else its counts, and why.
path_intact() {
	local n
	n="reconnects $(pstat reconnects), failed reconnects $(pstat reconnect_fails)"
	[ "$n" != "reconnects 0, failed reconnects 0" ] || return 0
	echo "$n"
	why_closed
	return 1
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
check "trace shows READ and WRITE requests" trace_dirs
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
check "path never failed" path_intact
check "no stall, failure or refused registration in the kernel log" \
	kernel_log_quiet
figure "final: ios $(counter ios) io_errors $(counter io_errors)"

# Read back before a module of the events is unloaded: that empties the
# trace buffer.
check "tracepoints on for the close" trace_on
check "unload rtrs-test-clt" rmmod rtrs-test-clt
check "server closed the session" wait_for 30 server_closed
check "tracepoints off, trace and trace_pipe read" trace_off_piped
for ev in rtrs_clt_con_error rtrs_srv_con_error; do
	check "trace shows $ev" traced "$ev"
	check "trace_pipe shows $ev" traced "$ev" "$RTRS_TMP/trace_pipe"
done
check "trace printed only strings it holds" unsafe_free
check "tracepoints disabled" events_off

for m in rtrs-test-srv rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done
