#!/bin/bash
# gfarm_fixture.sh - the suite's own Gfarm (tests/gfarm/start.sh, stop.sh and
# gfarm_up/gfarm_down in tests/lib.sh): nodes up, files pinned to each node
# land there and read back intact, stop leaves no process or socket of the
# instance, a second cycle works, a SIGKILLed daemon is still cleaned up, a
# taken port is avoided, and a client fails fast when gfmd is down.
. "$(dirname "$0")/../lib.sh"
# the fixture needs the daemons, not the suite's Gfarm backend
need_gfarm --no-build

# alive PID: exists and is not a zombie
alive() {
	_st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ "$_st" != Z ]
}
# instance_pids: every process of the sessions named by the pid files
instance_pids() {
	for _f in "$GFARM_BASE"/run/gfmd.pid "$GFARM_BASE"/run/gfsd*.pid; do
		[ -f "$_f" ] || continue
		ps -eo pid=,sid= | awk -v s="$(cat "$_f")" '$2 == s {print $1}'
	done
}
# port_taken PORT: a TCP listener or UDP socket on PORT, any address
port_taken() {
	awk -v p="$(printf '%04X' "$1")" '
		FNR > 1 { n = split($2, a, ":")
			  if (a[n] == p && ($4 == "0A" || FILENAME ~ /udp/)) found = 1 }
		END { exit !found }' /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6
}
socket_dirs() {
	for _h in $GFARM_TEST_HOSTS; do echo "/tmp/.gfarm-gfsd$_h-$GFARM_GFSD_PORT"; done
}
# stopped_clean DESC PIDS: gfarm_down, then none of PIDS lives, no socket
# directory of the nodes and no listener on the instance's ports is left
stopped_clean() {
	_d=$1 _pids=$2
	_sd=$(socket_dirs)
	if ! gfarm_down 2>"$TMPD/.stop"; then
		not_ok "$_d: stop succeeds" "$(cat "$TMPD/.stop")"
		return
	fi
	_left=""
	for _p in $_pids; do alive "$_p" && _left="$_left $_p($(cat /proc/"$_p"/comm 2>/dev/null))"; done
	[ -z "$_left" ] && ok "$_d: none of the instance's processes is left" ||
		not_ok "$_d: none of the instance's processes is left" "alive:$_left"
	_left=""
	for _s in $_sd; do [ -e "$_s" ] && _left="$_left $_s"; done
	[ -z "$_left" ] && ok "$_d: no gfsd socket directory is left" ||
		not_ok "$_d: no gfsd socket directory is left" "left:$_left"
	if port_taken "$GFARM_GFMD_PORT" || port_taken "$GFARM_GFSD_PORT"; then
		not_ok "$_d: the instance's ports are free" "$GFARM_GFMD_PORT/$GFARM_GFSD_PORT in use"
	else
		ok "$_d: the instance's ports are free"
	fi
	is_absent "$_d: the pid files are gone" "$GFARM_BASE"/run/gfmd.pid "$GFARM_BASE"/run/gfsd0.pid
}
# up_hosts: the hosts gfmd sees up (authenticated, with a load average)
up_hosts() {
	gfhost -l 2>/dev/null |
	    awk '$1 ~ /^[0-9.]+\/[0-9.]+\/[0-9.]+$/ && $2 ~ /^[sgG]$/ {print $5}' | sort
}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# ---- first cycle: 3 nodes -------------------------------------------------
t0=$(date +%s.%N)
gfarm_up 3 || { finish; exit 1; }
secs=$(elapsed "$t0")
awk -v s="$secs" 'BEGIN { exit !(s < 15) }' && ok "3 nodes up in ${secs}s" ||
	not_ok "3 nodes up in a few seconds" "took ${secs}s"

