#!/bin/bash
# cache_strangers.sh - the cache's tcp transport (libcore/cache/onesided_tcp.c)
# against a stranger on the network: while 2 and then 4
# ranks of tests/mpi/mpi_cache read a file through the cache, a process
# that is none of the job's connects to every rank's listening port many
# times over (more connections than a rank's listen backlog once held),
# keeps them open and trickles one byte every 3 s on each (under the 5 s
# an acceptor used to wait for each recv of a greeting).  The job starts
# reading only once she holds her connections (mpi_cache --go), so that
# every connection between ranks meets her.
#
# The job must read every byte right (mpi_cache compares each read with
# the file), with its blocks copied between the ranks over tcp and no
# rank given up, and end while she is still at it: she stops by herself
# after STRANGER_S (60) seconds, which a job that waits behind her
# connections outlives; no wall-clock bound is asserted beyond that.
# Before the job begins she holds more of a rank's pending places than it
# has (64), so that it has closed some of hers: the job meets full places.
# Last, the 4-rank job must take the 2-rank job's ports again, where the
# ranks closed her connections (a minute of TIME_WAIT on each).
. "$(dirname "$0")/../lib.sh"

PROG=$UNIT/mpi_cache
if [ ! -x "$PROG" ]; then
	not_ok "mpi_cache is built" "missing: $PROG (make)"
	finish
	exit 1
fi
F=$TMPD/data
make_file "$F" $((40 * 65536 + 1234)) 5	# 41 blocks of 64 KiB, a short last one
# below the kernel's ephemeral ports and above tests/lib.sh's Gfarm ones;
# she attacks only the ports of this run's ranks in it
LO=30600 HI=30799
STRANGER_S=${STRANGER_S:-60}
PER_PORT=80	# connections she keeps on each rank's port
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

# stranger.py TAG LO HI NRANKS PER_PORT SECONDS GOFILE REPORT: find the
# listening ports in LO-HI of the mpi_cache processes whose command line
# holds TAG (/proc/net/tcp and their descriptors), keep PER_PORT
# connections open on each (one made again half a second after the rank
# closes it), send each one byte of a hello with a wrong secret every 3 s;
# GOFILE once each port has GO_EST of them open and has closed one of
# hers (its pending places full: PER_PORT is above the 64 it has), or 10 s
# after she found the ports (the job must not wait for her forever);
# after SECONDS, or at SIGTERM, close everything and write REPORT (JSON):
# the ports, the most connections open at once on each, how many the
# ranks closed (before GOFILE, and in all)
cat >"$TMPD/stranger.py" <<'EOF'
import json, os, selectors, signal, socket, struct, sys, time

tag, lo, hi, nranks, per_port, seconds, gofile, report = sys.argv[1:9]
lo, hi, nranks, per_port, seconds = int(lo), int(hi), int(nranks), int(per_port), float(seconds)
TRICKLE, GO_EST, AGAIN = 3.0, 16, 0.5
HELLO = struct.pack("=QQQ", 0x67667370746370, 1234, 5678)	# the magic, a wrong secret
t0 = time.monotonic()
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append("SIGTERM"))

def job_ports():
    """(address, port) of the listening sockets of the job's ranks in lo-hi"""
    inodes = set()
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = open("/proc/%s/cmdline" % d, "rb").read().split(b"\0")
            if not argv[0].endswith(b"mpi_cache") or not any(tag.encode() in a for a in argv):
                continue
            for fd in os.listdir("/proc/%s/fd" % d):
                l = os.readlink("/proc/%s/fd/%s" % (d, fd))
                if l.startswith("socket:["):
                    inodes.add(l[8:-1])
        except OSError:
            continue
    found = set()
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        f = line.split()
        a, p = f[1].split(":")
        if f[3] == "0A" and f[9] in inodes and lo <= int(p, 16) <= hi:
            found.add((socket.inet_ntoa(struct.pack("<I", int(a, 16))), int(p, 16)))
    return sorted(found)

sel = selectors.DefaultSelector()
conns = {}			# socket -> [port, open (bool), bytes sent]
again = []			# (when, port): a connection to make again
ports, go, why = [], False, "no ports"
most, closed, made, closed_at_go = {}, {}, {}, {}

def connect(dst):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    if s.connect_ex(dst) not in (0, 115):	# EINPROGRESS
        s.close()
        again.append((time.monotonic() + AGAIN, dst))
        return
    made[dst] = made.get(dst, 0) + 1
    conns[s] = [dst, False, 0]
    sel.register(s, selectors.EVENT_WRITE)

def drop(s, by_rank):
    dst = conns.pop(s)[0]
    sel.unregister(s)
    s.close()
    if by_rank:
        closed[dst] = closed.get(dst, 0) + 1
    again.append((time.monotonic() + AGAIN, dst))

def events():
    for key, ev in sel.select(timeout=0.05):
        s = key.fileobj
        c = conns[s]
        if not c[1]:		# connected, or not
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                drop(s, False)
                continue
            c[1] = True
            sel.modify(s, selectors.EVENT_READ)
            continue
        try:
            gone = s.recv(4096) == b""
        except (BlockingIOError, InterruptedError):
            gone = False
        except OSError:
            gone = True
        if gone:
            drop(s, True)

