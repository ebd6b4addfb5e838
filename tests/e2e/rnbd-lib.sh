# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
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
	rnbd_close_watch
}

# sess_gone [SESS]: the client's transport session SESS (any, when not
# given) is gone from sysfs and so is every RDMA CM id of rtrs_client
# (ours removes the directory first, mainline at the end of
# rtrs_clt_close()).
sess_gone() {
	[ -z "$(ls "/sys/class/rtrs-client/${1:-}" 2>/dev/null)" ] &&
		! rdma res show cm_id 2>/dev/null | grep -q rtrs_client
}

# rnbd-client drops a session's last reference from a work item of the
# system workqueue, msg_close_conf(), the close confirmation of its last
# device: that closes the transport session, then frees rnbd-client's
# own (tag set, list entry, memory).  Its module exit does not wait for
# that work: it warns when a session is still on its list, and would go
# from under the work.  A trace instance of our own counts the runs of
# that work that started and that ended, for rnbd_close_work_done.
RNBD_TRACE=/sys/kernel/tracing/instances/rnbd-close-work

# rnbd_close_watch: from now on, count the runs of the close work of the
# rnbd-client loaded now (ours or mainline).
rnbd_close_watch() {
	local fn e
	fn=$(awk '$3 == "msg_close_conf" && $4 == "[rnbd_client]" { print $1 }' \
		/proc/kallsyms)
	if [ -z "$fn" ] || [ "$fn" = 0000000000000000 ]; then
		echo "rnbd_close_watch: no address of msg_close_conf [rnbd_client]"
		return 1
	fi
	rnbd_close_unwatch
	# No task names: recording them hooks sched_switch when the first
	# event is enabled and unhooks it when the last is disabled (see
	# lossy.sh).  An instance has no record-cmd of its own: it takes the
	# top level's when it is made.
	echo 0 >/sys/kernel/tracing/options/record-cmd || return 1
	mkdir "$RNBD_TRACE" || return 1
	for e in workqueue_execute_start workqueue_execute_end; do
		if ! echo "function == 0x$fn" >"$RNBD_TRACE/events/workqueue/$e/filter" ||
			! echo 1 >"$RNBD_TRACE/events/workqueue/$e/enable"; then
			echo "rnbd_close_watch: cannot trace $e"
			return 1
		fi
	done
}

rnbd_close_unwatch() {
	[ ! -d "$RNBD_TRACE" ] || rmdir "$RNBD_TRACE"
}

# rnbd_close_work_done: the close work has run since rnbd_close_watch,
# and every run of it that started has ended.
rnbd_close_work_done() {
	local started ended
	started=$(grep -c 'workqueue_execute_start:' "$RNBD_TRACE/trace")
	ended=$(grep -c 'workqueue_execute_end:' "$RNBD_TRACE/trace")
	[ "$ended" -gt 0 ] && [ "$started" -eq "$ended" ] && return 0
	echo "rnbd-client's close work: $started runs started, $ended ended"
	return 1
}

# rnbd_close_work_wait SECONDS: wait for rnbd_close_work_done, for
# SECONDS at most.
rnbd_close_work_wait() {
	wait_for "$1" rnbd_close_work_done >/dev/null || { rnbd_close_work_done; return 1; }
}

# rnbd_unload: in reverse order, once our client has closed every
# session and rnbd-client's close work has freed its own.
rnbd_unload() {
	local m
	wait_for 60 sess_gone || { echo "a client session does not go"; return 1; }
	rnbd_close_work_wait 60 || return 1
	rnbd_close_unwatch
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
	WAIT_POLL=0.1 wait_for 5 not test -e "/sys/block/$1" ||
		{ echo "rnbd_unmap: /sys/block/$1 still there" >&2; return 1; }
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