set -- $GFARM_TEST_HOSTS
if [ $# -eq 3 ] && [ "$(printf '%s\n' "$@" | sort -u | wc -l)" -eq 3 ] &&
    printf '%s\n' "$@" | grep -Eqv '^127\.0\.0\.' &&
    ! printf '%s\n' "$@" | grep -Eqv '^127\.[0-9]+\.[0-9]+\.[0-9]+$'; then
	ok "GFARM_TEST_HOSTS: 3 distinct loopback addresses off 127.0.0.x"
else
	not_ok "GFARM_TEST_HOSTS: 3 distinct loopback addresses off 127.0.0.x" "'$GFARM_TEST_HOSTS'"
fi
case $GFARM_GFMD_PORT in
2[1-9][0-9][0-9][0-9]) ok "gfmd port $GFARM_GFMD_PORT in 21000-29999" ;;
*) not_ok "gfmd port in 21000-29999" "got '$GFARM_GFMD_PORT'" ;;
esac
if grep -q "^metadb_server_port $GFARM_GFMD_PORT\$" "$GFARM_CONFIG_FILE" 2>/dev/null; then
	ok "GFARM_CONFIG_FILE points at this instance's gfmd"
else
	not_ok "GFARM_CONFIG_FILE points at this instance's gfmd" "$GFARM_CONFIG_FILE"
fi

want=$(printf '%s\n' $GFARM_TEST_HOSTS | sort)
got=$(up_hosts)
[ "$got" = "$want" ] && ok "gfhost -l shows the 3 nodes up" ||
	not_ok "gfhost -l shows the 3 nodes up" "want: $want" "got: $got" "$(gfhost -l 2>&1)"

# a file pinned to each node: gfwhere (gfmd's replica records) says it is
# there, and the node's own spool holds that many bytes
i=0
for h in $GFARM_TEST_HOSTS; do
	make_file "$TMPD/in$i" $((1048576 + 4099 * i + 1)) $((i + 7))
	check "gfreg -h $h" gfreg -h "$h" "$TMPD/in$i" "/pin$i"
	where=$(gfwhere "/pin$i" 2>&1)
	[ "$where" = "$h" ] && ok "gfwhere: /pin$i is on $h" ||
		not_ok "gfwhere: /pin$i is on $h" "gfwhere says: $where"
	size=$(stat -c %s "$TMPD/in$i")
	n=$(find "$GFARM_BASE/spool$i" -type f -size "${size}c" | wc -l)
	[ "$n" -eq 1 ] && ok "node $i's spool holds the file's bytes" ||
		not_ok "node $i's spool holds the file's bytes" "$n files of $size bytes in spool$i"
	i=$((i + 1))
done
i=0
for h in $GFARM_TEST_HOSTS; do
	gfexport "/pin$i" >"$TMPD/out$i" 2>"$TMPD/.err"
	same_bytes "gfexport /pin$i gives back the bytes" "$TMPD/in$i" "$TMPD/out$i"
	i=$((i + 1))
done

# the per-node client configurations steer new files to their node
check "gfreg with GFARM_CONFIG_FILE_NODE2" \
	env GFARM_CONFIG_FILE="$GFARM_CONFIG_FILE_NODE2" gfreg "$TMPD/in0" /steered
where=$(gfwhere /steered 2>&1)
[ "$where" = "$3" ] && ok "GFARM_CONFIG_FILE_NODE2 puts new files on node 2" ||
	not_ok "GFARM_CONFIG_FILE_NODE2 puts new files on node 2" "gfwhere: $where, node 2: $3"

# gfarm_up again: the instance is kept, not restarted
pids1=$(instance_pids | sort)
gfmd1=$(cat "$GFARM_BASE/run/gfmd.pid")
gfarm_up 3 || { finish; exit 1; }
[ "$(cat "$GFARM_BASE/run/gfmd.pid")" = "$gfmd1" ] && gfls /pin0 >/dev/null 2>&1 &&
	ok "gfarm_up on a running instance keeps it (same gfmd, same files)" ||
	not_ok "gfarm_up on a running instance keeps it" "gfmd $gfmd1 -> $(cat "$GFARM_BASE/run/gfmd.pid")"

