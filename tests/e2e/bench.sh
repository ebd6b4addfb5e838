# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# The guest side of make bench (tests/harness/bench.sh), on the stock
# kernel: one boot measures every stack over the same rxe pair and the same
# null_blk, loading and unloading them in turn.
#
#   raw       perftest ib_write_bw and ib_write_lat, rxe0 -> rxe1
#   ours-2.1  rtrs-bench-clt/-srv, then rnbd, over this project's rtrs,
#             whose client and server agree on protocol 2.1 by default
#   ours-2.0  the same, the client loaded with max_proto_minor=0: every
#             session of it speaks protocol 2.0
#   mainline  the same over mainline's rtrs (built from the source package)
#   nvme      nvme-rdma to nvmet-rdma
#
# Each rtrs session's version is checked in sysfs before it is measured
# (proto_version of every path, client and server; mainline's have no
# such file and speak 2.0 only): a session that does not speak what its
# stack says fails its check and none of its points is measured.
#
# Each repetition runs every stack once; the order turns by one stack per
# repetition, so drift in the machine's load falls on all of them alike.
# Every point appends one line to /run/results/points:
#
#   <rep> <stack> <layer> <point> name=value...
#
# A point larger than the session's largest IO is not run: its line says
# "skipped=1 max_io_kib=N".
#
# Environment: BENCH_REPS, BENCH_FIO_S, BENCH_RTRS_S, BENCH_RAW_S,
# BENCH_LAT_ITERS, BENCH_DIR (build dir with ours/, mainline/ and their
# -bench/ modules), BENCH_PROFILE (below), BENCH_ONLY and BENCH_STACKS
# (comma-separated point and stack names: only those are measured; empty
# means all), BENCH_LINK (ordered or unordered, below).
#
# BENCH_PROFILE="point,..." (or 1: the 4 KiB points at queue depth 1 and
# 32) adds a pass after the repetitions that runs only those points of
# ours, mainline and nvme, each under perf record -a (cpu-clock, both
# vCPUs, enabled exactly while the point runs), and leaves perf report's
# samples by object and symbol in /run/results/profile/STACK-POINT.txt,
# and by CPU and task in STACK-POINT.cpus.
# The figures of that pass go to points-profiled, not into the medians:
# the sampling costs CPU.

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/rnbd-lib.sh"

REPS=${BENCH_REPS:-3}
FIO_S=${BENCH_FIO_S:-10}
RTRS_S=${BENCH_RTRS_S:-5}
RAW_S=${BENCH_RAW_S:-5}
LAT_ITERS=${BENCH_LAT_ITERS:-20000}
DIR=${BENCH_DIR:-$RTRS_TOP/build/bench}
STACKS=(raw ours-2.1 ours-2.0 mainline nvme)
if [ -n "${BENCH_STACKS:-}" ]; then
	read -r -a STACKS <<<"${BENCH_STACKS//,/ }"
