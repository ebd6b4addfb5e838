# SPDX-License-Identifier: GPL-2.0-or-later
#
# rnbd on our transport, sourced by guest scenarios: load the modules, map
# and unmap remote devices through rnbd-client's sysfs.

RNBD_CTL=/sys/class/rnbd-client/ctl

# rnbd_load BUILD_DIR [SERVER_PARAM...]: our rtrs modules and the rnbd
# built on them (tests/harness/rnbd.sh), by path: the mainline modules of
# the same names in /lib/modules must not be the ones that load.
# SERVER_PARAMs go to rtrs-server.
rnbd_load() {
	local dir=$1 m args
	shift
	modprobe -a ib_core rdma_cm || return 1
	for m in rtrs-core rtrs-server rtrs-client rnbd/rnbd-server rnbd/rnbd-client; do
		args=()
		[ "$m" = rtrs-server ] && args=("$@")
		insmod "$dir/$m.ko" "${args[@]}" || { echo "insmod $m.ko failed"; return 1; }
	done
}

# sess_gone [SESS]: the client's transport session SESS (any, when not
# given) is gone from sysfs and so is every RDMA CM id of rtrs_client
# (ours removes the directory first, mainline at the end of
# rtrs_clt_close()).
sess_gone() {
	[ -z "$(ls "/sys/class/rtrs-client/${1:-}" 2>/dev/null)" ] &&
		! rdma res show cm_id 2>/dev/null | grep -q rtrs_client
}

# rnbd_unload: in reverse order.  rnbd-client drops a session's last
# reference from a work item (the close confirmation of its last device),
# and its module exit does not wait for that work: it warns when a session
# is still on its list.  So wait, bounded, until our client has closed
# every session, then give rnbd-client a moment to unlist it.
rnbd_unload() {
	local m
	wait_for 60 sess_gone || { echo "a client session does not go"; return 1; }
	sleep 2
	for m in rnbd-client rnbd-server rtrs-client rtrs-server rtrs-core; do
		rmmod "$m" || { echo "rmmod $m failed"; return 1; }
	done
}

# rnbd_map SESSNAME DEVICE_PATH PATH...: map the server's DEVICE_PATH over
# a session of one path per PATH ("ip:SRC@ip:DST"); prints the name of the
# new block device (rnbd0, ...).
rnbd_map() {
	local sess=$1 dev=$2 opts p link
	shift 2
	opts="sessname=$sess"
	for p; do
		opts+=" path=$p"
	done
	opts+=" device_path=$dev"
	echo "$opts" >"$RNBD_CTL/map_device" || return 1
	# rnbd-client links the disk as <device path, '/' as '!'>@<session>.
	link=$RNBD_CTL/devices/${dev//\//!}@$sess
	[ -L "$link" ] || { echo "rnbd_map: no $link" >&2; return 1; }
	p=$(basename "$(readlink -f "$link")")
	[ -b "/dev/$p" ] || { echo "rnbd_map: no /dev/$p" >&2; return 1; }
	echo "$p"
}

# rnbd_unmap NAME: unmap block device NAME (rnbd0, ...) and wait until it
# is gone.
rnbd_unmap() {
	echo normal >"/sys/block/$1/rnbd/unmap_device" || return 1
	for _ in $(seq 50); do
		[ -e "/sys/block/$1" ] || return 0
		sleep 0.1
	done
	echo "rnbd_unmap: /sys/block/$1 still there" >&2
	return 1
}

# fio_run NAME ARGS...: one fio job on the remote device; its output is
# kept in F (the scenario's fio directory), its exit status (verify errors
# included) is the result.  A job that never ends fails after 300 s,
# unless its IO is stuck in the kernel.
fio_run() {
	local name=$1
	shift
	timeout 300 fio --name="$name" --ioengine=libaio --direct=1 --verify_fatal=1 \
		"$@" --output="$F/$name.out" 2>"$F/$name.err" && return 0
	# The first complaint: fio's verify errors go to stderr.
	cat "$F/$name.err" "$F/$name.out" | grep -m 1 -i -E 'verify|error|err=' ||
		echo "fio failed, see $F/$name.out"
	return 1
}
