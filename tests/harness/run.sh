#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# make run: the main job, on one of Debian's stock kernels, 6.1 unless
# KERNEL=6.12 (no kernel build).  Builds our modules and rnbd of that
# kernel's series against its stock headers, boots the stock kernel in a
# QEMU guest with two rxe devices over a veth pair, loads our
# rtrs server and client and rnbd on them, maps the server's null_blk over
# an rtrs session, runs fio on it, and prints the session, its paths and
# fio's IOPS, bandwidth and latency.
#
#   make run [KERNEL=6.1|6.12] [PATHS=1|2]
#            [FIO_JOB="rw=randread bs=4k iodepth=32 runtime=15"]
#
# FIO_JOB holds fio job options, name=value separated by spaces; they come
# after the defaults (rw=randrw bs=4k iodepth=32 runtime=15, time based)
# and so override them.  Logs go to results/run/.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

t0=$(date +%s)
H=$RTRS_TOP/tests/harness
JOB=run
LOGS=$RTRS_RESULTS/run
PATHS=${PATHS:-1}
FIO_JOB=${FIO_JOB:-}
KERNEL=${KERNEL:-6.1}


case "$PATHS" in
1|2) ;;
*) echo "make run: PATHS must be 1 or 2, not '$PATHS'" >&2; exit 2 ;;
esac
for opt in $FIO_JOB; do
	[[ "$opt" =~ ^[a-z_0-9]+(=[A-Za-z0-9_.,:%+-]+)?$ ]] ||
		{ echo "make run: FIO_JOB: '$opt' is not a fio option (name=value)" >&2; exit 2; }
done

# The guest's kernel, which also names where its modules are built (the
# guest looks for them in build/<its kernel>).
case "$KERNEL" in
6.1) gkernel=stock ;;
6.12) gkernel=stock-6.12 ;;
*) echo "make run: KERNEL must be 6.1 or 6.12, not '$KERNEL'" >&2; exit 2 ;;
esac

job_stock_kernel "$(rtrs_stock_meta "$gkernel")"

# The modules, built in a copy of the tree where the guest looks for them.
B=$RTRS_TOP/build/$gkernel
step "building rtrs against $KDIR" "$LOGS/build.log" \
	eval 'copy_tree "$B" && make -C "$B" KDIR="$KDIR" -j"$RTRS_JOBS"'
step "building rnbd (Linux $KERNEL, unmodified) on it" "$LOGS/build-rnbd.log" \
	"$H/rnbd.sh" "$KDIR" "$B" "$KERNEL"

# The fio job; the guest fills in the device.
{
	echo "[rnbd]"
	echo 'filename=${RNBD_DEV}'
	for opt in ioengine=libaio direct=1 time_based=1 group_reporting=1 \
		rw=randrw bs=4k iodepth=32 runtime=15 $FIO_JOB; do
		echo "$opt"
	done
} >"$B/run.fio"
cp "$B/run.fio" "$LOGS/job.fio"
runtime=$(sed -n 's/^runtime=//p' "$B/run.fio" | tail -n 1)

rtrs_log "guest: stock kernel $sver, rnbd over rtrs over $PATHS path(s), fio for ${runtime:-?} s"
RTRS_RESULTS=$LOGS "$H/guest.sh" --name guest --kernel "$gkernel" \
	--script "$H/run-guest.sh" --mem 1024 --timeout 600 \
	--env "RUN_PATHS=$PATHS" --env "RUN_JOB=$B/run.fio" >"$LOGS/guest.log" 2>&1
G=$LOGS/guest

# ---- what a user wants to see ------------------------------------------

echo
[ -f "$G/session" ] && cat "$G/session"

# The job's options that matter to a reader, each with its last value.
job_options() {
	awk -F= '!/^\[/ && $1 !~ /^(filename|ioengine|direct|time_based|group_reporting)$/ {
			if (!($1 in v)) k[n++] = $1
			v[$1] = $0
		}
		END { for (i = 0; i < n; i++) printf "%s%s", (i ? " " : ""), v[k[i]] }' "$B/run.fio"
}

# fio_dir read|write: one line of figures, when fio did IO that way.
fio_dir() {
	jq -r --arg d "$1" '.jobs[0][$d] | select(.io_bytes > 0) |
		[.iops, .bw / 1024, .lat_ns.mean / 1000,
		 .clat_ns.percentile["99.000000"] / 1000] | @tsv' "$G/fio.json" |
		while read -r iops mib lat p99; do
			printf '  %-6s %8.0f IOPS %9.2f MiB/s   latency avg %8.0f us, p99 %8.0f us\n' \
				"$1" "$iops" "$mib" "$lat" "$p99"
		done
}
if [ -s "$G/fio.json" ] && jq -e '.jobs[0]' "$G/fio.json" >/dev/null 2>&1; then
	echo "fio on /dev/$(jq -r '.jobs[0]["job options"].filename // "rnbd"' "$G/fio.json" | xargs basename)" \
		"($(job_options)):"
	fio_dir read
	fio_dir write
	jq -r '.jobs[0] | "  errors: \(.error)"' "$G/fio.json"
fi
[ -f "$G/transport" ] && cat "$G/transport"
echo
echo "full log: $LOGS (guest/console.log, guest/script.log, guest/fio.json, build logs)"
echo "took $(( $(date +%s) - t0 )) s"

problems=$(grep -h '^FAIL' "$G/host-checks" "$G/checks" 2>/dev/null)
[ -z "$problems" ] || failed "$(sed 's/^FAIL guest\///' <<<"$problems")"
echo "make run: OK"
