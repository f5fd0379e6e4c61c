#!/bin/sh
# bench/dfs_volume.sh -- a real distributed file system on one machine, for
# make bench-dfs (bench/run-bench-dfs) and the tests (t/dfs.sh): a GlusterFS
# volume of one brick on the local disk, served by glusterd and a brick
# daemon over a loopback address and mounted through FUSE, so that every
# request of a program on it is a real RPC (real locks, real close-to-open
# semantics), not the delay layer's simulation.
#
#   dfs_volume.sh start DIR [NAME]   make a new volume and mount it on DIR
#   dfs_volume.sh stop DIR [NAME]    unmount it, stop and delete the volume,
#                                    remove its brick; stop glusterd when
#                                    this script started it and no volume
#                                    is left
#   dfs_volume.sh set DIR OPTION VALUE [NAME]
#                                    set a volume option (gluster volume
#                                    set), and wait until the client that
#                                    DIR mounts runs with it
#   dfs_volume.sh status [DIR]       what is running; exit 0 when DIR is
#                                    mounted from its volume
#
# Exit status 0, 1 on an error, 77 when the volume cannot be set up on this
# machine (not root, no FUSE, GlusterFS not installed, glusterd does not
# start), with the reason on stderr.
#
# NAME defaults to one derived from DIR (ffio-<checksum of DIR's path>), so
# that `stop DIR` finds what `start DIR` made, and two callers with two
# mount points never share a volume.  Both commands first remove whatever a
# crashed run left for that NAME and DIR (a mount, a stale FUSE client, the
# volume, its brick), so they can be repeated.  Volume operations of
# concurrent callers are serialised by a lock; glusterd is shared.
#
# Addresses: gluster refuses localhost and 127.0.0.1 for a brick, so the
# volume lives on another loopback address, 127.0.1.1 (FFIO_DFS_HOST); a
# glusterd started here listens on that address only, and the brick
# daemon binds it too.  State (bricks, logs, the lock, the pid of the
# glusterd started here) is kept in FFIO_DFS_STATE (/var/tmp/ffio-dfs: the
# local disk).
set -u
host=${FFIO_DFS_HOST:-127.0.1.1}
state=${FFIO_DFS_STATE:-/var/tmp/ffio-dfs}
me=dfs_volume