fi
ONLY=${BENCH_ONLY:-}
ONLY=${ONLY//,/ }
POINTS=$RESULTS/points
BENCH_PARAMS=/sys/module/rtrs_bench_clt/parameters
NQN=nqn.2014-08.org.example:rtrs-bench
NVMET=/sys/kernel/config/nvmet
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000001
HOSTID=00000000-0000-4000-8000-000000000001
PROFILE=${BENCH_PROFILE:-}
PROFILE=${PROFILE//,/ }
[ "$PROFILE" = 1 ] &&
	PROFILE="read-4k-qd1 read-4k-qd32 write-4k-qd32 randread-4k-qd1 randread-4k-qd32 randwrite-4k-qd32"
PROFILING=

# must NAME CMD...: a check that ends the run when it fails.
must() {
	check "$@"
	grep -q "^FAIL $RTRS_NAME/$1" "$RESULTS/checks" && exit 1
	return 0
}

# try NAME CMD...: a check; its status says whether it passed.
try() {
	check "$@"
	! grep -q "^FAIL $RTRS_NAME/$1" "$RESULTS/checks"
}

# A stack whose IO never completes (mainline's rnbd stops so on rxe at
# times, after "rxe_reg_fast_mr: ... not free") would hold its point, and
# the run, until the guest's timeout.  Its IO commands run under a
# deadline instead; past it the point fails, the stack's modules cannot be
# unloaded under the stuck IO, and the run ends with what it measured
# (end_if_stuck after each point).
IO_DEADLINE=$(( (FIO_S > RTRS_S ? FIO_S : RTRS_S) * 4 + 120 ))
STUCK=$RTRS_TMP/bench-stuck

# guarded CMD...: CMD, a program, in the background; its output and
# status once it ends, or a failure once it has run $IO_DEADLINE
# seconds.  The background job is an sh of its own, not a fork of this
# shell: a fork would keep bash's saved copy of the caller's output
# open (a redirection of the guarded call saves it, close-on-exec), and
# check's command substitution, which reads that output, would wait for
# the stuck CMD after all.
guarded() {
	local rc=$RTRS_TMP/guarded.rc out=$RTRS_TMP/guarded.out deadline pid
	rm -f "$rc"
	RC="$rc" sh -c '"$@"; echo $? >"$RC"' guarded "$@" >"$out" 2>&1 &
	pid=$!
	deadline=$(( SECONDS + IO_DEADLINE ))
	until [ -s "$rc" ]; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "$1 stuck: no end after ${IO_DEADLINE}s" >"$STUCK"
			cat "$STUCK"
			return 1
		fi
		nap 0.5
	done
	wait "$pid"
	cat "$out"
	return "$(cat "$rc")"
}

# end_if_stuck: end the run when a point's IO never ended.
end_if_stuck() {
	[ -e "$STUCK" ] || return 0
	echo "bench: ending the run at $(cut -d' ' -f1 /proc/uptime) s: $(cat "$STUCK")"
	exit 1
}

# cpu_ticks: busy time of all CPUs so far, in USER_HZ ticks.
cpu_ticks() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

# rxe_pkts: packets both rxe devices have sent so far.
rxe_pkts() {
	echo $(( $(rxe_counter rxe0 sent_pkts) + $(rxe_counter rxe1 sent_pkts) ))
}

# cpu_each: busy ticks of each CPU so far, one line each.
cpu_each() {
	awk '$1 ~ /^cpu[0-9]/ { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

# threads_ns: "TID NS COMM" of every thread: its run time so far.
threads_ns() {
	local d c t
	for d in /proc/[0-9]*/task/[0-9]*; do
		{ read -r c <"$d/comm" && read -r t _ <"$d/schedstat"; } \
			2>/dev/null || continue
		echo "${d##*/} $t $c"
	done
}

# snap: what a point's figures count from, right before it (the slowest
# read first, outside what the CPU figures count).
snap() {
	THR0=$(threads_ns)
	P0=$(rxe_pkts) EACH0=$(cpu_each) T0=$(cpu_ticks)
}

# snap_end: the same, right after the point (the slowest read last).
snap_end() {
	T1=$(cpu_ticks) EACH1=$(cpu_each) P1=$(rxe_pkts)
	THR1=$(threads_ns)
}

# thread_ns: "COMM NS" of each thread that ran between snap and
# snap_end, its run time in that while.
thread_ns() {
	printf '%s\nend\n%s\n' "$THR0" "$THR1" |
		awk '$1 == "end" { after = 1; next }
		!after { t0[$1] = $2; next }
		($1 in t0) && $2 > t0[$1] { print $3, $2 - t0[$1] }'
}

# cost OPS: per IO between snap and snap_end, CPU time, packets, and the
# ksoftirqd threads' run time; and the busiest CPU's share of the busy
# time (100 when one CPU did all the work, 50 when two shared it evenly).
# At queue depth 1 the share tells how the point ran: a chain of work on
# one CPU, or hopping between CPUs, which the link's hash of each flow
# decides (topology.sh, flows_in_order) and which moves the figures more
# than the stacks do.
cost() {
	local sq
	sq=$(thread_ns | awk '$1 ~ /^ksoftirqd\// { n += $2 } END { print n + 0 }')
	printf '%s\nend\n%s\n' "$EACH0" "$EACH1" |
		awk -v o="$1" -v t="$(( T1 - T0 ))" -v p="$(( P1 - P0 ))" -v sq="$sq" \
			-v hz="$(getconf CLK_TCK)" '
		$1 == "end" { after = 1; n = 0; next }
		!after { b[n++] = $1; next }
		{ d = $1 - b[n++]; sum += d; if (d > top) top = d }
		END {
			if (o > 0)
				printf "cpu_us_per_io=%.1f pkts_per_io=%.2f sirqd_us_per_io=%.1f top_cpu_pct=%.0f",
					t * 1e6 / hz / o, p / o, sq / 1000 / o,
					(sum > 0 ? 100 * top / sum : 0)
		}'
}

# threads_note REP STACK NAME OPS: the threads that ran most during the
# point, their run time per IO (results/bench/guest/threads): which
# thread on which CPU (kworker/N, ksoftirqd/N) did a point's work.
threads_note() {
	[ -z "$PROFILING" ] && [ "$4" -gt 0 ] 2>/dev/null || return 0
	thread_ns | awk -v o="$4" -v k="$1 $2 $3" \
		'{ printf "%s %s %.1f\n", k, $1, $2 / 1000 / o }' |
		sort -k5,5 -g -r | head -n 8 >>"$RESULTS/threads"
}

# point REP STACK LAYER NAME FIGURES...: one measured point.
point() {
	echo "$*" >>"$POINTS"
	echo "point: $*"
}

# ---- profile ---------------------------------------------------------------

# wanted NAME: whether a point runs in this pass: every point of
# BENCH_ONLY (all if empty) in the measured repetitions, only the
# profiled ones in the profile pass.
wanted() {
	if [ -n "$PROFILING" ]; then
		[[ " $PROFILE " == *" $1 "* ]]
	else
		[ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]
	fi
}

# perf_ctl CMD: enable or disable the sampling, and wait for perf's ack.
perf_ctl() {
	local a
	echo "$1" >&"$PERF_CTL" && read -r -t 60 a <&"$PERF_ACK" && [ "$a" = ack ]
}

# The events the profile pass counts over a point, by tracefs histograms
# (no trace buffer): "NAME EVENT KEYS".  cq_poll's histogram also sums
# the completions each poll returned.
COUNTED=(
	"cq_polls rdma_core/cq_poll common_cpu:vals=hitcount,rc"
	"work_items workqueue/workqueue_execute_start common_cpu"
	"switches sched/sched_switch common_cpu"
	"wakeups sched/sched_wakeup common_cpu"
	"softirqs irq/softirq_entry common_cpu"
)
TRACEFS=/sys/kernel/tracing

# count_set PREFIX: attach ("") or detach ("!") the histograms.
count_set() {
	local c e k rc=0
	for c in "${COUNTED[@]}"; do
		read -r _ e k <<<"$c"
		echo "$1hist:keys=$k" >"$TRACEFS/events/$e/trigger" || rc=1
	done
	return "$rc"
}

count_begin() {
	[ -e $TRACEFS/events ] || mount -t tracefs nodev $TRACEFS || return 1
	# Those a failed point left behind.
	count_set "!" 2>/dev/null
	count_set ""
}

# count_end STACK NAME: each count of the point, "NAME N" a line, then
# the histograms go.
count_end() {
	local c n e out=$RESULTS/profile/$1-$2.count rc=0
	: >"$out"
	for c in "${COUNTED[@]}"; do
		read -r n e _ <<<"$c"
		awk -v n="$n" '/^\{/ { for (i = 1; i < NF; i++) if ($i == "rc:") rc += $(i + 1) }
			/^ *Hits:/ { hits = $2; seen = 1 }
			END { if (!seen) exit 1
			      print n, hits
			      if (n == "cq_polls") print "completions", rc + 0 }' \
			"$TRACEFS/events/$e/hist" >>"$out" || rc=1
	done
	count_set "!" || rc=1
	return "$rc"
}

# prof_begin: in the profile pass, perf record starts with its events off
# (its set-up under TCG takes seconds), then is enabled right before the
# point.
prof_begin() {
	local t=$RTRS_TMP
	[ -n "$PROFILING" ] || return 0
	rm -f "$t/perf.data" "$t/perf-ctl" "$t/perf-ack"
	mkfifo "$t/perf-ctl" "$t/perf-ack" || return 1
	perf record -a -e cpu-clock -F 999 -D -1 -o "$t/perf.data" \
		--control "fifo:$t/perf-ctl,$t/perf-ack" >"$t/perf.log" 2>&1 &
	PERF_PID=$!
	# Read-write opens do not wait for perf to open its ends.
	exec {PERF_CTL}<>"$t/perf-ctl" {PERF_ACK}<>"$t/perf-ack"
	perf_ctl enable || { cat "$t/perf.log"; return 1; }
	count_begin || { echo "tracefs histograms unavailable"; return 1; }
}

# prof_end STACK NAME: stop the sampling and keep perf's samples by
# object and symbol.
prof_end() {
	local t=$RTRS_TMP rc=0
	[ -n "$PROFILING" ] || return 0
	count_end "$1" "$2" || rc=1
	perf_ctl disable || rc=1
	# A background job ignores SIGINT; perf writes its file on SIGTERM
	# too, then dies of it.
	kill -TERM "$PERF_PID"
	wait "$PERF_PID"
	case $? in 0 | 143) ;; *) rc=1 ;; esac
	exec {PERF_CTL}>&- {PERF_ACK}>&-
	[ "$rc" -eq 0 ] || { cat "$t/perf.log"; return 1; }
	perf report -i "$t/perf.data" --stdio -q --no-children \
		-F sample,dso,sym --field-separator='|' \
		>"$RESULTS/profile/$1-$2.txt" 2>"$t/perf-report.log" &&
		[ -s "$RESULTS/profile/$1-$2.txt" ] ||
		{ cat "$t/perf-report.log"; return 1; }
	# The same samples by CPU and task: whether the point kept both
	# vCPUs busy, and with what.
	perf report -i "$t/perf.data" --stdio -q --no-children \
		--sort cpu,comm -F sample,cpu,comm --field-separator='|' \
		>"$RESULTS/profile/$1-$2.cpus" 2>>"$t/perf-report.log" ||
		{ cat "$t/perf-report.log"; return 1; }
}

# ---- memory ----------------------------------------------------------------

# mem_before / mem_after REP STACK: what a session costs, client and
# server together, as MemFree, Slab and VmallocUsed see it.
mem_before() {
	mem_snapshot MF0 SL0 VM0
}

mem_after() {
	local f s v
	mem_snapshot f s v || return 1
	point "$1" "$2" mem session "free_kib=$(( MF0 - f ))" \
		"slab_kib=$(( s - SL0 ))" "vmalloc_kib=$(( v - VM0 ))"
}

# ---- raw rxe ---------------------------------------------------------------

# perftest TOOL SIZE ARGS...: one perftest run from rxe0 to rxe1 over RDMA
# CM; the client's output on stdout.
perftest() {
	local tool=$1 size=$2 spid rc
	shift 2
	timeout 120 "$tool" -R -d rxe1 -s "$size" -F "$@" \
		>"$RTRS_TMP/perftest-server.log" 2>&1 &
	spid=$!
	sleep 2
	timeout 120 "$tool" -R -d rxe0 -s "$size" -F "$@" \
		--source_ip "$PAIR_A" "$PAIR_B" 2>&1
	rc=$?
	wait "$spid" || rc=1
	return "$rc"
}

# raw_bw REP SIZE NAME ARGS...: ib_write_bw for as long as ARGS say.
raw_bw() {
	local out line
	out=$(perftest ib_write_bw "$2" "${@:4}") ||
		{ echo "$out" | tail -n 3; return 1; }
	# #bytes #iterations BW-peak BW-average[MB/s] MsgRate[Mpps]
	line=$(awk -v s="$2" '$1 == s && NF >= 5 { print $5 }' <<<"$out" | tail -n 1)
	[ -n "$line" ] || { echo "$out" | tail -n 3; return 1; }
	point "$1" raw perftest "$3" "$(awk -v m="$line" -v s="$2" \
		'BEGIN { printf "iops=%.0f mib_s=%.2f", m * 1e6, m * 1e6 * s / 1048576 }')"
}

# raw_lat REP SIZE NAME: ib_write_lat, $LAT_ITERS round trips.
raw_lat() {
	local out fig
	out=$(perftest ib_write_lat "$2" -n "$LAT_ITERS") ||
		{ echo "$out" | tail -n 3; return 1; }
	# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
	fig=$(awk -v s="$2" '$1 == s && NF >= 8 { printf "p50_us=%s avg_us=%s p99_us=%s", $5, $6, $8 }' <<<"$out" |
		tail -n 1)
	[ -n "$fig" ] || { echo "$out" | tail -n 3; return 1; }
	point "$1" raw perftest "$3" "$fig"
}

stack_raw() {
	[ -z "$ONLY" ] || return 0
	check "raw: ib_write_bw 4k" raw_bw "$1" 4096 write_bw-4k -D "$RAW_S"
	check "raw: ib_write_bw 128k" raw_bw "$1" 131072 write_bw-128k -D "$RAW_S"
	# At 1 MiB, a count of messages, 32 a second of $RAW_S: in a quick run
	# on a loaded machine perftest's timed mode (-D) gave a bandwidth of
	# 0 at 128 KiB and 1 MiB; a count always gives its figure.
	check "raw: ib_write_bw 1m" raw_bw "$1" 1048576 write_bw-1m \
		-n $(( RAW_S * 32 ))
	check "raw: ib_write_lat 8" raw_lat "$1" 8 write_lat-8b
	check "raw: ib_write_lat 4k" raw_lat "$1" 4096 write_lat-4k
}

# ---- fio -------------------------------------------------------------------

FIO_POINTS=(
	"randread-4k-qd1 randread 4k 1"
	"randwrite-4k-qd1 randwrite 4k 1"
	"randread-4k-qd32 randread 4k 32"
	"randwrite-4k-qd32 randwrite 4k 32"
	"read-128k-qd8 read 128k 8"
	"write-128k-qd8 write 128k 8"
)

# The 1 MiB points write, then read back with crc32c, a region of a brd
# device: null_blk keeps no data.  Its size follows the time of a point,
# 32 MiB per second of $FIO_S: a pass takes about that long at the rate
# of the 128 KiB points on an idle machine (README's sample run), longer
# on a loaded one.
MIB_REGION=$(( FIO_S * 32 ))
[ "$MIB_REGION" -le 512 ] || MIB_REGION=512

# fio_job REP STACK DEV NAME DIR ARGS...: one fio job on /dev/DEV with
# ARGS; its DIR (read or write) figures make point NAME.
fio_job() {
	local rep=$1 stack=$2 dev=$3 name=$4 dir=$5 fig ops
	shift 5
	prof_begin || return 1
	snap
	guarded fio --name=bench --filename="/dev/$dev" --ioengine=libaio \
		--direct=1 "$@" --output-format=json \
		--output="$RTRS_TMP/fio.json" >"$RTRS_TMP/fio.log" 2>&1 ||
		{ grep -m 1 . "$RTRS_TMP/fio.log"; prof_end "$stack" "$name"; return 1; }
	prof_end "$stack" "$name" || return 1
	snap_end
	fig=$(jq -r --arg d "$dir" '.jobs[0] | select(.error == 0) | .[$d] |
		"ops=\(.total_ios) iops=\(.iops | floor) mib_s=\(.bw / 1024 * 100 | floor / 100)" +
		" p50_us=\(.clat_ns.percentile["50.000000"] / 1000)" +
		" p99_us=\(.clat_ns.percentile["99.000000"] / 1000)"' "$RTRS_TMP/fio.json")
	[ -n "$fig" ] || { echo "fio: no figures"; return 1; }
	ops=${fig%% *}
	ops=${ops#ops=}
	point "$rep" "$stack" fio "$name" "$fig" "$(cost "$ops")"
	threads_note "$rep" "$stack" "$name" "$ops"
}

# fio_point REP STACK DEV NAME RW BS QD: $FIO_S seconds of RW.
fio_point() {
	local dir
	case $5 in
	*read) dir="read" ;;
	*) dir="write" ;;
	esac
	fio_job "$1" "$2" "$3" "$4" "$dir" --rw="$5" --bs="$6" --iodepth="$7" \
		--time_based --runtime="$FIO_S"
}

# fio_all REP STACK DEV
fio_all() {
	local p
	for p in "${FIO_POINTS[@]}"; do
		wanted "${p%% *}" || continue
		# shellcheck disable=SC2086
		check "$2: fio $p" fio_point "$1" "$2" "$3" $p
		end_if_stuck
	done
}

# skipped REP STACK LAYER KIB NAME...: the points NAME, larger than the
# session's largest IO (KIB), are not run.
skipped() {
	local rep=$1 stack=$2 layer=$3 kib=$4 p
	shift 4
	for p; do
		point "$rep" "$stack" "$layer" "$p" skipped=1 "max_io_kib=$kib"
	done
}

# fio_mib REP STACK DEV: where rnbd's device DEV takes 1 MiB requests
# whole (its session's largest IO), 1 MiB sequential writes at queue
# depth 8 with crc32c (write-1m-qd8), then reads of the same that check
# it (read-1m-qd8), on a brd device of the server mapped over the same
# session; else both points are skipped.
fio_mib() {
	local rep=$1 stack=$2 kib rdev args
	wanted write-1m-qd8 || wanted read-1m-qd8 || return 0
	kib=$(cat "/sys/block/$3/queue/max_hw_sectors_kb")
	if [ "$kib" -lt 1024 ]; then
		skipped "$rep" "$stack" fio "$kib" write-1m-qd8 read-1m-qd8
		return 0
	fi
	try "$stack: brd of $MIB_REGION MiB" \
		modprobe brd rd_nr=1 rd_size=$(( MIB_REGION * 1024 )) || return 0
	if try "$stack: map /dev/ram0 over rnbd" map_dev /dev/ram0 "$RTRS_TMP/dev-ram"; then
		rdev=$(cat "$RTRS_TMP/dev-ram")
		args=(--rw=write --bs=1m --iodepth=8 --size="${MIB_REGION}m"
			--verify=crc32c --verify_fatal=1)
		try "$stack: fio write-1m-qd8, crc32c" fio_job "$rep" "$stack" \
			"$rdev" write-1m-qd8 write "${args[@]}" --do_verify=0 &&
			check "$stack: fio read-1m-qd8, crc32c verify" fio_job "$rep" \
				"$stack" "$rdev" read-1m-qd8 read "${args[@]}" --verify_only=1
		end_if_stuck
		must "$stack: unmap /dev/ram0" rnbd_unmap "$rdev"
	fi
	must "$stack: unload brd" wait_for 30 rmmod brd
}

# ---- rtrs: the benchmark users, then rnbd ------------------------------------

# Every stack runs the same sizes: 124 KiB is the largest IO of a 2.0
# session (a 128 KiB chunk less its header), 1 MiB that of a 2.1 session
# of ours (skipped where the session takes less).
RTRS_POINTS=(
	"read-4k-qd1 read 4096 1"
	"write-4k-qd1 write 4096 1"
	"read-4k-qd32 read 4096 32"
	"write-4k-qd32 write 4096 32"
	"read-124k-qd8 read 126976 8"
	"write-124k-qd8 write 126976 8"
	"read-1m-qd8 read 1048576 8"
	"write-1m-qd8 write 1048576 8"
)

# rtrs_point REP STACK NAME DIR SIZE QD: one point of rtrs-bench-clt; a
# SIZE above the session's largest IO ($MAX_IO) is skipped.
rtrs_point() {
	local rep=$1 stack=$2 name=$3 dir=$4 size=$5 qd=$6 r ops
	if [ "$size" -gt "$MAX_IO" ]; then
		skipped "$rep" "$stack" rtrs $(( MAX_IO / 1024 )) "$name"
		return 0
	fi
	echo "$dir" >$BENCH_PARAMS/dir &&
	echo "$size" >$BENCH_PARAMS/io_size &&
	echo "$qd" >$BENCH_PARAMS/queue_depth &&
	echo $(( RTRS_S * 1000 )) >$BENCH_PARAMS/runtime_ms || return 1
	prof_begin || return 1
	snap
	guarded sh -c "echo 1 >$BENCH_PARAMS/run" ||
		{ dmesg | tail -n 2; prof_end "$stack" "$name"; return 1; }
	prof_end "$stack" "$name" || return 1
	snap_end
	r=$(cat $BENCH_PARAMS/result)
	ops=$(sed -n 's/.*\bops=\([0-9]*\).*/\1/p' <<<"$r")
	point "$rep" "$stack" rtrs "$name" "$(awk -v s="$size" '{
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2]
			}
			printf "ops=%d iops=%d mib_s=%.2f p50_us=%.1f p99_us=%.1f errors=%d io_size=%d",
				v["ops"], v["iops"], v["kib_s"] / 1024, v["p50_ns"] / 1000,
				v["p99_ns"] / 1000, v["errors"], s
		}' <<<"$r")" "$(cost "$ops")"
	threads_note "$rep" "$stack" "$name" "$ops"
}

