# SPDX-License-Identifier: GPL-2.0-or-later
#
# Scenario (test kernel, two guests joined by a QEMU socket netdev): rxe on
# each side's NIC, and RDMA traffic between the guests: rping over RDMA CM
# and a perftest RDMA WRITE bandwidth run.  RTRS_ROLE says which side
# this is.

SERVER=203.0.113.1
CLIENT=203.0.113.2

case "$RTRS_ROLE" in
server) me=$SERVER ;;
client) me=$CLIENT ;;
*) fail "role" "RTRS_ROLE is '$RTRS_ROLE'"; exit 1 ;;
esac

ip addr add "$me/24" dev eth0
ip link set eth0 up
check "rxe on eth0" rxe_add rxe0 eth0

# retry_until SECONDS CMD...: run CMD until it succeeds, for SECONDS at
# most; on failure, print the end of its last output.  Either side may
# start first or lose a half-made connection, so both sides retry.
retry_until() {
	local deadline=$((SECONDS + $1)) log=$RTRS_TMP/retry.log
	shift
	while [ $SECONDS -lt $deadline ]; do
		"$@" >"$log" 2>&1 && return 0
		sleep 2
	done
	tail -n 3 "$log"
	return 1
}

if [ "$RTRS_ROLE" = server ]; then
	check "rping server" retry_until 240 timeout 60 rping -s -a "$SERVER" -C 10
	check "ib_write_bw server" retry_until 240 timeout 60 \
		ib_write_bw -R -d rxe0 -s 65536 -n 200
else
	check "rping client" retry_until 180 timeout 20 \
		rping -c -a "$SERVER" -C 10 -v
	sleep 2
	check "ib_write_bw client" retry_until 180 timeout 40 \
		ib_write_bw -R -d rxe0 -s 65536 -n 200 "$SERVER"
fi