# another instance asked for this one's ports refuses (exit 3) and leaves
# this one alone
expect_exit "start.sh on ports in use exits 3" 3 env GFARM_BASE="$TMPD/other" \
	GFARM_NODES=1 GFARM_GFMD_PORT="$GFARM_GFMD_PORT" GFARM_GFSD_PORT=$((GFARM_GFSD_PORT + 2)) \
	GFARM_IP_PREFIX=127.0.254 "$GFARM_FIXTURE/start.sh"
output_has "it names the port" "port $GFARM_GFMD_PORT is in use"
[ "$(up_hosts)" = "$want" ] && [ "$(cat "$GFARM_BASE/run/gfmd.pid")" = "$gfmd1" ] &&
	ok "the running instance is untouched" ||
	not_ok "the running instance is untouched" "$(gfhost -l 2>&1)"

pids1=$(instance_pids)
[ "$(echo "$pids1" | wc -w)" -ge 4 ] && ok "pid files name gfmd and 3 gfsd sessions" ||
	not_ok "pid files name gfmd and 3 gfsd sessions" "pids: $pids1"
stopped_clean "stop" "$pids1"

# with gfmd down a client gives up within seconds (fixture's timeouts)
t0=$(date +%s.%N)
timeout 60 gfls / >/dev/null 2>&1
rc=$?
secs=$(elapsed "$t0")
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && awk -v s="$secs" 'BEGIN { exit !(s < 20) }' &&
	ok "gfls with gfmd down fails in ${secs}s" ||
	not_ok "gfls with gfmd down fails within seconds" "exit $rc after ${secs}s"

# ---- second cycle, 2 nodes: fresh metadata --------------------------------
t0=$(date +%s.%N)
gfarm_up 2 || { finish; exit 1; }
ok "second start, 2 nodes, in $(elapsed "$t0")s"
[ "$(up_hosts)" = "$(printf '%s\n' $GFARM_TEST_HOSTS | sort)" ] &&
	[ "$(echo $GFARM_TEST_HOSTS | wc -w)" -eq 2 ] &&
	ok "gfhost -l shows the 2 nodes up" || not_ok "gfhost -l shows the 2 nodes up" "$(gfhost -l 2>&1)"
check_fails "the first instance's files are gone" gfls /pin0
set -- $GFARM_TEST_HOSTS
check "gfreg -h $2 in the second instance" gfreg -h "$2" "$TMPD/in1" /again
[ "$(gfwhere /again 2>&1)" = "$2" ] && ok "gfwhere: /again is on $2" ||
	not_ok "gfwhere: /again is on $2" "$(gfwhere /again 2>&1)"
gfexport /again >"$TMPD/again" 2>&1
same_bytes "gfexport /again gives back the bytes" "$TMPD/in1" "$TMPD/again"

# SIGKILL a gfsd: its back_channel child and socket directory outlive it;
# stop still removes everything
pids2=$(instance_pids)
gfsd0=$(cat "$GFARM_BASE/run/gfsd0.pid")
kill -KILL "$gfsd0"
for _ in 1 2 3 4 5 6 7 8 9 10; do alive "$gfsd0" || break; sleep 0.1; done
alive "$gfsd0" && not_ok "SIGKILL ends gfsd 0" || ok "SIGKILL ends gfsd 0"
stopped_clean "stop after SIGKILL of a gfsd" "$pids2"

# ---- SIGKILL of gfmd and a taken port ---------------------------------------
# occupy the port pair the next gfarm_up would try first: it must move on
_gfarm_pick "${_gfarm_try:-0}"
busy=$GFARM_GFMD_PORT
# an external command, so that $! is the listener itself
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
"$py" -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); print("ready", flush=True)
time.sleep(120)' "$busy" >"$TMPD/.listener" 2>&1 &
lpid=$!
at_exit "kill $lpid"
for _ in $(seq 50); do grep -q ready "$TMPD/.listener" && break; sleep 0.1; done
gfarm_up 2 || { finish; exit 1; }
[ "$GFARM_GFMD_PORT" != "$busy" ] && [ "$(up_hosts | wc -l)" -eq 2 ] &&
	ok "gfarm_up moves off a taken port ($busy -> $GFARM_GFMD_PORT)" ||
	not_ok "gfarm_up moves off a taken port" "busy $busy, got $GFARM_GFMD_PORT" "$(gfhost -l 2>&1)"
