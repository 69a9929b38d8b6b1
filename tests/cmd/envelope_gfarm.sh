#!/bin/bash
# envelope_gfarm.sh - envelope-bench on a real Gfarm (gfmd + two gfsd):
#   - a short measurement: read-local and read-remote told apart, the
#     ranks' nodes as --hosts gave them, nothing left on Gfarm
#   - a replay with --keep: every input where it should be, asked of Gfarm
#     (gfwhere): the local ones on their task's rank's node, the remote ones
#     on the other; every output on its writer's node
#   - a remote read with only one node: left out by default with a warning,
#     an error when asked for; --cache direct refused before any I/O
. "$(dirname "$0")/../lib.sh"
need_gfarm
gfarm_up 2 || { finish; exit 1; }
gfmkdir /env || not_ok "gfmkdir /env"
EB=$BIN/envelope-bench
J=$TMPD/env.json
read -r -a H <<<"$GFARM_TEST_HOSTS"
hosts="${H[0]},${H[1]}"
small="--sizes 1K,64K --files 4 --reps 1 --warmup 1 --min-time 0"

gf_empty() {
	_left=$(gfls -a gfarm:///env 2>&1 | grep -vx '\.\|\.\.')
	[ -z "$_left" ] && ok "$1" || not_ok "$1" "left in gfarm:///env: $_left"
}

if mpirun_n 2 "$EB" --json --hosts "$hosts" $small gfarm:///env >"$J" 2>"$TMPD/err"; then
	ok "measure gfarm:///env on 2 ranks, one node each"
else
	not_ok "measure gfarm:///env" "$(cat "$TMPD/err")"
fi
check "the envelope is valid JSON" python3 -m json.tool "$J" /dev/null
json_valid envelope-bench "$J"
json_true "backend gfarm: local and remote are not the same" \
	'j["target"]["backend"] == "gfarm" and j["target"]["remote_same_as_local"] is False'
json_true "20 points: read-remote measured beside read-local" \
	'len(j["points"]) == 20 and sum(p["metric"] == "read-remote" for p in j["points"]) == 4'
json_true "rank 0 on node ${H[0]}, its remote node ${H[1]}" \
	"j['machine']['storage_nodes'] == {'rank0': '${H[0]}', 'rank0_remote': '${H[1]}'}"
json_true "rates from real samples" \
	'all(s["seconds"] > 0 and p["ops_per_s"]["median"] > 0 for p in j["points"] for s in p["samples"])'
gf_empty "nothing left on Gfarm"

# the replay keeps its files: ask Gfarm where they are
R=$TMPD/r.json
if mpirun_n 2 "$EB" replay --keep --json --hosts "$hosts" --envelope "$J" \
    --tasks 8 --nodes 2 --output-size 64K --input-size 1K --local-fraction 0.5 \
    --reps 1 --warmup 0 gfarm:///env >"$R" 2>"$TMPD/err"; then
	ok "replay 8 tasks, half the inputs remote, --keep"
else
	not_ok "replay --keep" "$(cat "$TMPD/err")"
fi
json_true "measured and predicted" 'j["measured"]["median"] > 0 and j["predicted_s"] > 0' "$R"
dir=$(gfls -a /env | grep -m1 '^\.envelope-bench\.r\.')
bad="" nlocal=0
for t in 0 1 2 3 4 5 6 7; do
	own=${H[$((t % 2))]} other=${H[$(((t + 1) % 2))]}
	# task t's input is local where round(0.5 (t+1)) steps up
	if [ $(((t + 2) / 2)) -gt $(((t + 1) / 2)) ]; then
		want=$own; nlocal=$((nlocal + 1))
	else
		want=$other
	fi
	w=$(gfwhere "/env/$dir/in.0.$t" 2>&1 | tr -s ' \n' ' ')
	case " $w " in *" $want "*) ;; *) bad="$bad in.$t on [$w] wanted $want;" ;; esac
	w=$(gfwhere "/env/$dir/out.0.$t" 2>&1 | tr -s ' \n' ' ')
	case " $w " in *" $own "*) ;; *) bad="$bad out.$t on [$w] wanted $own;" ;; esac
done
[ -z "$bad" ] && [ "$nlocal" -eq 4 ] && ok "inputs local or remote as planned, outputs on their writer's node (gfwhere)" ||
	not_ok "placement read back with gfwhere" "$bad (local: $nlocal)"
[ -n "$dir" ] && gfrm -rf "/env/$dir"

# one node only
expect_exit "every rank on one node: read-remote left out, exit 0" 0 \
	mpirun_n 2 "$EB" --hosts "${H[0]}" $small --procs 2 gfarm:///env
output_has "... with a warning" "read-remote left out"
expect_exit "... asked for: exit 1" 1 \
	mpirun_n 2 "$EB" --hosts "${H[0]}" $small --metrics read-remote gfarm:///env
output_has "... saying why" "needs a second node"
expect_exit "--cache direct on Gfarm: exit 1" 1 \
	mpirun_n 2 "$EB" --hosts "$hosts" $small --cache direct gfarm:///env
output_has "... Gfarm has no direct I/O" "no direct I/O"
gf_empty "nothing left on Gfarm after the errors"
finish
