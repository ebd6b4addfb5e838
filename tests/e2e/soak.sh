# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, one guest): a bounded soak.  rnbd from Linux 6.1
# maps a brd device over an rtrs session of two paths, each on its own
# veth pair with rxe on both ends, and verified IO runs on it while a
# driver, at random intervals, does one of: flap a link, delete and re-add
# an rxe device, remove and re-add a path through the client's sysfs,
# disconnect a path from the server's sysfs, reload the server modules.
# The random choices come from a seed (SOAK_SEED, else the clock), printed
# so that a run can be repeated; SOAK_SECONDS sets the length, and
# SOAK_EVENTS (a list such as "path rxe", default all five kinds) which
# kinds of event the driver picks from.
#
# The IO (soak-io.c, built here) writes slots of up to 64 KiB with
# O_DIRECT from several threads and holds, per slot, the generation and
# length of its last write that pwrite() acknowledged in full; half of
# the writes are read back at once.  At the end every slot whose last
# write was acknowledged is read back and compared, so every acknowledged
# write not overwritten by a later acknowledged one is checked; a failed
# write makes its slot unknown until it is written again.
#
# IO errors are allowed only while no path is connected, or while
# rnbd-client has not yet reopened its device after the session came back
# (it fails IO itself then, before our transport sees it): a monitor
# logs every change of the path states and of the rnbd device state with
# its boot time, and each error's boot time must fall into such a window
# (with 2 s of slack each side for the monitor's sampling).  The sum of
# the per-path statistics must match the IO that soak-io counted, within
# the requests a failure moves between paths.  At the end the device is
# unmapped, the modules unloaded, and kmemleak must find nothing
# (guest-init.sh's scan after the script).
#
# Logs in the results: soak/events (what the driver did, when),
# soak/states (path and device states), soak/io (errors and summary),
# soak/dmesg (the kernel log at the end).

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/rnbd-lib.sh"

exec 3>&1
figure() { echo "figure: $*" >&3; }

SOAK=${SOAK_SECONDS:-1200}
SEED=${SOAK_SEED:-$(( $(date +%s) % 32768 ))}
SOAK_EVENTS=${SOAK_EVENTS:-flap rxe path srvdisc reload}
read -r -a KINDS <<<"${SOAK_EVENTS//,/ }"
# Four IO threads at nice 10: under TCG they and rxe's packet work fill
# both vCPUs, and the driver's commands (path set-up allocates and maps
# thousands of buffers) took minutes with eight threads at nice 0.  The
# soak checks what the events do to IO, not how much IO there is.
THREADS=4
SLOTS=32
SESS=soak
P=("ip:$PAIR_A@ip:$PAIR_B" "ip:198.51.100.1@ip:198.51.100.2")
CS=/sys/class/rtrs-client/$SESS
SS=/sys/class/rtrs-server/$SESS
L=$RESULTS/soak
STOP=$RTRS_TMP/soak-stop
IO=$RTRS_TMP/soak-io
b=$(rtrs_build_dir)
mkdir -p "$L"
: >"$L/events"

uptime_s() {
	local up _
	read -r up _ </proc/uptime
	echo "$up"
}

log_event() {
	echo "$(uptime_s) $*" >>"$L/events"
}

pstate() {
	local s=absent
	[ -r "$CS/paths/$1/state" ] && read -r s <"$CS/paths/$1/state"
	echo "$s"
}

both_up() {
	local s
	[ "$(pstate "${P[0]}")" = connected ] &&
		[ "$(pstate "${P[1]}")" = connected ] || return 1
	read -r s <"/sys/block/$DEV/rnbd/state" && [ "$s" = open ]
}

# monitor: a line "<boot time> <path 1> <path 2> <rnbd device>" in
# soak/states for each change of a state, sampled every 0.2 s.
monitor() {
	local last='' cur d
	while [ ! -e "$STOP.monitor" ]; do
		d=gone
		[ -r "/sys/block/$DEV/rnbd/state" ] && read -r d <"/sys/block/$DEV/rnbd/state"
		cur="$(pstate "${P[0]}") $(pstate "${P[1]}") $d"
		if [ "$cur" != "$last" ]; then
			echo "$(uptime_s) $cur" >>"$L/states"
			last=$cur
		fi
		sleep 0.2
	done
}

