#!/bin/bash
# hosts.sh - --hosts / GFSPLIT_GFARM_HOSTS on POSIX: the names group the
# location files (rank r -> entry r mod K) and are recorded per part.
. "$(dirname "$0")/../lib.sh"

make_file "$TMPD/src" 3000000 7
nodes() { json_get "$1" '" ".join(n["name"] + ":" + ",".join(str(r) for r in n["ranks"]) for n in j["nodes"])'; }

check "split with --hosts a,b on 4 ranks" mpirun_n 4 "$BIN/pcp-split" --hosts a,b "$TMPD/src" "$TMPD/h.split"
"$BIN/stat-layout" --json "$TMPD/h.split" >"$TMPD/h.json"
got=$(nodes "$TMPD/h.json")
if [ "$got" = "a:0,2 b:1,3" ]; then ok "location files by host: a holds ranks 0 2, b holds 1 3"
else not_ok "location files by host: a holds ranks 0 2, b holds 1 3" "got: $got"; fi
if [ -f "$TMPD/h.split/loc.0" ] && [ -f "$TMPD/h.split/loc.1" ] && [ ! -e "$TMPD/h.split/loc.2" ]; then
	ok "two location files on disk"
else
	not_ok "two location files on disk" "$(ls "$TMPD/h.split")"
fi
hosts=$(json_get "$TMPD/h.json" '" ".join(r["host"] for r in j["ranks"])')
if [ "$hosts" = "a b a b" ]; then ok "each part records its host"; else not_ok "each part records its host" "got: $hosts"; fi
check "merge back with 3 ranks" mpirun_n 3 "$BIN/gfsplit-merge" "$TMPD/h.split" "$TMPD/h.out"
same_bytes "merged bytes equal the source" "$TMPD/src" "$TMPD/h.out"

GFSPLIT_GFARM_HOSTS=x,y,z check "GFSPLIT_GFARM_HOSTS is the default" \
	mpirun_n 2 "$BIN/pcp-split" "$TMPD/src" "$TMPD/e.split"
"$BIN/stat-layout" --json "$TMPD/e.split" >"$TMPD/e.json"
got=$(nodes "$TMPD/e.json")
if [ "$got" = "x:0 y:1" ]; then ok "environment list used"; else not_ok "environment list used" "got: $got"; fi

# an empty entry is an error on the rank that gets it only: all must exit 1
expect_exit "an empty host entry fails every rank, no hang" 1 \
	mpirun_n 3 "$BIN/pcp-split" --hosts a,,b "$TMPD/src" "$TMPD/bad.split"
output_has "the message names the list and the entry" "host list 'a,,b': entry 1 is empty"
is_absent "nothing created" "$TMPD/bad.split"
no_leftovers "no temporary directory left" "$TMPD"

expect_exit "--placement takes strict or fallback only" 2 \
	"$BIN/pcp-split" --placement sometimes "$TMPD/src" "$TMPD/p.split"
output_has "the usage error lists the choices" "not one of strict\|fallback"
finish
