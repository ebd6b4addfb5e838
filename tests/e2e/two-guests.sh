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

# wait_for CMD...: retry CMD until it succeeds, for two minutes at most.
wait_for() {
	local deadline=$((SECONDS + 120))
	while [ $SECONDS -lt $deadline ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 2
	done
	return 1
}

if [ "$RTRS_ROLE" = server ]; then
	check "rping server" timeout 180 rping -s -a "$SERVER" -C 10
	check "ib_write_bw server" timeout 180 ib_write_bw -R -d rxe0 -s 65536 -n 200
else
	# The server may still be booting: retry until it listens.
	check "rping client" wait_for timeout 20 rping -c -a "$SERVER" -C 10 -v
	sleep 2
	check "ib_write_bw client" wait_for timeout 40 \
		ib_write_bw -R -d rxe0 -s 65536 -n 200 "$SERVER"
fi