alive "$lpid" && ok "the port's owner is left alone" || not_ok "the port's owner is left alone"
kill "$lpid" 2>/dev/null
wait "$lpid" 2>/dev/null

pids3=$(instance_pids)
kill -KILL "$(cat "$GFARM_BASE/run/gfmd.pid")" "$(cat "$GFARM_BASE/run/gfsd1.pid")"
stopped_clean "stop after SIGKILL of gfmd and a gfsd" "$pids3"

# ---- unprivileged ------------------------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
	skip "an unprivileged instance" "this whole script already ran unprivileged"
elif ! can_run_as_nobody; then
	skip "an unprivileged instance" "cannot switch to user nobody"
else
	nb=$(mktemp -d "${TMPDIR:-/tmp}/gfsplit-nobody.XXXXXX")
	chown nobody "$nb"
	chmod 755 "$nb"
	at_exit "rm -rf '$nb'"
	at_exit "as_nobody env GFARM_BASE='$nb/gfarm' '$GFARM_FIXTURE/stop.sh'"
	cp "$TMPD/in2" "$nb/in"
	chmod 644 "$nb/in"
	try=100
	while :; do
		_gfarm_pick $try
		as_nobody env HOME="$nb" GFARM_BASE="$nb/gfarm" GFARM_NODES=2 \
			GFARM_GFMD_PORT=$GFARM_GFMD_PORT GFARM_GFSD_PORT=$GFARM_GFSD_PORT \
			GFARM_IP_PREFIX=$GFARM_IP_PREFIX \
			"$GFARM_FIXTURE/start.sh" >"$nb/env" 2>"$TMPD/.nobody"
		rc=$?
		[ "$rc" -eq 3 ] && [ $((try += 1)) -lt 108 ] && continue
		break
	done
	if [ "$rc" -eq 0 ]; then
		ok "start as user nobody"
		nbpids=$(ps -eo pid=,sid=,user= |
		    awk -v a="$(cat "$nb/gfarm/run/gfmd.pid")" -v b="$(cat "$nb/gfarm/run/gfsd0.pid")" \
			'($2 == a || $2 == b) {print $1, $3}')
		echo "$nbpids" | awk '$2 != "nobody" {bad = 1} END {exit bad || NR < 2}' &&
			ok "the daemons run as nobody" || not_ok "the daemons run as nobody" "$nbpids"
		h=$(sed -n 's/^export GFARM_TEST_HOSTS="\([^ ]*\) .*/\1/p' "$nb/env")
		cfg=$(sed -n 's/^export GFARM_CONFIG_FILE=//p' "$nb/env")
		check "gfreg -h $h as nobody" as_nobody env HOME="$nb" GFARM_CONFIG_FILE="$cfg" \
			gfreg -h "$h" "$nb/in" /nb
		as_nobody env HOME="$nb" GFARM_CONFIG_FILE="$cfg" gfexport /nb >"$TMPD/nb.out" 2>&1
		same_bytes "gfexport as nobody gives back the bytes" "$TMPD/in2" "$TMPD/nb.out"
		check "stop as nobody" as_nobody env GFARM_BASE="$nb/gfarm" "$GFARM_FIXTURE/stop.sh"
		left=""
		for p in $(echo "$nbpids" | awk '{print $1}'); do alive "$p" && left="$left $p"; done
		for s in $(sed -n 's/^export GFARM_TEST_HOSTS="\(.*\)"/\1/p' "$nb/env"); do
			[ -e "/tmp/.gfarm-gfsd$s-$GFARM_GFSD_PORT" ] && left="$left /tmp/.gfarm-gfsd$s-$GFARM_GFSD_PORT"
		done
		[ -z "$left" ] && ok "nothing of nobody's instance is left" ||
			not_ok "nothing of nobody's instance is left" "alive:$left"
	else
		not_ok "start as user nobody (exit $rc)" "$(tail -n 30 "$TMPD/.nobody")"
	fi
fi

finish
