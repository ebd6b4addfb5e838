# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# The guest side of make run (tests/harness/run.sh), on the stock kernel:
# rxe over a veth pair, our rtrs modules and rnbd, a remote null_blk mapped
# over $RUN_PATHS path(s), fio with the job file $RUN_JOB.  Leaves in
# /run/results: session and transport (text for the user), fio.json, and
# the usual checks.  Stops at the first step that fails.

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/rnbd-lib.sh"

SESS=run
paths=("ip:$PAIR_A@ip:$PAIR_B")
[ "${RUN_PATHS:-1}" = 2 ] && paths+=("ip:$PAIR_B@ip:$PAIR_A")

# must NAME CMD...: a check that ends the run when it fails.
must() {
	check "$@"
	grep -q "^FAIL $RTRS_NAME/$1" "$RESULTS/checks" && exit 1
	return 0
}

map() {
	rnbd_map "$SESS" /dev/nullb0 "${paths[@]}" >"$RTRS_TMP/dev"
}

rxe_counters() {
	local d
	for d in rxe0 rxe1; do
		echo "$d sent_pkts $(rxe_counter $d sent_pkts) rcvd_pkts $(rxe_counter $d rcvd_pkts)"
	done
}

# The session as rnbd and rtrs show it.
show_session() {
	local dev=$1 f p
	echo "rnbd: /dev/$dev is $(cat "/sys/block/$dev/rnbd/mapping_path") on the" \
		"server, $(( $(cat "/sys/block/$dev/size") / 2048 )) MiB," \
		"session $(cat "/sys/block/$dev/rnbd/session"), state" \
		"$(cat "/sys/block/$dev/rnbd/state"), access $(cat "/sys/block/$dev/rnbd/access_mode")"
	for f in /sys/class/rnbd-server/ctl/devices/*/sessions/"$SESS"; do
		[ -d "$f" ] && echo "rnbd server: $(basename "$(dirname "$(dirname "$f")")")" \
			"exported to session $SESS, access $(cat "$f/access_mode" 2>/dev/null)"
	done
	echo "rtrs session $SESS: ${#paths[@]} path(s) asked for"
	for p in "${paths[@]}"; do
		echo "  path $p"
	done
	if [ -d "/sys/class/rtrs-client/$SESS" ]; then
		echo "rtrs client sysfs (/sys/class/rtrs-client/$SESS):"
		grep -r -s . "/sys/class/rtrs-client/$SESS/" | sed "s|/sys/class/rtrs-client/$SESS/|  |"
	fi
	echo "rtrs client connections (RDMA CM):"
	rdma res show cm_id | grep 'rtrs_client' | awk '
		{
			for (i = 1; i < NF; i++)
				v[$i] = $(i + 1)
			split(v["src-addr"], s, ":")
			split(v["dst-addr"], d, ":")
			n[v["link"] " " s[1] " -> " d[1] " " v["state"]]++
		}
		END { for (k in n) print "  " k ", " n[k] " connection(s)" }' | sort
}

must "runs the stock kernel" grep -q -- "-amd64$" /proc/sys/kernel/osrelease
must "veth pair with rxe on both ends" topology_pair
# First contact over a fresh rxe pair (neighbours, GIDs) can outlast the
# client's connect timeout under TCG; rping makes it before the map.
must "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
must "null_blk" modprobe null_blk nr_devices=1 gb=16
must "load rtrs and rnbd" rnbd_load "$(rtrs_build_dir)"
must "map /dev/nullb0 over rtrs" map
dev=$(cat "$RTRS_TMP/dev")
show_session "$dev" | tee "$RESULTS/session"
rxe_counters >"$RTRS_TMP/rxe-before"

# run_fio: the job; on failure, fio's first complaint.
run_fio() {
	RNBD_DEV=/dev/$dev fio --output-format=json --output="$RESULTS/fio.json" \
		"$RUN_JOB" >"$RTRS_TMP/fio.log" 2>&1 && return 0
	grep -m 1 . "$RTRS_TMP/fio.log"
	return 1
}

must "fio" run_fio

rxe_counters >"$RTRS_TMP/rxe-after"
{
	echo "RDMA traffic during fio (rxe hw_counters):"
	paste -d' ' "$RTRS_TMP/rxe-before" "$RTRS_TMP/rxe-after" |
		awk '{ printf "  %s: sent %d packets, received %d\n", $1, $8 - $3, $10 - $5 }'
} | tee "$RESULTS/transport"
must "unmap" rnbd_unmap "$dev"
must "unload" rnbd_unload
