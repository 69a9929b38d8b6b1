#!/bin/bash
# tests/gfarm/stop.sh - stop the Gfarm instance that tests/gfarm/start.sh
#   started under $GFARM_BASE, by process id, never by process name: other
#   instances, a developer's own Gfarm and other users' daemons are left
#   alone.  Idempotent: safe on a half-started, half-dead or stopped instance.
#
#   GFARM_BASE  state directory (default ${TMPDIR:-/tmp}/gfsplit-gfarm)
#   --wipe      also delete $GFARM_BASE (spools, metadata journal, logs, key)
#
# The daemons of the instance are those named by the pid files in
# $GFARM_BASE/run and, for a stop that races with a start (the pid file is
# written only once the daemon has detached), the gfmd/gfsd processes whose
# command line names this instance's configuration files.  gfmd and gfsd
# call setsid() when they detach, so a daemon's pid is also the session id
# of every process it forks (gfsd's back_channel and per-client children,
# which outlive a SIGKILL of their parent): whole sessions are stopped.
#
# Exit status: 0 when nothing of the instance is left running, 1 otherwise.
set -u
: "${GFARM_BASE:=${TMPDIR:-/tmp}/gfsplit-gfarm}"
B="$GFARM_BASE"
log() { echo "[gfarm stop] $*" >&2; }
# alive: exists and is not a zombie
alive() {
	local st
	[ -n "${1:-}" ] && st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) &&
		[ "$st" != Z ]
}
comm() { cat "/proc/$1/comm" 2>/dev/null; }
sid_of() { awk '{print $6}' "/proc/$1/stat" 2>/dev/null; }
# session_members SID: live processes of the session SID
session_members() {
	local p
	for p in $(ps -eo pid=,sid= | awk -v s="$1" '$2 == s {print $1}'); do
		alive "$p" && echo "$p"
	done
}
wait_gone() {	# SID TENTHS: wait until the session is empty
	local t
	for ((t = 0; t < $2; t++)); do
		[ -z "$(session_members "$1")" ] && return 0
		sleep 0.1
	done
	[ -z "$(session_members "$1")" ]
}
# started_here: live gfmd/gfsd whose command line names this instance's
# configuration (what start.sh passes with -f)
started_here() {
	local f p
	for f in $(grep -lsF -e "$B/etc/gfmd.conf" -e "$B/etc/gfsd.conf" /proc/[0-9]*/cmdline); do
		p=${f#/proc/}
		p=${p%/cmdline}
		case $(comm "$p") in gfmd|gfsd) alive "$p" && echo "$p" ;; esac
	done
}

# stop_session SID NAME: stop the daemon SID and everything of its session
stop_session() {
	local sid=$1 name=$2 members p
	members=$(session_members "$sid")
	[ -n "$members" ] || return 0
	# pid reuse guard: every member must be a NAME process and a live
	# leader must be the one started with this instance's configuration
	for p in $members; do
		if [ "$(comm "$p")" != "$name" ] ||
		    { [ "$p" = "$sid" ] &&
		      ! grep -qsF "$B/etc/$name.conf" "/proc/$p/cmdline"; }; then
			log "session $sid is not this instance's $name any more, left alone"
			return 0
		fi
	done
	# the daemon stops its children; those of a daemon that died
	# (SIGKILL, crash) or that linger get the signal themselves, and
	# whatever is left after 5 s SIGKILL
	if alive "$sid"; then
		kill -TERM "$sid" 2>/dev/null
	else
		for p in $members; do kill -TERM "$p" 2>/dev/null; done
	fi
	if ! wait_gone "$sid" 10; then
		for p in $(session_members "$sid"); do kill -TERM "$p" 2>/dev/null; done
		wait_gone "$sid" 40 || {
			log "$name session $sid ignored SIGTERM, SIGKILL"
			for p in $(session_members "$sid"); do kill -KILL "$p" 2>/dev/null; done
			wait_gone "$sid" 20
		}
	fi
	if [ -n "$(session_members "$sid")" ]; then
		log "cannot stop $name session $sid: $(session_members "$sid" | tr '\n' ' ')"
		return 1
	fi
	log "stopped $name (session $sid)"
}

# stop_all NAME: every NAME session of the instance, at once; a pid file
# goes only with its session, so a failed stop can be run again
stop_all() {
	local name=$1 pf sid p jobs="" sids="" rc=0
	for pf in "$B"/run/"$name"*.pid; do
		[ -f "$pf" ] || continue
		sid=$(cat "$pf" 2>/dev/null)
		case $sid in ''|*[!0-9]*) rm -f "$pf"; continue ;; esac
		(stop_session "$sid" "$name" && rm -f "$pf") &
		jobs="$jobs $!" sids="$sids $sid "
	done
	for p in $(started_here); do
		[ "$(comm "$p")" = "$name" ] || continue
		sid=$(sid_of "$p")
		case $sids in *" $sid "*) continue ;; esac
		if [ "$sid" = "$p" ]; then
			stop_session "$sid" "$name" &
			jobs="$jobs $!" sids="$sids $sid "
		else
			# forked but not yet detached (still in its starter's
			# session, which is not ours to stop): only itself
			kill -TERM "$p" 2>/dev/null
		fi
	done
	for p in $jobs; do wait "$p" || rc=1; done
	return $rc
}

rc=0
if [ -d "$B" ]; then
	# gfsd first (stopped after gfmd they would try to reconnect); a
	# second round catches a daemon that detached during the first
	for _ in 1 2; do
		stop_all gfsd || rc=1
		stop_all gfmd || rc=1
		[ -z "$(started_here)" ] && break
		sleep 0.2
	done
	[ -n "$(started_here)" ] && {
		log "still running: $(started_here | tr '\n' ' ')"
		rc=1
	}
	# gfsd's hard-coded socket directory: removed on a clean exit, left by
	# a SIGKILL.  start.sh refused to start on an existing one, so these
	# are this instance's.
	if [ -f "$B/run/nodes" ] && [ "$rc" -eq 0 ]; then
		while read -r ip port; do
			sd="/tmp/.gfarm-gfsd$ip-$port"
			if [ -O "$sd" ] && [ ! -L "$sd" ]; then rm -rf "$sd"; fi
		done < "$B/run/nodes"
	fi
fi
if [ "${1:-}" = "--wipe" ] && [ "$rc" -eq 0 ] && [ -e "$B" ]; then
	# only a directory start.sh made (or an empty one): a GFARM_BASE
	# pointing somewhere else by mistake is not deleted
	if [ -f "$B/run/params" ] || [ -f "$B/etc/gfmd.conf" ] ||
	    [ -z "$(ls -A "$B" 2>/dev/null)" ]; then
		rm -rf "$B"
	else
		log "$B does not look like a Gfarm test instance, not deleted"
		rc=1
	fi
fi
exit "$rc"
