#!/bin/bash
# tests/gfarm/start.sh - bring up a throw-away Gfarm file system on this
#   machine for the tests: one gfmd and N gfsd, gfsd i on the loopback
#   address $GFARM_IP_PREFIX.$((GFARM_IP_BASE + i)).  Gfarm 2.7.20 (Debian 12
#   packages gfmd gfsd gfarm-client).  No systemd, no PostgreSQL, no edits
#   under /etc; runs as root or as any user (the daemons run as that user and
#   so must every client of the instance).
#
#   Idempotent: when the instance under $GFARM_BASE is up, healthy and has
#   the same parameters, it only prints the environment again; otherwise it
#   stops what is left of it (by PID, tests/gfarm/stop.sh), wipes
#   $GFARM_BASE and starts from scratch.
#
# Environment:
#   GFARM_BASE       state directory        (default ${TMPDIR:-/tmp}/gfsplit-gfarm)
#   GFARM_NODES      number of gfsd         (default 2)
#   GFARM_GFMD_PORT  gfmd TCP port          (default 20601)
#   GFARM_GFSD_PORT  gfsd TCP+UDP port      (default 20600; every gfsd listens
#                                            on its own address)
#   GFARM_IP_PREFIX  first three octets     (default 127.0.0)
#   GFARM_IP_BASE    last octet of node 0   (default 2)
#
# stdout: "export" lines, use as  eval "$(tests/gfarm/start.sh)"
#   GFARM_CONFIG_FILE        client configuration of the instance
#   GFARM_BASE               the state directory
#   GFARM_TEST_HOSTS         the gfsd host names, space-separated, node 0 first
#   GFARM_CONFIG_FILE_NODEi  a client configuration whose new files land on
#                            node i (write_target_domain)
# stderr: progress and diagnostics.
# Exit status: 0 up; 3 a port or socket it needs is taken by someone else
#   (nothing was started: retry with other ports or addresses); 1 anything
#   else (what was started is stopped again; logs stay under $GFARM_BASE/log).
set -euo pipefail

: "${GFARM_BASE:=${TMPDIR:-/tmp}/gfsplit-gfarm}"
: "${GFARM_NODES:=2}"
: "${GFARM_GFMD_PORT:=20601}"
: "${GFARM_GFSD_PORT:=20600}"
: "${GFARM_IP_PREFIX:=127.0.0}"
: "${GFARM_IP_BASE:=2}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
B="$GFARM_BASE"
CONF="$B/etc/gfarm2.conf"
ME="$(id -un)"
PATH="$PATH:/usr/sbin:/sbin"
PARAMS="user=$ME nodes=$GFARM_NODES gfmd=$GFARM_GFMD_PORT gfsd=$GFARM_GFSD_PORT ip=$GFARM_IP_PREFIX.$GFARM_IP_BASE"
E_BUSY=3

