# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
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

# Scenarios that share a guest boot (guest-init.sh) share a pair too: a
# pair still as it was made is kept for the next scenario, as creating
# its two rxe devices costs 10 to 20 s under TCG.  TOPO holds, per link,
# its carrier changes once the pair was up: a link that went down since
# (a flap, see recreate_rxe) makes its pair one to take away and make
# anew.  pairN.kept says that this scenario kept pair N (guest-init.sh
# clears it between two scenarios).
TOPO=/run/topology

# pair_intact N: pair N (1: veth0/veth1, rxe0/rxe1, rule tables 100/101;
# 2: veth2/veth3, rxe2/rxe3, 102/103) is as it was made: links up with
# no carrier change since, each rxe ACTIVE on its link, the routes over
# the wire in place, no qdisc added.
pair_intact() {
	local i dev
	for i in $((2 * $1 - 2)) $((2 * $1 - 1)); do
		dev=veth$i
		[ -f "$TOPO/$dev" ] && [ -e "/sys/class/net/$dev" ] || return 1
		[ "$(cat "/sys/class/net/$dev/carrier_changes")" = "$(cat "$TOPO/$dev")" ] ||
			return 1
		rdma link show "rxe$i/1" 2>/dev/null | grep -q "state ACTIVE .*netdev $dev\b" ||
			return 1
		ip route show table $((100 + i)) | grep -q . || return 1
		tc qdisc show dev "$dev" | grep -q netem && return 1
	done
	return 0
}

# pair_made N: remember pair N as made, for pair_intact.
pair_made() {
	local i
	mkdir -p "$TOPO"
	for i in $((2 * $1 - 2)) $((2 * $1 - 1)); do
		cat "/sys/class/net/veth$i/carrier_changes" >"$TOPO/veth$i"
	done
}

# pair_kept N: pair N is intact from the scenario before; say so.
pair_kept() {
	pair_intact "$1" || return 1
	touch "$TOPO/pair$1.kept"
	echo "pair $1 kept from the scenario before"
}

# on_new_pair N NAME CMD...: check NAME CMD only when this scenario made
# pair N: a kept pair carried RDMA CM traffic in the scenario before.
on_new_pair() {
	local n=$1
	shift
	[ -e "$TOPO/pair$n.kept" ] || check "$@"
}

# local_table_last: the local table's rule after those of route_over_wire
# (once: the other pair may have moved it already).
local_table_last() {
	{ ip rule show pref 1000 | grep -q . || ip rule add pref 1000 lookup local; } &&
		{ ! ip rule show pref 0 | grep -q . || ip rule del pref 0; }
}

# topology_pair: veth0 (192.0.2.1, rxe0) <-> veth1 (192.0.2.2, rxe1).
topology_pair() {
	pair_kept 1 && return 0
	modprobe veth &&
	ip link add veth0 type veth peer name veth1 &&
	ip addr add "$PAIR_A/24" dev veth0 &&
	ip addr add "$PAIR_B/24" dev veth1 &&
	ip link set veth0 up && ip link set veth1 up &&
	flows_in_order veth0 veth1 || return 1
	# A burst of rxe packets must not overflow the backlog of the
	# receiving veth (1000 by default): each drop costs a retransmission.
	sysctl -qw net.core.netdev_max_backlog=65536 \
		net.ipv4.conf.all.accept_local=1 \
		net.ipv4.conf.veth0.accept_local=1 \
		net.ipv4.conf.veth1.accept_local=1 \
		net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.veth0.rp_filter=0 \
		net.ipv4.conf.veth1.rp_filter=0 || return 1
	local_table_last &&
	route_over_wire "$PAIR_A" "$PAIR_B" veth0 100 &&
	route_over_wire "$PAIR_B" "$PAIR_A" veth1 101 || return 1
	rxe_add rxe0 veth0 && rxe_add rxe1 veth1 && pair_made 1
}

# flows_in_order DEV...: each flow a veth DEV receives goes to one CPU.
# A veth hands a packet to the backlog of the CPU that sent it, and rxe
# sends a QP's packets from whichever CPU runs its tasks, so on more than
# one CPU two packets of a QP can overtake each other.  rxe takes that as
# a loss and retransmits (hundreds of times a benchmark point: its
# out_of_seq_request counter).  Worse, a retransmitted RDMA READ request
# can then arrive after the SEND_WITH_INV that answered it, and rxe fails
# the QP when its replay finds the MR invalidated, with no completion on
# either side.  A NIC's receive-side scaling keeps a flow in order; RPS
# does the same here: it hashes each flow (rxe gives each QP its own UDP
# source port) to one CPU's backlog.  TOPO_FLOWS_IN_ORDER=0 leaves the
# veth as it comes (make bench BENCH_LINK=unordered); TOPO_FLOWS_IN_ORDER=cpu0
# sends every flow to CPU 0 (make bench BENCH_LINK=onecpu).
flows_in_order() {
	local dev n mask

	n=$(nproc)
	[ "$n" -gt 1 ] && [ "${TOPO_FLOWS_IN_ORDER:-1}" != 0 ] || return 0
	[ "$n" -lt 32 ] || n=31
	mask=$(printf '%x' $(((1 << n) - 1)))
	[ "${TOPO_FLOWS_IN_ORDER:-1}" != cpu0 ] || mask=1
	for dev in "$@"; do
		echo "$mask" >"/sys/class/net/$dev/queues/rx-0/rps_cpus" ||
			return 1
	done
}

# restore_routes: put back the routes that send each pair's traffic over
# its wire (both pairs: topology_pair and topology_second_pair); the
# kernel drops a device's routes when it goes down.
restore_routes() {
	ip route replace "$PAIR_B" dev veth0 src "$PAIR_A" table 100 &&
	ip route replace "$PAIR_A" dev veth1 src "$PAIR_B" table 101 &&
	ip route replace 198.51.100.2 dev veth2 src 198.51.100.1 table 102 &&
	ip route replace 198.51.100.1 dev veth3 src 198.51.100.2 table 103
}

# link_up DEV...: bring links back up, with their routes.
link_up() {
	local dev
	for dev in "$@"; do
		ip link set "$dev" up || return 1
	done
	restore_routes
}

# recreate_rxe RXE NETDEV: delete a soft-RoCE device and add it again.
# After a link flap with connections established, new RDMA CM
# connections through the same rxe device time out in these guests (the
# server accepts, the client never sees the reply) until the device is
# created anew; rping over a flapped link without connections works.
# Scenarios follow each flap with this, as a host would reload its HCA.
recreate_rxe() {
	rdma link delete "$1" && rxe_add "$1" "$2"
}

# A second pair: veth2 (198.51.100.1, rxe2) <-> veth3 (198.51.100.2, rxe3).
topology_second_pair() {
	pair_kept 2 && return 0
	ip link add veth2 type veth peer name veth3 &&
	ip addr add 198.51.100.1/24 dev veth2 &&
	ip addr add 198.51.100.2/24 dev veth3 &&
	ip link set veth2 up && ip link set veth3 up &&
	flows_in_order veth2 veth3 || return 1
	sysctl -qw net.ipv4.conf.veth2.accept_local=1 \
		net.ipv4.conf.veth3.accept_local=1 \
		net.ipv4.conf.veth2.rp_filter=0 \
		net.ipv4.conf.veth3.rp_filter=0 || return 1
	route_over_wire 198.51.100.1 198.51.100.2 veth2 102 &&
	route_over_wire 198.51.100.2 198.51.100.1 veth3 103 || return 1
	rxe_add rxe2 veth2 && rxe_add rxe3 veth3 && pair_made 2
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
	nap 1
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