# load_rtrs RTRS_DIR BENCH_DIR CLIENT_PARAM...: a stack's rtrs and the
# benchmark server.
load_rtrs() {
	local d=$1 b=$2
	shift 2
	modprobe -a ib_core rdma_cm &&
	insmod "$d/rtrs-core.ko" && insmod "$d/rtrs-server.ko" &&
	insmod "$d/rtrs-client.ko" "$@" && insmod "$b/rtrs-bench-srv.ko"
}

# load_rnbd RTRS_DIR: the rnbd built on that rtrs.
load_rnbd() {
	insmod "$1/rnbd/rnbd-server.ko" && insmod "$1/rnbd/rnbd-client.ko"
}

# map_dev DEVICE_PATH FILE: the server's DEVICE_PATH over rnbd, on
# session "bench"; the device's name goes to FILE.
map_dev() {
	rnbd_map bench "$1" "ip:$PAIR_A@ip:$PAIR_B" >"$2"
}

# speaks VER SESS: every path of session SESS speaks protocol VER, as
# proto_version says on the client and on the server (the server's
# session has the client's name); VER "mainline": the client's paths
# have no proto_version, as mainline's rtrs, which speaks 2.0 only.  A
# path's directory is named after its addresses, SRC@DST.
speaks() {
	local f n=0 side
	for side in client server; do
		[ "$1" != mainline ] || [ "$side" = client ] || continue
		for f in "/sys/class/rtrs-$side/$2"/paths/*@*/; do
			[ -d "$f" ] || continue
			n=$((n + 1))
			if [ "$1" = mainline ]; then
				[ ! -e "$f/proto_version" ] ||
					{ echo "${f}proto_version says '$(cat "$f/proto_version")': not mainline"; return 1; }
			else
				[ "$(cat "$f/proto_version" 2>&1)" = "$1" ] ||
					{ echo "${f}proto_version: '$(cat "$f/proto_version" 2>&1)', not $1"; return 1; }
			fi
		done
		[ "$n" -gt 0 ] || { echo "no path of session $2 on the $side"; return 1; }
		n=0
	done
}