log() { echo "[gfarm start] $*" >&2; }
STARTED=false
die_rc() {
	local rc=$1
	shift
	log "error: $*"
	if $STARTED; then
		# lost a race for a port (checked free, then taken before the
		# daemon bound it): the caller may retry elsewhere
		grep -qs 'Address already in use' "$B"/log/*.log && rc=$E_BUSY
		for f in "$B"/log/*.log; do
			[ -f "$f" ] && { echo "--- tail $f" >&2; tail -n 15 "$f" >&2; }
		done
		# no half-started instance is left behind; state kept for diagnosis
		GFARM_BASE="$B" "$HERE/stop.sh" >&2 || true
		log "error: $*"
	fi
	exit "$rc"
}
die() { die_rc 1 "$@"; }
trap 'die "interrupted"' HUP INT TERM

case $GFARM_NODES in ''|*[!0-9]*) die "GFARM_NODES must be a number, not '$GFARM_NODES'" ;; esac
((GFARM_NODES >= 1 && GFARM_IP_BASE + GFARM_NODES <= 255)) ||
	die "GFARM_NODES=$GFARM_NODES does not fit after $GFARM_IP_PREFIX.$GFARM_IP_BASE"
for c in gfmd gfsd gfkey gfhost gfls; do
	command -v "$c" >/dev/null 2>&1 ||
		die "$c not found (apt-get install gfmd gfsd gfarm-client)"
done

node_ip() { echo "$GFARM_IP_PREFIX.$((GFARM_IP_BASE + $1))"; }
# alive: exists and is not a zombie (a SIGKILLed daemon re-parented to an
# init that does not reap stays <defunct> and still answers kill -0)
alive() {
	local st
	[ -n "${1:-}" ] && st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) &&
		[ "$st" != Z ]
}
pidof_file() { cat "$1" 2>/dev/null || true; }
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
# port_taken PORT: a TCP listener or a UDP socket on PORT, on any address.
# Read from /proc (no ss/netstat needed); stricter than needed on purpose:
# gfmd binds the wildcard address, and a port seen in use anywhere is best
# avoided by a throw-away instance.
port_taken() {
	awk -v p="$(printf '%04X' "$1")" '
		FNR > 1 { n = split($2, a, ":")
			  if (a[n] == p && ($4 == "0A" || FILENAME ~ /udp/)) found = 1 }
		END { exit !found }' /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 \
		2>/dev/null
}

print_env() {
	local i hosts=""
	for ((i = 0; i < GFARM_NODES; i++)); do hosts="$hosts $(node_ip $i)"; done
	echo "export GFARM_CONFIG_FILE=$CONF"
	echo "export GFARM_BASE=$B"
	echo "export GFARM_TEST_HOSTS=\"${hosts# }\""
	for ((i = 0; i < GFARM_NODES; i++)); do
		echo "export GFARM_CONFIG_FILE_NODE$i=$B/etc/gfarm2-node$i.conf"
	done
}

# healthy: our daemons run and every node is up as seen by gfmd
healthy() {
	local i up
	[ "$(cat "$B/run/params" 2>/dev/null)" = "$PARAMS" ] || return 1
	alive "$(pidof_file "$B/run/gfmd.pid")" || return 1
	for ((i = 0; i < GFARM_NODES; i++)); do
		alive "$(pidof_file "$B/run/gfsd$i.pid")" || return 1
	done
	# never run a client while gfmd does not listen: it would retry for
	# gfmd_reconnection_timeout
	port_open 127.0.0.1 "$GFARM_GFMD_PORT" || return 1
	# every node authenticated (s/g/G) and reporting a load average
	up=$(GFARM_CONFIG_FILE=$CONF timeout 15 gfhost -l 2>/dev/null |
	    awk '$1 ~ /^[0-9.]+\/[0-9.]+\/[0-9.]+$/ && $2 ~ /^[sgG]$/ {print $5}') ||
		return 1
	for ((i = 0; i < GFARM_NODES; i++)); do
		grep -Fqx "$(node_ip $i)" <<<"$up" || return 1
	done
}

if [ -d "$B/run" ] && healthy; then
	log "already up under $B"
	print_env
	exit 0
fi
T0=$(date +%s.%N)

# leftovers of an earlier instance here (maybe half dead): stop by PID, wipe
if [ -e "$B" ]; then
	GFARM_BASE="$B" "$HERE/stop.sh" --wipe >&2 || true
	[ -e "$B" ] && die "cannot remove $B"
fi
port_taken "$GFARM_GFMD_PORT" &&
	die_rc $E_BUSY "gfmd port $GFARM_GFMD_PORT is in use (set GFARM_GFMD_PORT)"
port_taken "$GFARM_GFSD_PORT" &&
	die_rc $E_BUSY "gfsd port $GFARM_GFSD_PORT is in use (set GFARM_GFSD_PORT)"
for ((i = 0; i < GFARM_NODES; i++)); do
	# gfsd always uses /tmp/.gfarm-gfsd<IP>-<port>/ (hard-coded); somebody
	# else's, even a stale one, makes it exit
	sd="/tmp/.gfarm-gfsd$(node_ip $i)-$GFARM_GFSD_PORT"
	[ -e "$sd" ] || [ -L "$sd" ] &&
		die_rc $E_BUSY "$sd exists (another instance, or a leftover of one)"
done

mkdir -p "$B/etc" "$B/run" "$B/log" "$B/journal"
for ((i = 0; i < GFARM_NODES; i++)); do mkdir -p "$B/spool$i"; done
chmod 700 "$B"/spool* "$B/etc"

# ---- configuration -------------------------------------------------------
# The client configuration; gfkey reads it too, to know where the key goes.
cat > "$CONF" <<EOT
metadb_server_host localhost
metadb_server_port $GFARM_GFMD_PORT
auth enable sharedsecret *
shared_key_file $B/etc/shared_key
sockopt keepalive
# Without TCP_NODELAY a small request written after a bulk transfer waits for
# the peer's delayed ACK (Nagle): 40 ms stalls that make 16 MiB writes 5-8x
# slower on loopback.  The daemons set it on their sockets too.
sockopt tcp_nodelay
# default 512M: a node with less free space is never chosen for writing
minimum_free_disk_space 64M
# gfpcopy/gfprep skip nodes whose load > thresh * ncpu; test machines are busy
schedule_busy_load_thresh 50
# a client gives up after about 6 s (gfmd down: two rounds of 1+2 s back-off)
# or 3 s (no gfsd up), not after the default 30-60 s of retries
gfmd_reconnection_timeout 2
no_file_system_node_timeout 2
EOT
# The Gfarm system users of gfsd (_gfarmfs) and gfmd (_gfarmmd) are mapped
# onto the invoking user, so both daemons run as that user ("private mode").
printf '_gfarmfs %s\n_gfarmmd %s\n' "$ME" "$ME" > "$B/etc/usermap"
# No postgresql_*/ldap_* statement: metadata backend "none", kept in gfmd's
# memory only and gone when it stops.  The PostgreSQL backend of 2.7.20 does
# not start with PostgreSQL 15 anyway.
cat > "$B/etc/gfmd.conf" <<EOT
metadb_server_host localhost
metadb_server_port $GFARM_GFMD_PORT
admin_user $ME
auth enable sharedsecret *
shared_key_file $B/etc/shared_key
sockopt keepalive
sockopt tcp_nodelay
local_user_map $B/etc/usermap
metadb_replication disable
metadb_journal_dir $B/journal
minimum_free_disk_space 64M
schedule_busy_load_thresh 50
EOT
cat > "$B/etc/gfsd.conf" <<EOT
metadb_server_host localhost
metadb_server_port $GFARM_GFMD_PORT
auth enable sharedsecret *
shared_key_file $B/etc/shared_key
sockopt keepalive
sockopt tcp_nodelay
local_user_map $B/etc/usermap
spool_check_level disable
EOT
# Per-node client configurations: every file a process using one of them
# creates lands on that node (falls back silently if the node is down).
for ((i = 0; i < GFARM_NODES; i++)); do
	printf 'write_target_domain %s\ninclude %s\n' "$(node_ip $i)" "$CONF" \
		> "$B/etc/gfarm2-node$i.conf"
done
chmod 644 "$CONF" "$B"/etc/gfarm2-node*.conf
chmod 600 "$B/etc/gfmd.conf" "$B/etc/gfsd.conf"
echo "$PARAMS" > "$B/run/params"

export GFARM_CONFIG_FILE="$CONF"
STARTED=true
gfkey -f -p 31536000 >&2 || die "gfkey failed"

# ---- gfmd: daemonizes itself (setsid: its pid is its session id) ----------
gfmd -f "$B/etc/gfmd.conf" -P "$B/run/gfmd.pid" -F "$B/log/gfmd.log" -L info ||
	die "gfmd failed to start"
for ((t = 0; t < 100; t++)); do
	port_open 127.0.0.1 "$GFARM_GFMD_PORT" && break
	((t > 5)) && ! alive "$(pidof_file "$B/run/gfmd.pid")" &&
		die "gfmd exited, see $B/log/gfmd.log"
	sleep 0.05
done
port_open 127.0.0.1 "$GFARM_GFMD_PORT" || die "gfmd does not listen on port $GFARM_GFMD_PORT"
# the listener might be somebody else's if gfmd lost a race for the port
timeout 15 gfls / >/dev/null && alive "$(pidof_file "$B/run/gfmd.pid")" ||
	die "gfmd does not answer"

# ---- gfsd: register each host, then start its daemon -----------------------
ARCH="$(gfarm.arch.guess 2>/dev/null || echo x86_64-unknown-linux)"
NCPU="$(nproc 2>/dev/null || echo 1)"
for ((i = 0; i < GFARM_NODES; i++)); do
	ip=$(node_ip $i)
	# stop.sh removes the socket directories of the nodes listed here
	echo "$ip $GFARM_GFSD_PORT" >> "$B/run/nodes"
	gfhost -c -a "$ARCH" -p "$GFARM_GFSD_PORT" -n "$NCPU" "$ip" ||
		die "gfhost -c $ip failed"
	gfsd -f "$B/etc/gfsd.conf" -h "$ip" -l "$ip" -r "$B/spool$i" \
		-P "$B/run/gfsd$i.pid" -F "$B/log/gfsd$i.log" -L info ||
		die "gfsd $i ($ip) failed to start"
done
for ((t = 0; t < 300; t++)); do
	healthy && break
	# gfsd forks before it binds: a failure shows only in its log
	if ((t > 5)); then
		for ((i = 0; i < GFARM_NODES; i++)); do
			alive "$(pidof_file "$B/run/gfsd$i.pid")" ||
				die "gfsd $i ($(node_ip $i)) exited, see $B/log/gfsd$i.log"
		done
	fi
	sleep 0.05
done
healthy || die "gfsd did not come up: $(timeout 10 gfhost -l 2>&1 | tr '\n' ';')"
T1=$(date +%s.%N)
log "up: gfmd :$GFARM_GFMD_PORT + $GFARM_NODES gfsd ($(node_ip 0)..:$GFARM_GFSD_PORT) in $(awk "BEGIN{printf \"%.2f\", $T1 - $T0}") s"
print_env
