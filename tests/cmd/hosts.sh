#!/bin/bash
# hosts.sh - --hosts / GFSPLIT_GFARM_HOSTS on POSIX, which places no file
# on a node: ignored with a warning, the parts recorded on their ranks'
# nodes; a malformed list is still an error (tests/cmd/gfarm_cmds.sh has
# the lists on Gfarm, where they place the parts).
. "$(dirname "$0")/../lib.sh"

make_file "$TMPD/src" 3000000 7
nodes() { json_get "$1" '" ".join(n["name"] + ":" + ",".join(str(r) for r in n["ranks"]) for n in j["nodes"])'; }

# POSIX places no file on a node: the list is ignored, with a warning, and
# the location files and parts record where the ranks are (two emulated
# nodes, GFSPLIT_NODE), not the names of the list
if two_nodes 2 "$BIN/pcp-split" --hosts a,b "$TMPD/src" "$TMPD/h.split" >"$OUT" 2>&1; then
	ok "split with --hosts a,b on 2 nodes x 2 ranks, POSIX"
else
	not_ok "split with --hosts a,b on 2 nodes x 2 ranks, POSIX" "$(tail -n 5 "$OUT")"
fi
output_has "  warns that the list is ignored" "warning: --hosts \(or GFSPLIT_GFARM_HOSTS\) ignored: '.*h.split' is on a file system that places no file on a node"
"$BIN/stat-layout" --json "$TMPD/h.split" >"$TMPD/h.json"
got=$(nodes "$TMPD/h.json")
if [ "$got" = "nA:0,1 nB:2,3" ]; then ok "  location files by the ranks' nodes: nA holds ranks 0 1, nB 2 3"
else not_ok "  location files by the ranks' nodes" "got: $got"; fi
hosts=$(json_get "$TMPD/h.json" '" ".join(r["host"] for r in j["parts"])')
if [ "$hosts" = "nA nA nB nB" ]; then ok "  each part records its rank's node"; else not_ok "  each part records its rank's node" "got: $hosts"; fi
check "merge back with 3 ranks" mpirun_n 3 "$BIN/gfsplit-merge" "$TMPD/h.split" "$TMPD/h.out"
same_bytes "merged bytes equal the source" "$TMPD/src" "$TMPD/h.out"

GFSPLIT_GFARM_HOSTS=x,y,z expect_exit "GFSPLIT_GFARM_HOSTS is ignored the same way" 0 \
	mpirun_n 2 "$BIN/pcp-split" "$TMPD/src" "$TMPD/e.split"
output_has "  with the warning" "ignored: '.*e.split' is on a file system that places no file"
"$BIN/stat-layout" --json "$TMPD/e.split" >"$TMPD/e.json"
got=$(json_get "$TMPD/e.json" '" ".join(r["host"] for r in j["parts"])')
if [ "$got" = "$(hostname) $(hostname)" ]; then ok "  the parts record this node"; else not_ok "  the parts record this node" "got: $got"; fi

# an empty entry is an error on the rank that gets it only: all must exit 1
expect_exit "an empty host entry fails every rank, no hang" 1 \
	mpirun_n 3 "$BIN/pcp-split" --hosts a,,b "$TMPD/src" "$TMPD/bad.split"
output_has "the message names the list and the entry" "host list 'a,,b': entry 1 is empty"
is_absent "nothing created" "$TMPD/bad.split"
no_leftovers "no temporary directory left" "$TMPD"

expect_exit "--placement strict on POSIX works" 0 \
	mpirun_n 2 "$BIN/pcp-split" --placement strict "$TMPD/src" "$TMPD/s.split"
output_has "  and warns that it is ignored" "warning: --placement strict ignored: '.*s.split' is on a file system that places no file"
expect_exit "--placement takes strict or fallback only" 2 \
	"$BIN/pcp-split" --placement sometimes "$TMPD/src" "$TMPD/p.split"
output_has "the usage error lists the choices" "not one of strict\|fallback"
finish