# speaks_now VER SESS: speaks, given a few seconds: the server's side of
# a path shows in sysfs once it is up, which the client may see first.
speaks_now() {
	wait_for 10 speaks "$@" >/dev/null 2>&1 || speaks "$@"
}

# stack_rtrs REP STACK: load the stack's rtrs, check the version its
# sessions speak, measure the transport with the benchmark users, then
# the block device with rnbd, and unload.
stack_rtrs() {
	local rep=$1 stack=$2 d b ver m p dev cargs=()
	case $stack in
	ours-2.1) d=$DIR/ours ver=2.1 ;;
	ours-2.0) d=$DIR/ours ver=2.0 cargs=(max_proto_minor=0) ;;
	mainline) d=$DIR/mainline ver=mainline ;;
	esac
	b=$d-bench
	must "$stack: load rtrs" load_rtrs "$d" "$b" "${cargs[@]}"
	mem_before
	must "$stack: bench session" insmod "$b/rtrs-bench-clt.ko" \
		"paths=ip:$PAIR_A@ip:$PAIR_B"
	check "$stack: session memory" mem_after "$rep" "$stack"
	if try "$stack: bench session speaks $ver" speaks_now "$ver" rtrs-bench-clt; then
		MAX_IO=$(cat $BENCH_PARAMS/max_io_size)
		for p in "${RTRS_POINTS[@]}"; do
			wanted "${p%% *}" || continue
			# shellcheck disable=SC2086
			check "$stack: rtrs $p" rtrs_point "$rep" "$stack" $p
			end_if_stuck
		done
	fi
	must "$stack: unload the bench users" rmmod rtrs-bench-clt rtrs-bench-srv
	must "$stack: load rnbd" load_rnbd "$d"
	must "$stack: map /dev/nullb0 over rnbd" map_dev /dev/nullb0 "$RTRS_TMP/dev"
	dev=$(cat "$RTRS_TMP/dev")
	if try "$stack: rnbd session speaks $ver" speaks_now "$ver" bench; then
		fio_all "$rep" "$stack" "$dev"
		fio_mib "$rep" "$stack" "$dev"
	fi
	must "$stack: unmap" rnbd_unmap "$dev"
	for m in rnbd-client rnbd-server rtrs-client rtrs-server rtrs-core; do
		must "$stack: unload $m" rmmod "$m"
	done
}