try:
    last = 0.0
    while not stop and time.monotonic() - t0 < seconds:
        now = time.monotonic()
        if len(ports) < nranks:
            ports = job_ports()
            if len(ports) >= nranks:
                found_at = now
                for dst in ports:
                    for _ in range(per_port):
                        connect(dst)
            else:
                time.sleep(0.02)
                if now - t0 > 30:
                    break
                continue
        for w in [a for a in again if a[0] <= now]:
            again.remove(w)
            connect(w[1])
        events()
        up = {}
        for c in conns.values():
            up[c[0]] = up.get(c[0], 0) + c[1]
        for dst in ports:
            most[dst] = max(most.get(dst, 0), up.get(dst, 0))
        if now - last >= TRICKLE:	# one byte on each open connection
            last = now
            for s, c in list(conns.items()):
                if c[1] and c[2] < len(HELLO):
                    try:
                        s.send(HELLO[c[2]:c[2] + 1])
                        c[2] += 1
                    except OSError:
                        drop(s, True)
        if not go and (all(up.get(d, 0) >= GO_EST and closed.get(d, 0) > 0 for d in ports)
                       or now - found_at > 10):
            go = True
            why = "held" if now - found_at <= 10 else "timed out"
            closed_at_go = dict(closed)
            open(gofile, "w").close()
finally:
    if not go:
        open(gofile, "w").close()
    for s in list(conns):
        s.close()
    json.dump({"ports": ["%s:%d" % d for d in ports], "go": why,
               "stopped": stop[0] if stop else "by herself",
               "most_open": [most.get(d, 0) for d in ports],
               "closed_by_ranks_before_go": [closed_at_go.get(d, 0) for d in ports],
               "closed_by_ranks": [closed.get(d, 0) for d in ports],
               "made": [made.get(d, 0) for d in ports]}, open(report, "w"))
EOF

for n in 2 4; do
	rm -f "$TMPD/go" "$TMPD/stranger.json"
	# python itself in the background (not lib.sh's function around it),
	# so that $! is hers
	"$PY" "$TMPD/stranger.py" "$TMPD" "$LO" "$HI" "$n" "$PER_PORT" "$STRANGER_S" \
		"$TMPD/go" "$TMPD/stranger.json" &
	sp=$!
	GFSPLIT_CACHE_TCP_PORTS=$LO-$HI mpirun_n "$n" "$PROG" seq "$F" --block 64K --cache 4M \
		--transport tcp --go "$TMPD/go" >"$TMPD/j.out" 2>"$TMPD/j.err"
	rc=$?
	kill -0 "$sp" 2>/dev/null && during=yes || during=no
	kill -TERM "$sp" 2>/dev/null
	wait "$sp"
	grep '^{' "$TMPD/j.out" | tail -n 1 >"$TMPD/j.json"
	S=$(cat "$TMPD/stranger.json" 2>/dev/null)
	if [ "$rc" -eq 0 ] && python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); t = j["total"]
sys.exit(0 if j["transport"] == "tcp" and t["bytes"] == int(sys.argv[2]) * j["file_size"] and
         t["peer_copies"] > 0 and t["given_up_reads"] == 0 else 1)' "$TMPD/j.json" "$n" 2>/dev/null; then
		ok "$n ranks on tcp, a stranger on every rank's port: every byte read through the cache is the file's, blocks copied between the ranks, none given up"
	else
		not_ok "$n ranks on tcp, a stranger on every rank's port: every byte right, none given up" \
			"exit $rc" "$(tail -n 8 "$TMPD/j.err")" "$(cat "$TMPD/j.json")" "stranger: $S"
	fi
	if [ "$during" = yes ]; then
		ok "$n ranks: the job ended while the stranger was still at it"
	else
		not_ok "$n ranks: the job ended while the stranger was still at it" \
			"the job waited for her: it ended after she stopped by herself (${STRANGER_S} s)" "stranger: $S"
	fi
	# that she was there in force before the job began: GO_EST (16)
	# connections open on every rank's port (where a rank's old listen
	# backlog, n, let n + 2 at most be open), and every rank's pending
	# places full of hers: it had closed some to take new ones
	if python3 -c '
import json, sys
s = json.load(open(sys.argv[1])); n = int(sys.argv[2])
sys.exit(0 if len(s["ports"]) == n and s["go"] == "held" and min(s["most_open"]) >= 16 and
         min(s["closed_by_ranks_before_go"]) > 0 else 1)' \
	    "$TMPD/stranger.json" "$n" 2>/dev/null; then
		ok "$n ranks: before the job began she held 16 connections and more on every rank's port, and filled its pending places: $S"
	else
		not_ok "$n ranks: before the job began she held 16 connections and more on every rank's port, and filled its pending places" \
			"stranger: $S"
	fi
	cp "$TMPD/stranger.json" "$TMPD/stranger.$n.json"
done

# the ranks closed her connections, which linger on their ports for a
# minute after the job (TIME_WAIT): that must not keep the next job from
# those ports (a firewall's range may hold no others); the 4 ranks took
# the first free ports of LO-HI, those of the 2 among them
if python3 -c '
import json, sys
a, b = (json.load(open(f))["ports"] for f in sys.argv[1:3])
sys.exit(0 if a and set(a) <= set(b) else 1)' "$TMPD/stranger.2.json" "$TMPD/stranger.4.json" 2>/dev/null; then
	ok "the 4-rank job listens on the ports of the 2-rank one, where the ranks closed her connections"
else
	not_ok "the 4-rank job listens on the ports of the 2-rank one, where the ranks closed her connections" \
		"2 ranks: $(cat "$TMPD/stranger.2.json" 2>&1)" "4 ranks: $(cat "$TMPD/stranger.4.json" 2>&1)"
fi

finish
