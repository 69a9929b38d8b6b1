#!/bin/bash
# attack.sh - another user on the same node.  The tools run as root in a
# user's directories and beside her in /tmp and /dev/shm; here a second
# user, made for the test (useradd), plants links, directories, files and
# a fake mover where root's tools will write or read.  Every attack must
# fail with an error that names the path and the cause, and root's victim
# file (0600, in a directory she cannot enter) must be unchanged:
#   - stage-in's temporary file swapped for a link to the victim before a
#     resumed run (O_EXCL|O_NOFOLLOW, unpredictable names, fchmod on the
#     descriptor; the run still completes, with a fresh temporary);
#   - a link planted as a directory in DEST (stage-in) and as DEST/NODE
#     (stage-out): nothing is written outside DEST;
#   - a state directory, cache tier and mover registry made by her: refused,
#     naming her; a fake mover of hers cannot answer root's --wait, not
#     even on a socket in root's own state directory (peer credentials);
#   - a cache tier block changed after the warm: not used (checksums).
. "$(dirname "$0")/../lib.sh"

if ! second_user gfsplit-mallory; then
	skip "attacks by a second user" "$SECOND_USER_WHY"
	finish
	exit 0
fi

chmod 755 "$TMPD"
V=$TMPD/root	# root's: she cannot enter it
mkdir -m 700 "$V"
printf 'the victim file, root only\n' >"$V/victim"
chmod 600 "$V/victim"
VSUM=$(sha256sum <"$V/victim")
MD=$TMPD/m	# hers
mkdir -m 755 "$MD"
chown "$M:$M" "$MD"
victim_intact() {
	if [ "$(sha256sum <"$V/victim")" = "$VSUM" ] &&
		[ "$(stat -c '%a %U' "$V/victim")" = "600 root" ] &&
		[ "$(ls "$V")" = victim ]; then
		ok "  the victim is unchanged, nothing new beside it"
	else
		not_ok "  the victim is unchanged, nothing new beside it" "$(ls -la "$V"; head -c 64 "$V/victim" | od -c | head -n 2)"
	fi
}

# ---- 1. stage-in's temporary file, swapped for a link before a resume
S=$TMPD/src
mkdir -p "$S/sub"
make_file "$S/big" $((4 * 1048576)) 1
chmod 600 "$S/big"
make_file "$S/sub/g" 5000 2
DEST=$MD/in
as_m mkdir "$DEST"
# killed after 2 MiB of the 4: its temporary file and journal stay
GFSPLIT_FAULT=crash:0:2097152 mpirun_n 1 "$BIN/stage-in" --chunk-size=1M "$S/" "$DEST" >/dev/null 2>&1
tmp=$(ls -a "$DEST" | grep '^\.big\.gfsplit-stage\.' | head -n 1)
if [ -n "$tmp" ] && [ ! -e "$DEST/big" ]; then
	ok "stage-in killed mid-file leaves its temporary file '$tmp'"
else
	not_ok "stage-in killed mid-file leaves its temporary file" "$(ls -la "$DEST")"
fi
case $tmp in
.big.gfsplit-stage.[0-9a-f]*.[0-9a-f]*) ok "  with a random part in its name" ;;
*) not_ok "  with a random part in its name" "$tmp" ;;
esac
rm -f "$DEST/$tmp"	# she may: the directory is hers
as_m ln -s "$V/victim" "$DEST/$tmp"
if mpirun_n 1 "$BIN/stage-in" --chunk-size=1M "$S/" "$DEST" >"$TMPD/out" 2>"$TMPD/err"; then
	ok "the resumed run completes (a fresh temporary file)"
else
	not_ok "the resumed run completes" "$(cat "$TMPD/err")"
fi
if [ -f "$DEST/big" ] && [ ! -L "$DEST/big" ] && cmp -s "$S/big" "$DEST/big" &&
	[ "$(stat -c '%a %U' "$DEST/big")" = "600 root" ]; then
	ok "  the file is installed whole, a regular file with the source's mode 0600"
else
	not_ok "  the file is installed whole, with the source's mode" "$(ls -la "$DEST")"
fi
victim_intact

# ---- 2. a link planted as a directory below DEST
DEST=$MD/in2
as_m mkdir "$DEST"
as_m ln -s "$V" "$DEST/sub"
fails "stage-in into a DEST whose 'sub' is her link to root's directory fails" 1 \
	mpirun_n 1 "$BIN/stage-in" "$S/" "$DEST"