# ---- nvme-rdma -------------------------------------------------------------

# nvmet_up: export /dev/nullb0 over nvmet-rdma on $PAIR_B.
nvmet_up() {
	local s=$NVMET/subsystems/$NQN p=$NVMET/ports/1
	modprobe -a nvmet nvmet-rdma nvme-rdma || return 1
	# configfs is a module on the stock kernel: not mounted at boot.
	mountpoint -q /sys/kernel/config ||
		mount -t configfs configfs /sys/kernel/config || return 1
	mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
	mkdir "$s/namespaces/1" &&
	echo -n /dev/nullb0 >"$s/namespaces/1/device_path" &&
	echo 1 >"$s/namespaces/1/enable" &&
	mkdir "$p" && echo rdma >"$p/addr_trtype" && echo ipv4 >"$p/addr_adrfam" &&
	echo "$PAIR_B" >"$p/addr_traddr" && echo 4420 >"$p/addr_trsvcid" &&
	ln -s "$s" "$p/subsystems/$NQN"
}

nvmet_down() {
	local s=$NVMET/subsystems/$NQN p=$NVMET/ports/1
	rm "$p/subsystems/$NQN" && rmdir "$p" &&
	echo 0 >"$s/namespaces/1/enable" && rmdir "$s/namespaces/1" &&
	rmdir "$s" && modprobe -r nvme-rdma nvmet-rdma nvmet
}

