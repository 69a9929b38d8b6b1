#!/bin/bash
# cluster_envelope.sh - envelope-bench on the emulated cluster's Gfarm
# (tests/cluster.sh: 2 nodes, a gfsd each, 1 rank a node, no --hosts): the
# ranks' nodes are found from where Gfarm puts their files, and read-local
# and read-remote really are local and remote: counted on the nodes'
# links, a read-local run sends no file data between nodes (metadata
# only, less than one file), a read-remote run sends every file it reads.
. "$(dirname "$0")/../lib.sh"
need_gfarm
need_cluster 2
EB=$BIN/envelope-bench
J=$TMPD/env.json
cexec head gfmkdir /env || not_ok "gfmkdir /env"
sent() { "$CLUSTER" sent 1 2; }	# bytes the nodes sent over their links
MiB=1048576
for m in read-local read-remote; do
	b0=$(sent)
	if crun "$EB" --json --metrics "$m" --sizes 1M --files 4 --reps 1 --warmup 1 --min-time 0 \
	    gfarm:///env >"$J" 2>"$TMPD/err"; then
		ok "envelope-bench --metrics $m on 2 nodes"
	else
		not_ok "envelope-bench --metrics $m on 2 nodes" "$(tail -n 5 "$TMPD/err")"
	fi
	eval "b_$(echo $m | tr - _)=$(($(sent) - b0))"
	json_true "  $m measured, rank 0 on $(node_host 1), its remote node $(node_host 2)" \
		"[p['metric'] for p in j['points']] == ['$m'] * len(j['points']) and j['points'] and j['machine']['storage_nodes'] == {'rank0': '$(node_host 1)', 'rank0_remote': '$(node_host 2)'}"
done
# shellcheck disable=SC2154 # set by the eval above
if [ "$b_read_local" -lt "$MiB" ]; then ok "read-local: no file data crossed a link ($b_read_local bytes)"
else not_ok "read-local: no file data crossed a link" "$b_read_local bytes"; fi
# shellcheck disable=SC2154
if [ "$b_read_remote" -ge $((8 * MiB)) ]; then ok "read-remote: every file read crossed a link ($b_read_remote bytes)"
else not_ok "read-remote: every file read crossed a link" "$b_read_remote bytes, wanted >= $((8 * MiB))"; fi
left=$(cexec head gfls -a /env 2>&1 | grep -vx '\.\|\.\.')
[ -z "$left" ] && ok "nothing left on Gfarm" || not_ok "nothing left on Gfarm" "$left"
finish