# ---- the statistics of paths that go away --------------------------------

# Counters of removed paths, read before each removal.
declare -A GONE=([writes]=0 [write_bytes]=0 [reads]=0 [read_bytes]=0 [failovers]=0)

# stat_sum NAME: NAME over the paths there now and those removed.
stat_sum() {
	local n=${GONE[$1]} v p
	for p in "${P[@]}"; do
		read -r v <"$CS/paths/$p/stats/$1" && n=$(( n + v ))
	done
	echo "$n"
}

# ---- the events -----------------------------------------------------------

declare -A COUNT=([flap]=0 [rxe]=0 [path]=0 [srvdisc]=0 [reload]=0 [nudge]=0 [norecover]=0 [busy]=0)
NETDEV=(veth0 veth2)
RXE=(rxe0 rxe1 rxe2 rxe3)

# write_file FILE VALUE: one write to a sysfs file, its error dropped.
write_file() {
	echo "$2" 2>/dev/null >"$1"
}

# guard CMD...: CMD, given 120 s.  One running over 10 s is logged, and
# at 30 s the stacks as below go to soak/slow.  A command stuck longer
# leaves STUCK set, and the stacks of every task in D state and of the
# command in soak/stuck; the driver stops then (the next event would
# hang too).
STUCK=
guard() {
	local pid t0=$SECONDS rc dumped=
	"$@" &
	pid=$!
	while [ $(( SECONDS - t0 )) -lt 120 ]; do
		if [ -z "$dumped" ] && [ $(( SECONDS - t0 )) -ge 30 ]; then
			dumped=1
			echo "== $(uptime_s) $* running for 30 s" >>"$L/slow"
			dump_stuck "$pid" >>"$L/slow" 2>&1
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			rc=$?
			[ $(( SECONDS - t0 )) -lt 10 ] ||
				log_event "slow: $* took $(( SECONDS - t0 )) s, rc $rc"
			return "$rc"
		fi
		sleep 0.5
	done
	STUCK="$*"
	log_event "stuck: $*"
	dump_stuck "$pid" >>"$L/stuck" 2>&1
	echo w >/proc/sysrq-trigger
	return 1
}