# nvme_connect: the host side, from $PAIR_A; the namespace's block device
# (the only NVMe device of the guest) goes to $RTRS_TMP/dev.
nvme_connect() {
	local i b
	nvme connect -t rdma -a "$PAIR_B" -s 4420 -w "$PAIR_A" -n "$NQN" \
		--hostnqn="$HOSTNQN" --hostid="$HOSTID" || return 1
	for i in $(seq 50); do
		for b in /sys/block/nvme*n*; do
			[[ "${b##*/}" =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
			echo "${b##*/}" >"$RTRS_TMP/dev"
			return 0
		done
		sleep 0.2
	done
	echo "nvme_connect: no namespace block device" >&2
	return 1
}

# A failure to set up nvme-rdma fails the run but does not end it: the
# other stacks' figures are still worth having.
NVME_BROKEN=

stack_nvme() {
	local rep=$1 dev
	[ -z "$NVME_BROKEN" ] || return 0
	NVME_BROKEN=1
	try "nvme: nvmet-rdma target" nvmet_up || return 0
	mem_before
	try "nvme: connect" nvme_connect || return 0
	check "nvme: session memory" mem_after "$rep" nvme
	dev=$(cat "$RTRS_TMP/dev")
	fio_all "$rep" nvme "$dev"
	try "nvme: disconnect" nvme disconnect -n "$NQN" || return 0
	try "nvme: target down" nvmet_down || return 0
	NVME_BROKEN=
}

# run_stack STACK REP: one stack's points.
run_stack() {
	case $1 in
	raw) stack_raw "$2" ;;
	nvme) stack_nvme "$2" ;;
	*) stack_rtrs "$2" "$1" ;;
	esac
}

