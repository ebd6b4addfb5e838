# SPDX-License-Identifier: GPL-2.0-or-later
#
# Scenario (test kernel, one guest): two soft-RoCE devices over the two
# ends of a veth pair, and RDMA CM traffic from one device to the other.
#
# Both addresses are local, so by default the kernel would route between
# them through lo, and rxe would never see a packet.  Policy routing sends
# locally generated packets from one address to the other out of the veth
# end that owns the source; the local table, consulted after, still
# delivers what arrives.  Every path of a two-path test thus crosses a
# device pair, and taking one veth end down breaks exactly the paths on it.

. "$RTRS_TOP/tests/e2e/topology.sh"

check "veth pair with rxe on both ends" topology_pair
check "rping from rxe0 to rxe1 across the pair" \
	rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