err_has "  naming the path and the link" "$DEST/sub" "symbolic link"
victim_intact
[ -f "$DEST/big" ] && cmp -s "$S/big" "$DEST/big" && ok "  the other entries are staged" ||
	not_ok "  the other entries are staged" "$(ls -la "$DEST")"

L=$TMPD/loc
mkdir -p "$L/nA" "$L/nB"
at_exit "pkill -f 'stage-out.*$L'"
make_file "$L/nA/out" 3000 3
make_file "$L/nB/out" 3000 4
DEST=$MD/out
as_m mkdir "$DEST"
as_m ln -s "$V" "$DEST/nA"
fails "stage-out to a DEST whose 'nA' is her link to root's directory fails" 1 \
	two_nodes 1 "$BIN/stage-out" "$L/%h" "$DEST"
err_has "  naming the path and the link" "$DEST/nA" "symbolic link"
victim_intact

# ---- 3. a state directory she made, with her lock link and index
DEST=$MD/in3
as_m mkdir -p "$DEST/.gfsplit-stage"
as_m chmod 777 "$DEST/.gfsplit-stage"
as_m ln -s "$V/made-by-root" "$DEST/.gfsplit-stage/lock"
echo '{"done":"big","key":1,"size":4194304,"mtime":0,"hash":0}' | as_m tee "$DEST/.gfsplit-stage/index" >/dev/null
fails "stage-in with her state directory in DEST fails" 1 mpirun_n 1 "$BIN/stage-in" "$S/" "$DEST"
err_has "  naming it and her" "$DEST/.gfsplit-stage" "$M"
victim_intact

# a --state-dir below her link to root's directory: not followed, nothing
# made there
as_m ln -s "$V" "$MD/st"
fails "stage-in with --state-dir below her link to root's directory fails" 1 \
	mpirun_n 1 "$BIN/stage-in" --state-dir "$MD/st/state" "$S/" "$MD/in5"
err_has "  naming it: her link is not followed" "$MD/st" "symbolic link of another user's"
victim_intact

# ---- 4. a cache tier directory she made (as /dev/shm/gfsplit-cache-UID
# would be), with a forged entry
F=$TMPD/data
make_file "$F" $((8 * 65536)) 5
T=$TMPD/shm
mkdir -m 1777 "$T"
as_m mkdir -m 777 "$T/cache-nA" "$T/cache-nB"
fails "cache-warm into her tier directory fails" 1 \
	two_nodes 1 "$BIN/cache-warm" -b 64K -d "$T/cache-%h" "$F"
err_has "  naming it and her" "$T/cache-n" "$M"
# a tier below a directory of hers: her link on the way to root's
# directory is not followed, so root's tier is not made there
mkdir -m 700 "$V/tiers"
as_m ln -s "$V" "$MD/t"
fails "cache-warm into a tier below her link to root's directory fails" 1 \
	two_nodes 1 "$BIN/cache-warm" -b 64K -d "$MD/t/tiers/%h" "$F"
err_has "  naming it: her link is not followed" "$MD/t/tiers" "symbolic link of another user's"
[ -z "$(ls -A "$V/tiers")" ] && ok "  nothing made in root's directory" ||
	not_ok "  nothing made in root's directory" "$(ls -la "$V/tiers")"
