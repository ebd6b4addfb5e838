# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Scenario (Debian's stock kernel, one guest): the modules built against the
# stock headers load and unload on the kernel users run, next to rxe.

check "runs the stock kernel" grep -q -- "-amd64$" /proc/sys/kernel/osrelease
check "modprobe veth" modprobe veth
check "modprobe rdma_cm" modprobe -a ib_core rdma_cm
check "veth pair" ip link add veth0 type veth peer name veth1
ip link set veth0 up
ip link set veth1 up
check "rxe on stock" rxe_add rxe0 veth0
load_unload_rtrs