say() { echo "$me: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }
die() { say "$*"; exit 1; }
# gluster's CLI, never interactive, never hanging for ever.  (The daemons
# must not inherit descriptor 9, the lock: they would hold it for ever.)
g() { timeout 120 gluster --mode=script "$@" 9>&-; }

usage() {
	echo "usage: $me start DIR [NAME] | stop DIR [NAME] | set DIR OPTION VALUE [NAME] | status [DIR]" >&2
	exit 2
}

# The absolute path of $1 without a trailing slash (DIR may not exist).
abspath() {
	case $1 in
	/*) p=$1 ;;
	*) p=$(pwd)/$1 ;;
	esac
	while [ "${p%/}" != "$p" ] && [ "$p" != / ]; do p=${p%/}; done
	printf '%s\n' "$p"
}

name_of() { echo "ffio-$(printf '%s' "$1" | cksum | cut -d' ' -f1)"; }

# Is DIR a mount point (of anything)?  /proc/mounts escapes blanks as \040.
mounted() {
	D=$(printf '%s' "$1" | sed 's/ /\\040/g') awk '$2 == ENVIRON["D"] { f = 1 } END { exit !f }' /proc/mounts
}

glusterd_pid() { # the running glusterd, if any
	for p in $(pgrep -x glusterd 2>/dev/null); do echo "$p"; return 0; done
	return 1
}

# Processes of NAME: its FUSE clients and its brick daemon (exact matches
# on the volume's own arguments, never on a program name alone).
volume_pids() {
	pgrep -f -- "glusterfsd? .*--volfile-id(=/| )$1( |\\.|\$)" 2>/dev/null
}

wait_gone() { # pid seconds: wait until the process is gone
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt $(($2 * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	! kill -0 "$1" 2>/dev/null
}

checks() {
	[ "$(id -u)" = 0 ] || skip "needs root (glusterd, mount)"
	for c in glusterd gluster mount.glusterfs flock; do
		command -v "$c" >/dev/null 2>&1 ||
			skip "$c not found (Debian: apt-get install glusterfs-server glusterfs-client)"
	done
	[ -c /dev/fuse ] || skip "/dev/fuse is missing: no FUSE in this kernel or container"
	( : <>/dev/fuse ) 2>/dev/null || skip "/dev/fuse cannot be opened: FUSE is not usable here"
}

lock() {
	mkdir -p "$state" || die "cannot create $state"
	exec 9>"$state/lock"
	flock -w 300 9 || die "another $me holds $state/lock for more than 300 s"
}

# Start glusterd unless one runs; record that it is ours.
ensure_glusterd() {
	if glusterd_pid >/dev/null; then
		i=0
		until g volume list >/dev/null 2>&1; do
			i=$((i + 1))
			[ $i -lt 30 ] || skip "glusterd runs (pid $(glusterd_pid)) but does not answer"
			sleep 1
		done
		return 0
	fi
	rm -f "$state/glusterd.pid"
	glusterd -p "$state/glusterd.pid" -l "$state/glusterd.log" \
		--xlator-option "management.transport.socket.bind-address=$host" 9>&- ||
		skip "glusterd did not start (exit $?; log: $state/glusterd.log)"
	i=0
	until g volume list >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -ge 30 ]; then
			tail -n 5 "$state/glusterd.log" 2>/dev/null | sed "s/^/$me: glusterd.log: /" >&2
			skip "glusterd started but does not answer after 30 s"
		fi
		sleep 1
	done
	say "started glusterd (pid $(cat "$state/glusterd.pid" 2>/dev/null), $host:24007)"
}

# Stop glusterd if this script started it and no volume is left.
release_glusterd() {
	pid=$(cat "$state/glusterd.pid" 2>/dev/null) || return 0
	if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != glusterd ]; then
		rm -f "$state/glusterd.pid"
		return 0
	fi
	if g volume list 2>/dev/null | grep -qv '^No volumes present'; then
		return 0 # other volumes still use it
	fi
	kill "$pid" 2>/dev/null
	wait_gone "$pid" 10 || { kill -9 "$pid" 2>/dev/null; wait_gone "$pid" 5; }
	rm -f "$state/glusterd.pid"
	say "stopped glusterd (pid $pid)"
}

# Remove everything of NAME and DIR: mount, clients, volume, brick.
cleanup() { # dir name
	c_dir=$1 c_name=$2
	if mounted "$c_dir"; then
		umount "$c_dir" 2>/dev/null || umount -l "$c_dir" 2>/dev/null ||
			die "cannot unmount $c_dir"
	fi
	known=0
	[ -d "/var/lib/glusterd/vols/$c_name" ] && known=1
	if [ $known = 1 ] || glusterd_pid >/dev/null; then
		[ $known = 1 ] && ensure_glusterd
		if g volume info "$c_name" >/dev/null 2>&1; then
			g volume stop "$c_name" force >/dev/null 2>&1
			g volume delete "$c_name" >/dev/null 2>&1 ||
				die "cannot delete volume $c_name: $(g volume delete "$c_name" 2>&1)"
		fi
	fi
	for pid in $(volume_pids "$c_name"); do
		kill "$pid" 2>/dev/null
		wait_gone "$pid" 5 || kill -9 "$pid" 2>/dev/null
	done
	rm -rf "/var/run/gluster/vols/$c_name" "$state/$c_name"
}

# Volumes of this script that a crashed run left: a state directory whose
# volume no FUSE client serves.  (start and stop hold the lock from
# creating a volume to mounting it, so a live one always has its client.)
reap_stale() {
	for st in "$state"/ffio-*; do
		[ -d "$st" ] || continue
		n=${st##*/}
		pgrep -f -- "glusterfs .*--volfile-id=/$n( |\$)" >/dev/null 2>&1 && continue
		d=$(cat "$st/mountpoint" 2>/dev/null) || d=/nonexistent
		say "removing $n, left by an earlier run"
		cleanup "$d" "$n"
	done
}

