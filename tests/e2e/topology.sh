# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest topologies, sourced by scenarios.  Addresses come from the
# documentation ranges only.

PAIR_A=192.0.2.1
PAIR_B=192.0.2.2

# route_over_wire SRC DST DEV TABLE: packets made here from SRC to DST
# leave through DEV instead of lo.
route_over_wire() {
	ip rule add pref "$4" iif lo from "$1" to "$2" lookup "$4" &&
		ip route add "$2" dev "$3" src "$1" table "$4"
}

# topology_pair: veth0 (192.0.2.1, rxe0) <-> veth1 (192.0.2.2, rxe1).
topology_pair() {
	modprobe veth &&
	ip link add veth0 type veth peer name veth1 &&
	ip addr add "$PAIR_A/24" dev veth0 &&
	ip addr add "$PAIR_B/24" dev veth1 &&
	ip link set veth0 up && ip link set veth1 up || return 1
	# A burst of rxe packets must not overflow the backlog of the
	# receiving veth (1000 by default): each drop costs a retransmission.
	sysctl -qw net.core.netdev_max_backlog=65536 \
		net.ipv4.conf.all.accept_local=1 \
		net.ipv4.conf.veth0.accept_local=1 \
		net.ipv4.conf.veth1.accept_local=1 \
		net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.veth0.rp_filter=0 \
		net.ipv4.conf.veth1.rp_filter=0 || return 1
	ip rule add pref 1000 lookup local && ip rule del pref 0 &&
	route_over_wire "$PAIR_A" "$PAIR_B" veth0 100 &&
	route_over_wire "$PAIR_B" "$PAIR_A" veth1 101 || return 1
	rxe_add rxe0 veth0 && rxe_add rxe1 veth1
}

# A second pair: veth2 (198.51.100.1, rxe2) <-> veth3 (198.51.100.2, rxe3).
topology_second_pair() {
	ip link add veth2 type veth peer name veth3 &&
	ip addr add 198.51.100.1/24 dev veth2 &&
	ip addr add 198.51.100.2/24 dev veth3 &&
	ip link set veth2 up && ip link set veth3 up || return 1
	sysctl -qw net.ipv4.conf.veth2.accept_local=1 \
		net.ipv4.conf.veth3.accept_local=1 \
		net.ipv4.conf.veth2.rp_filter=0 \
		net.ipv4.conf.veth3.rp_filter=0 || return 1
	route_over_wire 198.51.100.1 198.51.100.2 veth2 102 &&
	route_over_wire 198.51.100.2 198.51.100.1 veth3 103 || return 1
	rxe_add rxe2 veth2 && rxe_add rxe3 veth3
}

# rxe_counter DEV COUNTER: one hardware counter of an rxe port.
rxe_counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"
}

# rping_pair SERVER_ADDR CLIENT_ADDR SRV_DEV CLT_DEV: 10 rping round trips
# over RDMA CM, which must show in the counters of both rxe devices (else
# the traffic took a shortcut).
rping_pair() {
	local spid rc sent0 rcvd0 sent1 rcvd1
	sent0=$(rxe_counter "$4" sent_pkts)
	rcvd0=$(rxe_counter "$3" rcvd_pkts)
	timeout 60 rping -s -a "$1" -C 10 >"$RTRS_TMP/rping-server.log" 2>&1 &
	spid=$!
	sleep 1
	timeout 60 rping -c -I "$2" -a "$1" -C 10 -v >"$RTRS_TMP/rping-client.log" 2>&1
	rc=$?
	wait "$spid" || rc=1
	if [ "$rc" -ne 0 ] || [ "$(grep -c 'ping data' "$RTRS_TMP/rping-client.log")" -ne 10 ]; then
		tail -n 3 "$RTRS_TMP/rping-client.log" "$RTRS_TMP/rping-server.log"
		return 1
	fi
	sent1=$(rxe_counter "$4" sent_pkts)
	rcvd1=$(rxe_counter "$3" rcvd_pkts)
	echo "$4 sent_pkts $sent0 -> $sent1, $3 rcvd_pkts $rcvd0 -> $rcvd1"
	[ "$sent1" -gt "$sent0" ] && [ "$rcvd1" -gt "$rcvd0" ]
}