rmdir "$V/tiers"
if [ -x "$UNIT/mpi_cache" ]; then
	# her entries, made with root's own tool elsewhere and copied in,
	# with other bytes: what a job reads must still be the file's
	mkdir -p "$TMPD/forge"
	cp "$F" "$TMPD/forge/data"
	two_nodes 1 "$BIN/cache-warm" -b 64K -d "$TMPD/forge/t-%h" "$TMPD/forge/data" >/dev/null 2>&1
	for n in nA nB; do
		for m in "$TMPD/forge/t-$n"/*.map; do
			sed "s|$TMPD/forge/data|$F|" "$m" | as_m tee "$T/cache-$n/$(basename "$m")" >/dev/null
		done
		for d in "$TMPD/forge/t-$n"/*.data; do
			as_m dd if=/dev/zero of="$T/cache-$n/$(basename "$d")" bs=65536 count=8 2>/dev/null
		done
	done
	if two_nodes 1 "$UNIT/mpi_cache" seq "$F" --block 64K --cache 4M --local-dir "$T/cache-%h" \
		>"$TMPD/out" 2>"$TMPD/err"; then
		ok "a job given her tier reads every byte right (mpi_cache compares them)"
	else
		not_ok "a job given her tier reads every byte right" "$(tail -n 5 "$TMPD/err")"
	fi
	err_has "  and warns that her directory is not used" "local tier not used" "$M"

	# ---- 5. a block of a tier changed after the warm (checksums)
	two_nodes 1 "$BIN/cache-warm" -b 64K -d "$TMPD/tier/%h" "$F" >/dev/null 2>&1
	for n in nA nB; do
		d=$(ls "$TMPD/tier/$n"/*.data | head -n 1)
		printf 'X' | dd of="$d" bs=1 seek=70000 conv=notrunc 2>/dev/null
	done
	if two_nodes 1 "$UNIT/mpi_cache" seq "$F" --block 64K --cache 4M --local-dir "$TMPD/tier/%h" \
		>"$TMPD/out" 2>"$TMPD/err"; then
		ok "a tier block changed after the warm: the job still reads every byte right"
	else
		not_ok "a tier block changed after the warm: every byte right" "$(tail -n 5 "$TMPD/err")"
	fi
	err_has "  and a warning names the block's checksum" "does not match its checksum"
else
	skip "a job given her tier" "mpi_cache not built"
fi

# ---- 6. the movers' registry she made, and a fake mover of hers
export GFSPLIT_MOVER_DIR=$MD/reg
as_m mkdir -m 777 "$GFSPLIT_MOVER_DIR"
fails "stage-out --async with her registry directory fails" 1 \
	two_nodes 1 "$BIN/stage-out" --async "$L/%h" "$TMPD/back"
err_has "  naming it and her" "$GFSPLIT_MOVER_DIR" "$M"
fails "stage-out --status with her registry fails" 1 two_nodes 1 "$BIN/stage-out" --status
err_has "  naming it and her" "$GFSPLIT_MOVER_DIR" "$M"
ps -eo pid,args | grep -v grep | grep -q "stage-out.*$L" &&
	not_ok "  and no mover was left running" "$(ps -eo pid,args | grep stage-out)" ||
	ok "  and no mover was left running"

# fake_mover SOCKET: a process of hers listening on SOCKET (bound by root,
# who then becomes her, so it works in a directory of root's too) that
# answers "done, 999 files" to whoever asks; waits until it listens
fake_mover() {
	timeout 20 python3 - "$1" "$(id -u "$M")" "$(id -g "$M")" <<'EOF' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.setgid(int(sys.argv[3]))
os.setuid(int(sys.argv[2]))
s.listen(4)
s.settimeout(15)
try:
    while True:
        c, _ = s.accept()
        c.recv(64)
        c.sendall(b'{"pid":4242,"node":"nA","src":"x","dest":"y","files_done":999,'
                  b'"bytes_done":1,"pending":[],"failed":[]}\n')
        c.close()
except OSError:
    pass
EOF
	fake=$!
	at_exit "kill $fake"
	for _ in 1 2 3 4 5 6 7 8 9 10; do [ -S "$1" ] && break; sleep 0.2; done
	sleep 0.3
}
# wait_refused DESC SRC: root's --wait on SRC fails and does not print the
# fake mover's "999 files"
wait_refused() {
	if mpirun_n 1 "$BIN/stage-out" --wait "$2" >"$TMPD/out" 2>"$TMPD/err"; then
		not_ok "$1" "$(cat "$TMPD/out" "$TMPD/err")"
	else
		grep -q 999 "$TMPD/out" && not_ok "$1" "it took the answer: $(cat "$TMPD/out")" || ok "$1"
	fi
	kill "$fake" 2>/dev/null
}

# her SRC, with a state directory of hers and her fake mover in it
MS=$MD/results
as_m mkdir -p "$MS/.gfsplit-stage"
fake_mover "$MS/.gfsplit-stage/mover.sock"
wait_refused "root's --wait on her SRC does not take her fake mover's answer" "$MS"
err_has "  and says why, naming her" "$MS/.gfsplit-stage" "$M"

# root's own SRC and state directory, but the socket listened on by a
# process of hers (as if she had taken over a mover's socket): its
# credentials give her away
RS=$TMPD/rootsrc
mkdir -p -m 700 "$RS/.gfsplit-stage"
fake_mover "$RS/.gfsplit-stage/mover.sock"
wait_refused "root's --wait does not take an answer from her process on root's socket" "$RS"
err_has "  and says whose process answered" "not a mover of this user's" "uid $(id -u "$M")"
unset GFSPLIT_MOVER_DIR

finish