# dump_stuck PID: the kernel stacks of PID, its children and every task
# in D state.
dump_stuck() {
	local d s state ppid
	for d in /proc/[0-9]*; do
		read -r s 2>/dev/null <"$d/stat" || continue
		s=${s##*) }
		state=${s%% *}
		s=${s#* }
		ppid=${s%% *}
		[ "$state" = D ] || [ "$ppid" = "$1" ] || [ "${d#/proc/}" = "$1" ] ||
			continue
		echo "== ${d#/proc/} $(cat "$d/comm") state $state: $(tr '\0' ' ' <"$d/cmdline")"
		cat "$d/stack"
	done
}

# ev_flap I: the client side link of path I goes down for 1 to 5 s; its
# rxe device is created anew after (see recreate_rxe).
ev_flap() {
	local d=${NETDEV[$1]} r=rxe$(( $1 * 2 ))
	log_event "flap ${P[$1]} $d down"
	guard ip link set "$d" down
	sleep $(( RANDOM % 5 + 1 ))
	guard link_up "$d" && guard recreate_rxe "$r" "$d"
	log_event "flap $d up, $r created anew: $?"
}

# ev_rxe: one of the four rxe devices, client or server side, deleted and
# added back after 1 to 3 s.
ev_rxe() {
	local i=$(( RANDOM % 4 ))
	log_event "rxe delete ${RXE[$i]}"
	guard rdma link delete "${RXE[$i]}" || return
	sleep $(( RANDOM % 3 + 1 ))
	guard rxe_add "${RXE[$i]}" "veth$i"
	log_event "rxe ${RXE[$i]} added: $?"
}

# stats_line P: the counters of path P as "name value ..." on one line.
stats_line() {
	local k v line=
	for k in "${!GONE[@]}"; do
		read -r v 2>/dev/null <"$CS/paths/$1/stats/$k" || return 1
		line+="$k $v "
	done
	echo "$line"
}

# remove_counting P: remove path P, and keep in $RTRS_TMP/gone the last
# reading of its counters before its directory went.  The path takes
# requests until its close begins, which under load can be seconds
# after the write: a reading taken before the write would miss those.
remove_counting() {
	local pid line
	stats_line "$1" >"$RTRS_TMP/gone"
	write_file "$CS/paths/$1/remove_path" 1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		line=$(stats_line "$1") && echo "$line" >"$RTRS_TMP/gone"
		sleep 0.2
	done
	wait "$pid"
}

# ev_path I: path I removed through remove_path, added again after 1 to
# 3 s through add_path (retried until it connects).  Its counters are
# kept; a refusal (the last path of a session stays) drops them.
ev_path() {
	local p=${P[$1]} i k kv
	local -A was
	[ -d "$CS/paths/$p" ] || return
	log_event "path remove $p"
	if ! guard remove_counting "$p"; then
		[ -z "$STUCK" ] || return
		COUNT[busy]=$(( COUNT[busy] + 1 ))
		log_event "path remove $p refused"
		return
	fi
	read -r -a kv <"$RTRS_TMP/gone"
	set -- "${kv[@]}"
	while [ $# -ge 2 ]; do
		was[$1]=$2
		shift 2
	done
	for k in "${!GONE[@]}"; do
		GONE[$k]=$(( GONE[$k] + was[$k] ))
	done
	sleep $(( RANDOM % 3 + 1 ))
	for i in $(seq 30); do
		guard write_file "$CS/add_path" "$p" && break
		[ -z "$STUCK" ] || return
		sleep 2
	done
	log_event "path add $p: attempt $i"
}

# ev_srvdisc I: the server disconnects path I.
ev_srvdisc() {
	log_event "srvdisc ${P[$1]}"
	guard write_file "$SS/paths/${P[$1]}/disconnect" 1
	log_event "srvdisc done: $?"
}

# ev_reload: rnbd-server and rtrs-server unloaded and loaded again; the
# client's reconnect opens brd again on the new server.
ev_reload() {
	log_event "reload unload rnbd-server rtrs-server"
	guard rmmod rnbd-server && guard rmmod rtrs-server
	log_event "reload unloaded: $?"
	[ -z "$STUCK" ] || return
	sleep $(( RANDOM % 3 + 1 ))
	guard insmod "$b/rtrs-server.ko" && guard insmod "$b/rnbd/rnbd-server.ko"
	log_event "reload loaded: $?"
}

# recover SECONDS: wait until both paths are connected and the device is
# open again; rnbd reconnects 30 s after a failure, so after 45 s the
# paths still down are told to reconnect now (or added again, when an
# add_path never got through).
recover() {
	local t0=$SECONDS p nudged=
	while ! both_up; do
		if [ $(( SECONDS - t0 )) -ge "$1" ]; then
			COUNT[norecover]=$(( COUNT[norecover] + 1 ))
			log_event "not recovered after $1 s: $(pstate "${P[0]}") $(pstate "${P[1]}")"
			return 1
		fi
		if [ -z "$nudged" ] && [ $(( SECONDS - t0 )) -ge 45 ]; then
			nudged=1
			for p in "${P[@]}"; do
				[ "$(pstate "$p")" = connected ] && continue
				COUNT[nudge]=$(( COUNT[nudge] + 1 ))
				log_event "nudge $p ($(pstate "$p"))"
				if [ -d "$CS/paths/$p" ]; then
					guard write_file "$CS/paths/$p/reconnect" 1
				else
					guard write_file "$CS/add_path" "$p"
				fi
				[ -z "$STUCK" ] || return 1
			done
		fi
		sleep 1
	done
	log_event "recovered after $(( SECONDS - t0 )) s"
}

# driver SECONDS: events until SECONDS have passed; after two out of
# three events it waits for the paths to recover, after the third the
# next event may hit a path still down.
driver() {
	local end=$(( SECONDS + $1 )) k
	while [ "$SECONDS" -lt "$end" ] && [ -z "$STUCK" ]; do
		sleep $(( RANDOM % 9 + 2 ))
		k=${KINDS[$(( RANDOM % ${#KINDS[@]} ))]}
		COUNT[$k]=$(( COUNT[$k] + 1 ))
		"ev_$k" $(( RANDOM % 2 ))
		[ -n "$STUCK" ] || [ $(( RANDOM % 3 )) -eq 0 ] || recover 120
	done
	[ -n "$STUCK" ] || recover 120
}

# ---- the verdicts ----------------------------------------------------------

# classify: "<inside> <outside>": IO errors in soak/io inside and outside
# the windows of soak/states with no path connected or the device not
# open (2 s of slack at each end).
classify() {
	awk 'BEGIN { n = 0 }
	FNR == NR {
		down = ($2 != "connected" && $3 != "connected") || $4 != "open"
		if (down && !indown) { a[n] = $1; b[n] = 1e12; indown = 1 }
		if (!down && indown) { b[n++] = $1; indown = 0 }
		next
	}
	$1 == "E" {
		inside = 0
		for (i = 0; i <= n; i++)
			if (i in a && $2 >= a[i] - 2 && $2 <= b[i] + 2)
				inside = 1
		if (inside) in_n++; else out_n++
	}
	END { print in_n + 0, out_n + 0 }' "$L/states" "$L/io"
}

# down_seconds: the time with no path connected or the device not open.
down_seconds() {
	awk '{ down = ($2 != "connected" && $3 != "connected") || $4 != "open"
		if (down && !indown) { a = $1; indown = 1; w++ }
		if (!down && indown) { t += $1 - a; indown = 0 } }
		END { printf "%.1f %d\n", t, w }' "$L/states"
}

summary() {
	awk -v k="$1" '$1 == "summary" { for (i = 2; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$L/io"
}

# within NAME VALUE LOW HIGH
within() {
	echo "$1: $2, expected $3 .. $4"
	[ "$2" -ge "$3" ] && [ "$2" -le "$4" ]
}

# stats_agree: the paths' counters and soak-io's.  A request counts on a
# path when posted: again on another path when it fails over (each
# failover), never when it fails before it is posted.  A removed path's
# counters are read every 0.2 s until its directory goes: requests
# posted on it after the last reading are not counted (at most one per
# thread).  rnbd's own messages (session info, open and close of the
# device, a few per reconnect, each under 4 KiB) add some.
stats_agree() {
	local fo lost ctl
	fo=$(stat_sum failovers)
	lost=$(( (COUNT[path] - COUNT[busy]) * THREADS ))
	ctl=$(( 4 * (COUNT[flap] + COUNT[rxe] + COUNT[path] + COUNT[srvdisc] + COUNT[reload] + 2) ))
	within writes "$(stat_sum writes)" $(( $(summary w_ack) - lost )) \
		$(( $(summary w_sub) + fo + lost + ctl )) &&
	within write_bytes "$(stat_sum write_bytes)" $(( $(summary w_ack_b) - lost * 65536 )) \
		$(( $(summary w_sub_b) + (fo + lost) * 65536 + ctl * 4096 )) &&
	within reads "$(stat_sum reads)" $(( $(summary r_ok) - lost )) \
		$(( $(summary r_sub) + fo + lost + ctl )) &&
	within read_bytes "$(stat_sum read_bytes)" $(( $(summary r_ok_b) - lost * 65536 )) \
		$(( $(summary r_sub_b) + (fo + lost) * 65536 + ctl * 4096 ))
}

no_hung_task() {
	not eval "dmesg | grep -E 'blocked for more than|hung_task'"
}

# ---- set-up -----------------------------------------------------------------

echo "soak: seed $SEED, $SOAK s"
figure "soak seed $SEED, $SOAK s of events"
RANDOM=$SEED
check "veth pair with rxe on both ends" topology_pair
check "second veth pair with rxe on both ends" topology_second_pair
on_new_pair 1 "rping across pair 1" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
on_new_pair 2 "rping across pair 2" rping_pair 198.51.100.2 198.51.100.1 rxe3 rxe2
check "brd" modprobe brd rd_nr=1 rd_size=65536
check "load rtrs and rnbd" rnbd_load "$b"
check "build soak-io" gcc -O2 -Wall -pthread -o "$IO" "$RTRS_TOP/tests/e2e/soak-io.c"
if ! DEV=$(rnbd_map "$SESS" /dev/ram0 "${P[@]}"); then
	fail "map /dev/ram0 over two paths" "map_device failed"
	exit 0
fi
pass "map /dev/ram0 over two paths"
check "both paths connected" retry_until 60 both_up
# One request per IO: the counters are compared with soak-io's.
echo 2 >"/sys/block/$DEV/queue/nomerges"
for p in "${P[@]}"; do
	echo 1 >"$CS/paths/$p/stats/reset_all"
done

# ---- the soak ---------------------------------------------------------------

rm -f "$STOP" "$STOP.monitor"
monitor &
mpid=$!
nice -n 10 "$IO" "/dev/$DEV" "$THREADS" "$SLOTS" "$STOP" >"$L/io" 2>&1 &
iopid=$!
t0=$SECONDS
log_event "soak start, seed $SEED"
driver "$SOAK"
log_event "soak events over"
touch "$STOP"
# The final read-back of the slots; a stuck IO shows here (after a
# stuck event, only 30 s are given: IO may well hang behind it).
limit=300
[ -z "$STUCK" ] || limit=30
for _ in $(seq "$limit"); do
	kill -0 "$iopid" 2>/dev/null || break
	sleep 1
done
if kill -0 "$iopid" 2>/dev/null; then
	fail "soak-io finishes" "IO still running $limit s after the end"
	kill "$iopid"
else
	wait "$iopid"
	check "soak-io finishes" test "$?" -eq 0
fi
log_event "soak end"
dmesg >"$L/dmesg"
dur=$(( SECONDS - t0 ))
touch "$STOP.monitor"
wait "$mpid"

read -r err_in err_out <<<"$(classify)"
read -r down_s down_n <<<"$(down_seconds)"
for k in flap rxe path srvdisc reload; do
	figure "soak events $k: ${COUNT[$k]}"
done
figure "soak remove_path refused (last path): ${COUNT[busy]}, reconnects nudged: ${COUNT[nudge]}"
figure "soak IO: $(summary w_ack) writes acknowledged of $(summary w_sub), $(summary r_ok) reads of $(summary r_sub)"
figure "soak bytes verified: $(( $(summary r_ok_b) )) (read back during and after), final read-back $(summary final_slots) slots $(summary final_b) bytes"
figure "soak IO errors: $err_in inside the $down_n all-down windows ($down_s s), $err_out outside; verify errors $(summary verify_err)"
figure "soak duration: $dur s"
figure "soak path counters: writes $(stat_sum writes) ($(stat_sum write_bytes) B), reads $(stat_sum reads) ($(stat_sum read_bytes) B), failovers $(stat_sum failovers)"

if [ -n "$STUCK" ]; then
	fail "no event command stuck" "$STUCK: see soak/stuck"
	cat "$L/stuck"
	exit 0
fi
pass "no event command stuck"
check "IO ran and ended with a summary" test "$(summary w_ack)" -gt 0
check "every acknowledged write reads back intact" \
	test "$(summary verify_err)" = 0 -a "$(grep -c '^[EV] [0-9.]* final' "$L/io")" = 0
check "no IO error while a path was connected" test "$err_out" -eq 0
check "every event recovered" test "${COUNT[norecover]}" -eq 0
check "path counters agree with the IO done" stats_agree
check "no hung task" no_hung_task

# ---- the end ----------------------------------------------------------------

check "unmap" rnbd_unmap "$DEV"
check "unload rnbd and rtrs" rnbd_unload