# ---- the run ---------------------------------------------------------------

must "runs the stock kernel" grep -q -- "-amd64$" /proc/sys/kernel/osrelease
# The link: "ordered" (the default) keeps each flow of the veth on one
# CPU, as make check's guests do and as a NIC's receive-side scaling does
# (topology.sh, flows_in_order): RoCE needs a flow's packets in order,
# and a veth that reorders them makes rxe retransmit hundreds of times a
# point and can fail a QP.  "unordered" leaves the veth as it comes, the
# link of the runs before 2026-12-07, to compare with them.  "onecpu"
# receives every flow on CPU 0: which CPU a flow lands on then no longer
# depends on its hash, that is on the luck of a session's QP numbers.
LINK=${BENCH_LINK:-ordered}
case $LINK in
ordered) TOPO_FLOWS_IN_ORDER=1 ;;
unordered) TOPO_FLOWS_IN_ORDER=0 ;;
onecpu) TOPO_FLOWS_IN_ORDER=cpu0 ;;
*) must "BENCH_LINK is ordered, unordered or onecpu" false ;;
esac
must "veth pair with rxe on both ends" topology_pair
must "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
must "null_blk" modprobe null_blk nr_devices=1 gb=16
echo "nproc $(nproc) kernel $(uname -r) link $LINK reps $REPS fio ${FIO_S}s rtrs ${RTRS_S}s raw ${RAW_S}s" |
	tee "$RESULTS/setup"

for rep in $(seq "$REPS"); do
	n=${#STACKS[@]}
	for i in $(seq 0 $(( n - 1 ))); do
		s=${STACKS[$(( (i + rep - 1) % n ))]}
		echo "bench: repetition $rep, $s, at $(cut -d' ' -f1 /proc/uptime) s"
		run_stack "$s" "$rep"
	done
done

if [ -n "$PROFILE" ]; then
	PROFILING=1
	POINTS=$RESULTS/points-profiled
	mkdir -p "$RESULTS/profile"
	for s in ours-2.1 ours-2.0 mainline nvme; do
		[[ " ${STACKS[*]} " == *" $s "* ]] || continue
		echo "bench: profile pass, $s, at $(cut -d' ' -f1 /proc/uptime) s"
		run_stack "$s" p
	done
fi