cmd=${1:-}
[ $# -ge 1 ] && shift
case $cmd in
start)
	[ $# -ge 1 ] || usage
	dir=$(abspath "$1")
	name=${2:-$(name_of "$dir")}
	checks
	lock
	cleanup "$dir" "$name"
	reap_stale
	ensure_glusterd
	brick=$state/$name/brick
	mkdir -p "$brick" "$dir" || die "cannot create $brick or $dir"
	echo "$dir" >"$state/$name/mountpoint"
	# force: the brick is on the root file system (gluster asks for a
	# partition of its own otherwise)
	out=$(g volume create "$name" "$host:$brick" force 2>&1) || {
		release_glusterd
		skip "gluster volume create $name $host:$brick failed: $out"
	}
	out=$(g volume start "$name" 2>&1) || {
		cleanup "$dir" "$name"
		release_glusterd
		skip "gluster volume start $name failed: $out"
	}
	if ! mount -t glusterfs -o "log-file=$state/$name/client.log" "$host:/$name" "$dir" 2>"$state/$name/mount.err" 9>&- ||
		! mounted "$dir"; then
		why=$(cat "$state/$name/mount.err" "$state/$name/client.log" 2>/dev/null | grep -E ' E |rror' | tail -n 3)
		cleanup "$dir" "$name"
		release_glusterd
		skip "mount -t glusterfs $host:/$name $dir failed: $why"
	fi
	# A first file proves the volume is usable.
	if ! (echo ok >"$dir/.ffio-dfs-probe" && rm -f "$dir/.ffio-dfs-probe") 2>/dev/null; then
		cleanup "$dir" "$name"
		release_glusterd
		skip "the volume mounted on $dir cannot be written"
	fi
	say "volume $name (brick $host:$brick) mounted on $dir (fuse.glusterfs)"
	;;
stop)
	[ $# -ge 1 ] || usage
	dir=$(abspath "$1")
	name=${2:-$(name_of "$dir")}
	[ "$(id -u)" = 0 ] || skip "needs root"
	command -v gluster >/dev/null 2>&1 || { mounted "$dir" && umount -l "$dir"; exit 0; }
	lock
	cleanup "$dir" "$name"
	reap_stale
	release_glusterd
	left=$(volume_pids "$name")
	[ -z "$left" ] || die "processes of $name still run: $left"
	say "volume $name removed"
	;;
set)
	[ $# -ge 3 ] || usage
	dir=$(abspath "$1")
	name=${4:-$(name_of "$dir")}
	opt=$2 val=$3
	mounted "$dir" || die "$dir is not mounted"
	now=$(g volume get "$name" "$opt" 2>/dev/null | awk -v o="$opt" '$1 == o { print $2 }')
	[ "$now" = "$val" ] && exit 0
	# The client switches to the new graph (its volfile, under .meta)
	# after glusterd tells it; wait until it has.
	vf=$dir/.meta/graphs/active/volfile
	before=$(cksum <"$vf" 2>/dev/null)
	out=$(g volume set "$name" "$opt" "$val" 2>&1) || die "gluster volume set $name $opt $val: $out"
	i=0
	while [ "$(cksum <"$vf" 2>/dev/null)" = "$before" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || die "the client on $dir still runs the old graph after 30 s"
		ls "$dir" >/dev/null 2>&1
		sleep 0.1
	done
	say "volume $name: $opt = $val"
	;;
status)
	if pid=$(glusterd_pid); then
		mine=""
		[ "$(cat "$state/glusterd.pid" 2>/dev/null)" = "$pid" ] && mine=", started by $me"
		echo "glusterd: running (pid $pid$mine)"
		echo "volumes: $(g volume list 2>/dev/null | tr '\n' ' ')"
	else
		echo "glusterd: not running"
	fi
	echo "GlusterFS mounts:"
	awk '$3 == "fuse.glusterfs" { print "  " $1 " on " $2 }' /proc/mounts
	if [ $# -ge 1 ]; then
		dir=$(abspath "$1")
		name=${2:-$(name_of "$dir")}
		if D=$dir S=$host:/$name awk '$2 == ENVIRON["D"] && $1 == ENVIRON["S"] { f = 1 } END { exit !f }' /proc/mounts; then
			echo "$dir: volume $name mounted"
		else
			echo "$dir: volume $name not mounted"
			exit 1
		fi
	fi
	;;
*) usage ;;
esac
exit 0
