#!/bin/bash
# paths.sh - every command with its paths given four ways, from a working
# directory: relative ("w/x"), "./"-prefixed, absolute, and through a
# symbolic link to a directory ("l/x", l -> w).  Each form must give the
# same result in the same place (checked on the data), and nothing may
# land anywhere else (a command that changes directory, as the stage-out
# mover does, must have resolved its paths first: tests/cmd/stage_async.sh
# covers the mover with the same forms).
. "$(dirname "$0")/../lib.sh"

cd "$TMPD" || exit 1
mkdir w
ln -s w l
make_file w/src $((1048576 + 333)) 1
mkdir -p w/tree/sub w/loc/nA w/loc/nB
make_file w/tree/a 70000 2
make_file w/tree/sub/b 5000 3
make_file w/loc/nA/r 4000 4
make_file w/loc/nB/r 4100 5

# form N PATH: PATH in form N (1 relative, 2 ./, 3 absolute, 4 via the link)
form() {
	case $1 in
	1) echo "w/$2" ;;
	2) echo "./w/$2" ;;
	3) echo "$TMPD/w/$2" ;;
	4) echo "l/$2" ;;
	esac
}
names=("" relative "./-prefixed" absolute "through a link")
# nothing but w and l at the top, nothing new outside w
clean_top() {
	[ "$(ls -A "$TMPD" | tr '\n' ' ')" = "l w " ] && ok "$1" ||
		not_ok "$1" "$(ls -A "$TMPD")"
}

for k in 1 2 3 4; do
	n=${names[$k]}
	if mpirun_n 2 "$BIN/pcp-split" -b 64K "$(form $k src)" "$(form $k s$k.split)" >/dev/null 2>"$TMPD/err" &&
		"$BIN/stat-layout" --check "$(form $k s$k.split)" >/dev/null 2>>"$TMPD/err" &&
		mpirun_n 3 "$BIN/gfsplit-merge" "$(form $k s$k.split)" "$(form $k m$k)" >/dev/null 2>>"$TMPD/err" &&
		cmp -s w/src "w/m$k"; then
		ok "$n paths: pcp-split, stat-layout --check, gfsplit-merge give the source back"
	else
		not_ok "$n paths: pcp-split, stat-layout, gfsplit-merge" "$(cat "$TMPD/err")"
	fi
	if mpirun_n 2 "$BIN/stage-in" "$(form $k tree/)" "$(form $k in$k)" >/dev/null 2>"$TMPD/err" &&
		cmp -s w/tree/a "w/in$k/a" && cmp -s w/tree/sub/b "w/in$k/sub/b"; then
		ok "$n paths: stage-in copies the tree there"
	else
		not_ok "$n paths: stage-in" "$(cat "$TMPD/err"; find w/in$k 2>&1)"
	fi
	if two_nodes 1 "$BIN/stage-out" "$(form $k loc/%h)" "$(form $k out$k)" >/dev/null 2>"$TMPD/err" &&
		cmp -s w/loc/nA/r "w/out$k/nA/r" && cmp -s w/loc/nB/r "w/out$k/nB/r"; then
		ok "$n paths: stage-out writes DEST/NODE"
	else
		not_ok "$n paths: stage-out" "$(cat "$TMPD/err"; find w/out$k 2>&1)"
	fi
	if two_nodes 1 "$BIN/cache-warm" -b 64K -d "$(form $k tier$k-%h)" "$(form $k src)" >/dev/null 2>"$TMPD/err" &&
		[ -n "$(ls w/tier$k-nA/*.map 2>/dev/null)" ] && [ -n "$(ls w/tier$k-nB/*.map 2>/dev/null)" ]; then
		ok "$n paths: cache-warm fills each node's tier"
	else
		not_ok "$n paths: cache-warm" "$(cat "$TMPD/err"; ls -la w)"
	fi
	mkdir -p "w/eb$k"
	if mpirun_n 1 "$BIN/envelope-bench" --json --sizes 1K --files 2 --reps 1 --warmup 0 --min-time 0 \
		--metrics create,write "$(form $k eb$k)" >"$TMPD/env.json" 2>"$TMPD/err" &&
		python3 -m json.tool "$TMPD/env.json" >/dev/null && [ -z "$(ls -A "w/eb$k")" ]; then
		ok "$n paths: envelope-bench measures the target and leaves it empty"
	else
		not_ok "$n paths: envelope-bench" "$(cat "$TMPD/err"; ls -A "w/eb$k")"
	fi
	rm -f "$TMPD/err" "$TMPD/env.json"
	clean_top "  nothing landed outside w"
done

finish
