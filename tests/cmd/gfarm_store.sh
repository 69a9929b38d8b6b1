#!/bin/bash
# gfarm_store.sh - the Gfarm storage backend (libcore/store/store_gfarm.c) on a
# real Gfarm: a private gfmd and 3 gfsd started by the project's fixture.
#   1. tests/unit/gfarm_store with every node up: every store operation,
#      data compared byte for byte, a file pinned to each node; the pins
#      checked again independently with gfwhere
#   2. one gfsd stopped: STRICT placement on it fails naming the node and
#      leaves no file, FALLBACK lands on a live node
#   3. gfmd stopped: a command on a gfarm:// path fails with Gfarm's
#      reason within seconds instead of hanging
# LONG_WAITS=no leaves out 3 (make check-asan, the sanitized pass: it waits
# out libgfarm's retries twice, 15 s, and the backend's way from a Gfarm
# error to its own is 2's failed placement's too; make check runs it)
. "$(dirname "$0")/../lib.sh"

need_gfarm
gfarm_up 3 || { finish; exit 1; }
read -r -a H <<<"$GFARM_TEST_HOSTS"
port=$(awk '$1 == "metadb_server_port" { print $2 }' "$GFARM_CONFIG_FILE")

# relay FILE RC: the TAP lines of a unit program as this script's own
# (one numbering), a failure with the diagnostics printed before it; a
# nonzero exit without a "not ok" is a failure too
relay() {
	_rf=0 _diag=""
	while IFS= read -r _l; do
		case $_l in
		"# pinned "*) ;;
		"# "*) _diag="$_diag${_diag:+
}${_l#\# }" ;;
		"not ok "*)
			_rf=$((_rf + 1)) _d=${_l#not ok }
			if [ -n "$_diag" ]; then not_ok "${_d#* - }" "$(tail -n 5 <<<"$_diag")"
			else not_ok "${_d#* - }"; fi
			_diag="" ;;
		"ok "*" # SKIP "*)
			# run 1 has no node down: run 2 is that case
			case $_l in *"gfarm_store.sh runs them"*) ;;
			*) skip "unit" "${_l#* # SKIP }" ;; esac
			_diag="" ;;
		"ok "*) _d=${_l#ok }; ok "${_d#* - }"; _diag="" ;;
		esac
	done <"$1"
	if [ "$2" -ne 0 ] && [ "$_rf" -eq 0 ]; then
		not_ok "$(basename "$1" .tap): gfarm_store exited $2 without a failed test" \
			"$(tail -n 5 "$1")"
	fi
}

# stop_daemon PIDFILE: stop one daemon of the fixture and all of its
# session (the daemons setsid(), so the pid is the session id) by PID
session_of() { ps -eo pid=,sid= | awk -v s="$1" '$2 == s { print $1 }'; }
stop_daemon() {
	_pid=$(cat "$1") || return 1
	kill -TERM "$_pid" || return 1
	for _t in $(seq 50); do
		[ -z "$(session_of "$_pid")" ] && return 0
		sleep 0.1
	done
	for _p in $(session_of "$_pid"); do kill -KILL "$_p"; done
	sleep 0.2
	[ -z "$(session_of "$_pid")" ]
}

# ---- 1. everything up ------------------------------------------------------
all=$(IFS=,; echo "${H[*]}")
"$UNIT/gfarm_store" --keep --hostport "localhost:$port" gfarm:/// "$all" \
	>"$TMPD/up.tap" 2>&1
relay "$TMPD/up.tap" $?

# the pins again, as Gfarm's own gfwhere sees them
n=0 bad=""
while read -r _ _ url host; do
	n=$((n + 1))
	got=$(timeout 30 gfwhere "$url" 2>&1)
	[ "$got" = "$host" ] || bad="$bad $url: wanted $host, gfwhere says '$got';"
done < <(grep '^# pinned ' "$TMPD/up.tap")
if [ "$n" -eq "${#H[@]}" ] && [ -z "$bad" ]; then
	ok "gfwhere: each of the $n pinned files is on its node"
else
	not_ok "gfwhere: each pinned file is on its node" "$n pinned files of ${#H[@]}" "$bad"
fi
d=$(sed -n 's/^# pinned \(gfarm:.*\)\/pin\.0 .*/\1/p' "$TMPD/up.tap")
[ -n "$d" ] && timeout 30 gfrm -rf "$d" >/dev/null 2>&1

# ---- 2. one gfsd down ------------------------------------------------------
last=$((${#H[@]} - 1))
if stop_daemon "$GFARM_BASE/run/gfsd$last.pid"; then
	ok "gfsd $last (${H[$last]}) stopped"
	# wait until gfmd notices (the node loses its load average)
	for _t in $(seq 100); do
		timeout 10 gfhost -l 2>/dev/null | grep -Eq "^-\.--/.* ${H[$last]} " && break
		sleep 0.1
	done
	live=$(IFS=,; echo "${H[*]:0:$last}")
	"$UNIT/gfarm_store" --placement gfarm:/// "$live" "${H[$last]}" \
		>"$TMPD/down.tap" 2>&1
	relay "$TMPD/down.tap" $?
else
	not_ok "stop gfsd $last (${H[$last]})"
fi

# ---- 3. gfmd down: a clear error within seconds ------------------------------
# The fixture sets gfmd_reconnection_timeout 5: libgfarm gives up after a few
# seconds of retries.  20 s leaves room for a slow machine, not for a hang
# (the default configuration retries for 30-60 s).
make_file "$TMPD/src" 100000 5
if ! long_wait "gfmd down: commands on gfarm:// fail within seconds"; then
	:	# (skipped, saying so)
elif stop_daemon "$GFARM_BASE/run/gfmd.pid"; then
	ok "gfmd stopped"
	t0=$(date +%s.%N)
	expect_exit "gfmd down: stat-layout gfarm:///x exits 1" 1 \
		timeout 60 "$BIN/stat-layout" gfarm:///x
	t1=$(date +%s.%N)
	output_has "gfmd down: stat-layout names the path and Gfarm's reason" \
		"'gfarm:///x'.*: (connection refused|.*gfmd.*)"
	echo "# $(head -n 1 "$OUT")"
	el=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")
	if awk "BEGIN { exit !($t1 - $t0 < 20) }"; then ok "gfmd down: stat-layout failed in ${el} s"
	else not_ok "gfmd down: stat-layout failed within 20 s" "took ${el} s"; fi

	t0=$(date +%s.%N)
	expect_exit "gfmd down: pcp-split to gfarm:// exits 1" 1 \
		mpirun_n 2 "$BIN/pcp-split" "$TMPD/src" gfarm:///dst
	t1=$(date +%s.%N)
	output_has "gfmd down: pcp-split names the path and Gfarm's reason" \
		"'gfarm:///dst[^']*'.*: (connection refused|.*gfmd.*)"
	echo "# $(grep -m 1 gfarm: "$OUT")"
	el=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")
	if awk "BEGIN { exit !($t1 - $t0 < 20) }"; then ok "gfmd down: pcp-split failed in ${el} s"
	else not_ok "gfmd down: pcp-split failed within 20 s" "took ${el} s"; fi
	! grep -q 'libgfarm: <' "$OUT" && ok "gfmd down: no libgfarm log lines without -v" ||
		not_ok "gfmd down: no libgfarm log lines without -v" "$(grep 'libgfarm: <' "$OUT" | head -n 3)"
else
	not_ok "stop gfmd"
fi

# the instance is stopped (by PID) at exit: gfmd keeps its metadata in memory
# only, so a restarted gfmd would not know the nodes any more
finish
