#!/bin/bash
# cluster_slurm.sh - the commands as users run them under Slurm, on the
# emulated cluster with Slurm (tests/cluster.sh up --slurm: munged,
# slurmctld in the head, a slurmd on each of 3 nodes):
#   - srun -N 3 --ntasks-per-node=2 --mpi=pmi2 (Debian's MPICH speaks
#     PMI-1, which Slurm's mpi/pmi2 serves) for pcp-split, gfsplit-merge,
#     stage-in, stage-out, cache-warm and an MPI-IO program under the
#     preload library, each checked on its data;
#   - node identity: each task's host name is its SLURMD_NODENAME, and
#     the nodes gfsplit names (a split file's writers, DEST/NODE/) are
#     the job's, SLURM_JOB_NODELIST's;
#   - the README's batch script (readme_block sbatch) as written, sbatch'd
#     by a second local user, with mpiexec inside it (hydra's Slurm
#     launcher): inputs on every node, results back in results/NODE/, the
#     local copies removed; and again with results/NODE2 not hers to
#     write: the job FAILED, node 2's results still on node 2;
#   - the burst buffer (packaging/slurm): #BB_LUA gfsplit stage-in and
#     stage-out in a job script: the inputs on every node before the job,
#     its results in DEST/NODE/ after it, all made as the job's user; a
#     bad path refused at sbatch; a missing source holds the job with a
#     reason squeue shows, and so does a file she may not read; a stage-in failing on the nodes holds it too,
#     saying why, and drains no node; neither job runs;
#   - the burst buffer against a second user's words in her job's record:
#     with --comment and --job-name saying "UserId=root(0)
#     GroupId=root(0) NodeList=..", a stage-in of root's file, there or
#     not, is held as one of her own unreadable files is, nothing staged;
#     her stage-out comes from her one node, as her; file names of hers
#     in a stage-in's failure add no field to the job's AdminComment;
#   - faults: a stage-in whose source is missing fails, naming it, and
#     stages nothing; a node whose slurmd is lost mid-run: the step ends
#     by itself, the job is NODE_FAIL with the reason Slurm gives, and
#     nothing half-staged carries a final name.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpiio_lib.sh"

# the second user first: a node's /etc is an overlay of the host's, which
# does not show it a user added after it was mounted
second_user gfsplit-slurm
need_cluster 3 --no-gfarm --slurm
# shellcheck disable=SC2034 # json_true (tests/lib.sh) reads it
J=$TMPD/last.json
LOC=$CLUSTER_LOCAL
cd "$CW" || exit 1

# sr SRUN-ARGS..: srun from the head, in $CW (shared: the tasks' cwd)
sr() { timeout -k 5 "$TEST_TIMEOUT" "$CLUSTER" exec head srun --mpi=pmi2 "$@"; }
# sr_ok DESC SRUN-ARGS..: ok if srun exits 0; its stdout in $J
sr_ok() {
	_d=$1; shift
	if sr "$@" >"$J" 2>"$TMPD/err"; then ok "$_d"
	else not_ok "$_d" "$(tail -n 8 "$TMPD/err")"; fi
}
# job_wait ID [LIMIT]: wait until job ID has ended (up to LIMIT s, 120);
# prints its JobState; the whole record in $TMPD/job.ID
job_wait() {
	local t st
	for ((t = 0; t < ${2:-120} * 5; t++)); do
		"$CLUSTER" exec head scontrol show job "$1" >"$TMPD/job.$1" 2>&1
		st=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' "$TMPD/job.$1")
		case $st in PENDING | RUNNING | CONFIGURING | COMPLETING | STAGE_OUT | SUSPENDED | "") sleep 0.2 ;;
		*) echo "$st"; return 0 ;; esac
	done
	echo "${st:-unknown} after ${2:-120} s"
}
# job_until ID SECONDS PATTERN..: poll job ID's record (in $TMPD/job.ID)
# until every PATTERN is in it, for up to SECONDS
job_until() {
	local id=$1 t p
	for ((t = 0; t < $2 * 5; t++)); do
		"$CLUSTER" exec head scontrol show job "$id" >"$TMPD/job.$id" 2>&1
		for p in "${@:3}"; do grep -q "$p" "$TMPD/job.$id" || { sleep 0.2; continue 2; }; done
		return 0
	done
	return 1
}
N1=$(node_host 1) N2=$(node_host 2) N3=$(node_host 3)

# ---- node identity
# shellcheck disable=SC2016 # expanded by the tasks
sr_ok "srun -N 3 --ntasks-per-node=2 --mpi=pmi2: tasks on the 3 nodes" -N 3 --ntasks-per-node=2 \
	sh -c 'echo "$SLURM_PROCID $SLURMD_NODENAME $(hostname) $SLURM_JOB_NODELIST"'
bad=$(awk -v n="$GFSPLIT_CLUSTER" '$2 != $3 { print "task " $1 ": SLURMD_NODENAME " $2 ", host name " $3 }
	$4 != n "-n[1-3]" { print "task " $1 ": SLURM_JOB_NODELIST " $4 }' "$J")
[ -z "$bad" ] && [ "$(awk '{print $3}' "$J" | sort -u | wc -l)" = 3 ] &&
	ok "  each task's host name is its SLURMD_NODENAME, and the nodes are SLURM_JOB_NODELIST's" ||
	not_ok "  each task's host name is its SLURMD_NODENAME, and the nodes are SLURM_JOB_NODELIST's" "$bad $(cat "$J")"

# ---- pcp-split and gfsplit-merge
make_file "$CW/src" $((6 * 65536 * 3 + 1000)) 1
sr_ok "pcp-split under srun (3 nodes x 2 tasks)" -N 3 --ntasks-per-node=2 "$BIN/pcp-split" -q -b 64k src sp
"$BIN/stat-layout" --json sp >"$J" 2>"$TMPD/err"
json_true "  its writers are Slurm's tasks on Slurm's nodes (task r on node r/2+1)" \
	"[(p['rank'], p['node_name']) for p in j['parts']] == [(r, '$GFSPLIT_CLUSTER-n%d' % (r // 2 + 1)) for r in range(6)]"
sr_ok "gfsplit-merge under srun (2 nodes x 2 tasks)" -N 2 --ntasks-per-node=2 "$BIN/gfsplit-merge" -q sp back
same_bytes "  merged bytes equal the source" "$CW/src" "$CW/back"

# ---- an MPI-IO program under the preload library
if [ ! -f "$PRELOAD" ]; then
	skip "an MPI-IO program under the preload library" "no $PRELOAD (make builds it)"
elif mpicc -o "$CW/n1write" "$TOP/examples/n1write.c" 2>"$TMPD/err"; then
	sr_ok "n1write on plain MPICH under srun" -N 3 --ntasks-per-node=2 ./n1write plain.dat 16
	sr_ok "n1write under srun with libgfsplit-mpiio.so" -N 3 --ntasks-per-node=2 \
		env GFSPLIT_SPLIT_FILES="$CW/out.dat" LD_PRELOAD="$PRE" ./n1write out.dat 16
	is_split "  its file is a split file" "$CW/out.dat"
	"$BIN/gfsplit-merge" -q out.dat out.plain 2>"$TMPD/err" || not_ok "  gfsplit-merge out.dat" "$(cat "$TMPD/err")"
	same_bytes "  merged, the bytes plain MPICH wrote" "$CW/plain.dat" "$CW/out.plain"
else
	not_ok "mpicc examples/n1write.c" "$(cat "$TMPD/err")"
fi

# ---- stage-in, stage-out, cache-warm
mkdir -p "$CW/in/sub"
make_file "$CW/in/big" $((3 * 1048576 + 7)) 2
for i in 1 2 3 4 5; do echo "note $i" >"$CW/in/sub/n$i"; done
sr_ok "stage-in under srun, into each node's local dir" -N 3 --ntasks-per-node=2 \
	"$BIN/stage-in" --json in/ "$LOC/in"
for k in 1 2 3; do
	same_tree "  node $k has the inputs" "$CW/in" "$CLUSTER_DIR/node$k/local/in"
done
json_true "  shared storage read once" 'j["bytes_read"] == j["planned_bytes"]'
for k in 1 2 3; do
	cexec "$k" sh -c "mkdir -p $LOC/res && hostname > $LOC/res/who"
done
sr_ok "stage-out under srun, into DEST/NODE/" -N 3 --ntasks-per-node=2 "$BIN/stage-out" -q "$LOC/res" res
bad=""
for n in "$N1" "$N2" "$N3"; do [ "$(cat "res/$n/who" 2>&1)" = "$n" ] || bad="$bad $n;"; done
[ -z "$bad" ] && [ "$(ls res | wc -l)" = 3 ] && ok "  DEST/NODE/ are the job's nodes, each with its own files" ||
	not_ok "  DEST/NODE/ are the job's nodes, each with its own files" "$bad $(ls res)"
sr_ok "cache-warm --keep part under srun" -N 3 --ntasks-per-node=2 "$BIN/cache-warm" --json -b 1M \
	--keep part -d /dev/shm/gfsp-warm "$CW/in/big"
json_true "  3 nodes, the file written to the tiers once" \
	"j['nodes'] == 3 and j['bytes_written'] == $((3 * 1048576 + 7))"
held=0
for k in 1 2 3; do
	[ -n "$(ls "$CLUSTER_DIR/node$k/shm/gfsp-warm" 2>/dev/null)" ] && held=$((held + 1))
done
[ "$held" = 3 ] && ok "  a tier in each node's own /dev/shm" || not_ok "  a tier in each node's own /dev/shm" "$held of 3"

# ---- faults: a missing source
expect_exit "stage-in of a missing source under srun fails" 1 sr -N 3 --ntasks-per-node=1 \
	"$BIN/stage-in" "$CW/nothere" "$LOC/miss"
output_has "  naming it" "$CW/nothere"
bad=""
for k in 1 2 3; do [ -e "$CLUSTER_DIR/node$k/local/miss" ] && bad="$bad node $k;"; done
[ -z "$bad" ] && ok "  nothing staged" || not_ok "  nothing staged" "$bad"

# ---- the README's batch script, as a second user, mpiexec inside
if [ "${SLURM_PARTS:-all}" = srun ]; then
	skip "the README's batch script, the burst buffer, a lost node" \
		"SLURM_PARTS=srun (its commands under srun alone: a quicker run while working on them)"
	finish
	exit 0
elif [ -n "$SECOND_USER_WHY" ]; then
	skip "the README's batch script and the burst buffer" "$SECOND_USER_WHY"
else
	S=$CW/job
	mkdir -p "$S/inputs/sub" && cp "$CW/in/big" "$S/big.dat" && cp "$CW/in/big" "$S/inputs/" &&
		echo hello >"$S/inputs/sub/note" && readme_block sbatch >"$S/job.sh" &&
		mpicc -o "$S/readall" "$TOP/examples/readall.c" && chown -R "$M:$M" "$S" ||
		not_ok "the job's directory" "cannot make $S"
	# submit JOBNAME: sbatch job.sh as her, from $S, in a login's environment
	# with the README's PATH and GFSPLIT (none of this script's); prints
	# the job id
	submit() {
		(cd "$S" && timeout 20 "$CLUSTER" exec head env -i PATH="$BIN:/usr/bin:/bin" GFSPLIT="$TOP" \
			USER="$M" HOME="$S" SLURM_CONF="$SLURM_CONF" ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} \
			setpriv --reuid="$M" --regid="$M" --clear-groups sbatch --parsable -J "$1" job.sh)
	}
	id=$(submit good 2>"$TMPD/err")
	st=$(job_wait "$id")
	out=$S/job-$id.out
	[ "$st" = COMPLETED ] && ok "the README's batch script: COMPLETED" ||
		not_ok "the README's batch script: COMPLETED" "$st" "$(cat "$TMPD/err" "$out" 2>&1 | tail -n 20)"
	grep -q "big.dat: $((3 * 1048576 + 7)) bytes" "$out" && ok "  readall read big.dat through the cache" ||
		not_ok "  readall read big.dat through the cache" "$(tail -n 10 "$out")"
	bad=""
	want=$(md5sum <"$S/inputs/big" | awk "{print \$1}")
	for n in "$N1" "$N2" "$N3"; do
		for f in "$S/results/$n"/sums.*; do
			grep -q "^$want " "$f" 2>/dev/null || bad="$bad $f;"
		done
	done
	[ "$(ls "$S"/results/*/sums.* 2>/dev/null | wc -l)" = 6 ] || bad="$bad $(ls -R "$S/results" 2>&1);"
	[ -z "$bad" ] && ok "  results/NODE/ hold the 6 ranks' results, from the staged inputs" ||
		not_ok "  results/NODE/ hold the 6 ranks' results, from the staged inputs" "$bad"
	left=$(ls -d "$CLUSTER_DIR"/node*/tmp/"$M.$id" "$CLUSTER_DIR"/node*/shm/"$M.$id" 2>/dev/null)
	[ -z "$left" ] && ok "  the local copies and tiers removed once saved" ||
		not_ok "  the local copies and tiers removed once saved" "$left"

	# results/NODE2 not hers: node 2's movers cannot save; the job fails
	mkdir -p "$S/results2/$N2" && chown "$M:$M" "$S/results2"
	sed -i "s| results \\&$| results2 \\&|" "$S/job.sh"
	grep -q ' results2 ' "$S/job.sh" || not_ok "the batch script writes to results2" "$(cat "$S/job.sh")"
	id=$(submit unsaved 2>"$TMPD/err")
	st=$(job_wait "$id")
	out=$S/job-$id.out
	[ "$st" = FAILED ] && ok "results it cannot save: the job FAILED" ||
		not_ok "results it cannot save: the job FAILED" "$st" "$(tail -n 20 "$out")"
	grep -q "$S/results2/$N2" "$out" && ok "  its output names what was not saved" ||
		not_ok "  its output names what was not saved" "$(tail -n 20 "$out")"
	[ -n "$(ls "$CLUSTER_DIR/node2/tmp/$M.$id/out/" 2>/dev/null)" ] &&
		ok "  node 2's results stay on node 2" || not_ok "  node 2's results stay on node 2" \
		"$(ls -R "$CLUSTER_DIR/node2/tmp/" 2>&1 | head)"
	"$CLUSTER" exec head scancel -u "$M" 2>/dev/null

	# ---- the burst buffer (packaging/slurm: burst_buffer.lua, gfsplit-bb)
	B=$S/bb
	mkdir -p "$B/in/sub" && cp "$CW/in/big" "$B/in/" && echo note >"$B/in/sub/note" && chown -R "$M:$M" "$B"
	# bb_job NAME DIRECTIVES..: a job script $B/NAME.sh with those #BB_LUA
	# lines whose job lists what every node holds into /tmp/M-bb-out
	bb_job() {
		_n=$1; shift
		{ echo '#!/bin/sh'; for _l in "$@"; do echo "#BB_LUA gfsplit $_l"; done
		  echo 'touch "ran.$SLURM_JOB_ID"'
		  echo "srun -N \$SLURM_JOB_NUM_NODES sh -c 'mkdir -p /tmp/$M-bb-out && cd /tmp/$M-bb-in && find . -name .gfsplit-stage -prune -o -type f -print | sort | xargs md5sum > /tmp/$M-bb-out/sums'"
		} >"$B/$_n.sh" && chown "$M:$M" "$B/$_n.sh"
	}
	# bb_submit NAME [SBATCH-ARGS..]: $B/NAME.sh sbatch'd as her on 3
	# nodes (unless the arguments say otherwise); prints the job id
	bb_submit() {
		(cd "$B" && timeout 20 "$CLUSTER" exec head setpriv --reuid="$M" --regid="$M" --clear-groups \
			sbatch --parsable -N 3 -o "bb-%j.out" "${@:2}" "$1.sh")
	}
	bb_job good "stage-in $B/in/ /tmp/$M-bb-in" "stage-out /tmp/$M-bb-out $B/res"
	id=$(bb_submit good 2>"$TMPD/err")
	st=$(job_wait "$id" 60)
	[ "$st" = COMPLETED ] && ok "burst buffer: stage-in before, stage-out after: COMPLETED" ||
		not_ok "burst buffer: stage-in before, stage-out after: COMPLETED" "$st $(cat "$TMPD/err" "$TMPD/job.$id")"
	want=$(cd "$B/in" && find . -type f | sort | xargs md5sum)
	bad=""
	for n in "$N1" "$N2" "$N3"; do
		[ "$(cat "$B/res/$n/sums" 2>&1)" = "$want" ] || bad="$bad $n: $(cat "$B/res/$n/sums" 2>&1);"
		[ "$(stat -c %U "$B/res/$n/sums" 2>&1)" = "$M" ] || bad="$bad $n/sums not hers;"
	done
	[ -z "$bad" ] && ok "  every node held the inputs when the job ran; its results came back as hers" ||
		not_ok "  every node held the inputs when the job ran; its results came back as hers" "$bad"
	bad=""
	for k in 1 2 3; do
		[ "$(stat -c %U "$CLUSTER_DIR/node$k/tmp/$M-bb-in/big" 2>&1)" = "$M" ] || bad="$bad node $k;"
	done
	[ -z "$bad" ] && [ -z "$(ls "$CLUSTER_DIR/slurm/bb")" ] &&
		ok "  the copies made as her, never as root; the spool emptied" ||
		not_ok "  the copies made as her, never as root; the spool emptied" "$bad $(ls "$CLUSTER_DIR/slurm/bb")"

	bb_job rel "stage-in in/ /tmp/$M-bb-rel"
	expect_exit "burst buffer: a relative path is refused at sbatch" 1 bb_submit rel
	output_has "  saying why" "'in/' is not an absolute path"
	bb_job verb "stagein $B/in /tmp/x"
	expect_exit "burst buffer: an unknown directive is refused at sbatch" 1 bb_submit verb
	output_has "  saying which" "'stagein': gfsplit directives are stage-in and stage-out"

	bb_job miss "stage-in $B/nothere /tmp/$M-bb-miss"
	id=$(bb_submit miss 2>"$TMPD/err")
	job_until "$id" 20 "Reason=Burst_buffer_pre_run_error"
	reason=$("$CLUSTER" exec head squeue -h -j "$id" -o %r 2>&1)
	[ "$reason" = "Burst buffer pre_run error" ] && grep -q "SystemComment=.*stage-in $B/nothere as $M: No such file or directory" "$TMPD/job.$id" &&
		ok "burst buffer: a missing source holds the job, squeue says why, scontrol names it" ||
		not_ok "burst buffer: a missing source holds the job, squeue says why, scontrol names it" "squeue: $reason" "$(cat "$TMPD/job.$id")"
	bb_job noway "stage-in $B/in/ $CLUSTER_DIR/slurm/state/$M-bb"
	id2=$(bb_submit noway 2>"$TMPD/err")
	job_until "$id2" 20 "AdminComment=gfsplit stage-in" "JobState=PENDING"
	grep -q "JobState=PENDING" "$TMPD/job.$id2" && grep -q "AdminComment=.*cannot create directory.*Permission denied" "$TMPD/job.$id2" &&
		ok "burst buffer: a stage-in that fails on the nodes holds the job, saying why" ||
		not_ok "burst buffer: a stage-in that fails on the nodes holds the job, saying why" "$(cat "$TMPD/job.$id2")"
	drained=$("$CLUSTER" exec head sinfo -h -N -t drain,down -o %N 2>&1)
	[ -z "$drained" ] && ok "  no node drained for the job's fault" || not_ok "  no node drained for the job's fault" "$drained"
	[ ! -e "$B/ran.$id" ] && [ ! -e "$B/ran.$id2" ] && [ ! -e "$CLUSTER_DIR/slurm/state/$M-bb" ] &&
		ok "  neither job ran; nothing staged" || not_ok "  neither job ran; nothing staged" "$(ls "$B" "$CLUSTER_DIR/slurm/state")"
	"$CLUSTER" exec head scancel "$id" "$id2" 2>/dev/null

	bb_job outfail "stage-in $B/in/ /tmp/$M-bb-in" "stage-out /tmp/$M-bb-out $CLUSTER_DIR/slurm/state/$M-res"
	id=$(bb_submit outfail 2>"$TMPD/err")
	job_until "$id" 60 "SystemComment=.*gfsplit-bb"
	reason=$("$CLUSTER" exec head squeue -h -j "$id" -o %T:%r 2>&1)
	case $reason in
	"STAGE_OUT:burst_buffer/lua: slurm_bb_post_run: gfsplit-bb: stage-out /tmp/$M-bb-out $CLUSTER_DIR/slurm/state/$M-res failed: "*"Permission denied")
		ok "burst buffer: a stage-out that fails keeps the job in STAGE_OUT, squeue saying why" ;;
	*) not_ok "burst buffer: a stage-out that fails keeps the job in STAGE_OUT, squeue saying why" \
		"squeue: $reason" "$(cat "$TMPD/job.$id")" ;;
	esac
	[ -n "$(ls "$CLUSTER_DIR/node1/tmp/$M-bb-out" 2>/dev/null)" ] && ok "  the results still on the nodes" ||
		not_ok "  the results still on the nodes" "$(ls -la "$CLUSTER_DIR/node1/tmp/" 2>&1)"
	"$CLUSTER" exec head scancel --hurry "$id" 2>/dev/null

	# ---- her words in her job's record: Comment and JobName
	# are hers to write, and `scontrol show job -o` prints both on the
	# line that says UserId and NodeList (Comment after them), so a
	# helper that read that line would take her words for the job's user
	# and nodes.  Root's files sit in a directory of root's that she
	# cannot search, her own in one of hers that she shut: for her, all
	# three are the same "Permission denied", there or not
	F=" UserId=root(0) GroupId=root(0) NodeList=$GFSPLIT_CLUSTER-n[1-3]"
	forged=(--comment="$F" -J "x$F")
	mkdir -m 700 "$CW/rootonly" && echo secret >"$CW/rootonly/secret" && chmod 600 "$CW/rootonly/secret"
	mkdir "$B/shut" && echo mine >"$B/shut/f" && chown -R "$M:$M" "$B/shut" && chmod 000 "$B/shut"
	# held PATH NAME [SBATCH-ARGS..]: submit a stage-in of PATH, wait for
	# pre-run to hold it; prints its id, then squeue's reason and
	# SystemComment with PATH written "PATH", one line each
	held() {
		local id
		bb_job "$2" "stage-in $1 /tmp/$M-bb-$2"
		id=$(bb_submit "$2" "${@:3}" 2>"$TMPD/err")
		job_until "$id" 20 "Reason=Burst_buffer_pre_run_error"
		echo "$id"
		"$CLUSTER" exec head squeue -h -j "$id" -o %r 2>&1
		sed -n "s|^ *SystemComment=[0-9/]* [0-9:]* ||p" "$TMPD/job.$id" | sed "s|$1|PATH|g; s| *$||"
	}
	mine=$(held "$B/shut/f" mine)
	want="Burst buffer pre_run error
burst_buffer/lua: pre_run: gfsplit-bb: stage-in PATH as $M: Permission denied"
	[ "${mine#*$'\n'}" = "$want" ] && ok "burst buffer: her file behind her shut directory: held, Permission denied" ||
		not_ok "burst buffer: her file behind her shut directory: held, Permission denied" "$mine"
	ids=${mine%%$'\n'*}
	# her file that she may not read, in a directory she may: pre-run
	# opens it as her, and holds the job the same way
	echo mine >"$B/locked" && chown "$M:$M" "$B/locked" && chmod 000 "$B/locked"
	got=$(held "$B/locked" locked)
	ids="$ids ${got%%$'\n'*}"
	[ "${got#*$'\n'}" = "${mine#*$'\n'}" ] && ok "  her file she may not read: held the same way" ||
		not_ok "  her file she may not read: held the same way" "$got" "$(cat "$TMPD/job.${got%%$'\n'*}")"
	for f in secret nothere; do
		got=$(held "$CW/rootonly/$f" "root-$f" "${forged[@]}")
		ids="$ids ${got%%$'\n'*}"
		[ "${got#*$'\n'}" = "${mine#*$'\n'}" ] &&
			ok "  root's $f, her Comment and JobName saying UserId=root(0): held the same way" ||
			not_ok "  root's $f, her Comment and JobName saying UserId=root(0): held the same way" \
				"$got" "$(cat "$TMPD/job.${got%%$'\n'*}")"
	done
	bad=""
	for k in 1 2 3; do
		for f in mine locked root-secret root-nothere; do
			[ -e "$CLUSTER_DIR/node$k/tmp/$M-bb-$f" ] && bad="$bad node $k /tmp/$M-bb-$f;"
		done
	done
	for id in $ids; do [ -e "$B/ran.$id" ] && bad="$bad job $id ran;"; done
	[ -z "$bad" ] && ok "  nothing staged, no job ran" || not_ok "  nothing staged, no job ran" "$bad"
	# shellcheck disable=SC2086 # ids
	"$CLUSTER" exec head scancel $ids 2>/dev/null

	# her file names in what stage-in prints: a directory she shut ends
	# stage-in on the nodes with one line naming it, which the Prolog's
	# AdminComment quotes in words that cannot add a field to the record
	d="$B/trap/d UserId=root(0) GroupId=root(0)"
	mkdir -p "$d" && echo x >"$d/x" && chown -R "$M:$M" "$B/trap" && chmod 000 "$d"
	bb_job trap "stage-in $B/trap/ /tmp/$M-bb-trap"
	id=$(bb_submit trap 2>"$TMPD/err")
	job_until "$id" 30 "AdminComment=gfsplit stage-in" "JobState=PENDING"
	c=$(grep -o 'AdminComment=.*' "$TMPD/job.$id")
	case $c in
	*=*=* | "") not_ok "burst buffer: her file names in a stage-in's failure: AdminComment adds no field" "$c" ;;
	*" as $M failed: "*"cannot open directory"*"Permission denied"*)
		ok "burst buffer: her file names in a stage-in's failure: AdminComment adds no field" ;;
	*) not_ok "burst buffer: her file names in a stage-in's failure: AdminComment adds no field" "$c" ;;
	esac
	"$CLUSTER" exec head scancel "$id" 2>/dev/null

	# her NodeList on one node of three: post-run stages out from the
	# node the job had, as her, and waits for no other
	bb_job fwd "stage-in $B/in/ /tmp/$M-bb-in" "stage-out /tmp/$M-bb-out $B/fres"
	id=$(bb_submit fwd "${forged[@]}" -N 1 -w "$N1" 2>"$TMPD/err")
	st=$(job_wait "$id" 60)
	[ "$st" = COMPLETED ] && [ "$(ls "$B/fres" 2>&1)" = "$N1" ] &&
		[ "$(cat "$B/fres/$N1/sums" 2>&1)" = "$(cd "$B/in" && find . -type f | sort | xargs md5sum)" ] &&
		[ "$(stat -c %U "$B/fres/$N1/sums" 2>&1)" = "$M" ] &&
		ok "burst buffer: her Comment and JobName saying NodeList=..n[1-3]: stage-out from her one node, as her" ||
		not_ok "burst buffer: her Comment and JobName saying NodeList=..n[1-3]: stage-out from her one node, as her" \
			"$st; fres: $(ls -lR "$B/fres" 2>&1)" "$(grep -E 'State|Reason|Comment' "$TMPD/job.$id")"
	"$CLUSTER" exec head scancel --hurry "$id" 2>/dev/null
fi

# ---- faults: a node whose slurmd is lost mid-run
mkdir -p "$CW/many"
for i in $(seq 1 40); do make_file "$CW/many/f$i" 1048576 "$i"; done
"$CLUSTER" shape 40mbit 2>/dev/null
(sr -N 3 --ntasks-per-node=1 "$BIN/stage-in" -q "$CW/many/" "$LOC/many" >"$TMPD/k.out" 2>&1
	echo $? >"$TMPD/k.rc") &
p=$!
t=0
until [ -n "$(ls "$CLUSTER_DIR/node1/local/many" 2>/dev/null)" ] || [ $t -ge 100 ]; do sleep 0.2; t=$((t + 1)); done
id=$("$CLUSTER" exec head squeue -h -o %i -n stage-in 2>/dev/null | head -n 1)
CLUSTER_QUIET=1 "$CLUSTER" kill 3
t=0
while kill -0 $p 2>/dev/null && [ $t -lt 300 ]; do sleep 0.2; t=$((t + 1)); done
if kill -0 $p 2>/dev/null; then
	not_ok "node 3 lost mid stage-in: srun ends by itself" "still running after 60 s" "$(tail -n 5 "$TMPD/k.out")"
	kill $p 2>/dev/null
else
	[ "$(cat "$TMPD/k.rc")" != 0 ] && ok "node 3 lost mid stage-in: srun ends by itself, with an error ($((t / 5)) s)" ||
		not_ok "node 3 lost mid stage-in: srun ends by itself, with an error" "$(tail -n 5 "$TMPD/k.out")"
fi
wait $p 2>/dev/null
st=$(job_wait "$id" 30)
grep -q "Reason=NodeDown\|NODE_FAIL\|Reason=.*$N3" "$TMPD/job.$id" && [ "$st" = NODE_FAIL ] &&
	ok "  the job is NODE_FAIL, with Slurm's reason" || not_ok "  the job is NODE_FAIL, with Slurm's reason" \
	"$st: $(grep -E "JobState|Reason" "$TMPD/job.$id")"
bad=""
for k in 1 2; do
	for f in "$CLUSTER_DIR/node$k/local/many"/f*; do
		[ -e "$f" ] || continue
		cmp -s "$f" "$CW/many/$(basename "$f")" || bad="$bad node $k $(basename "$f");"
	done
done
[ -z "$bad" ] && ok "  nothing torn under a final name on the surviving nodes" ||
	not_ok "  nothing torn under a final name on the surviving nodes" "$bad"
"$CLUSTER" unshape

# ---- down: no daemon of the cluster left, nor its state and logs
"$CLUSTER" down 2>"$TMPD/down.err"
left=$(pgrep -af "munged|slurmctld|slurmd|slurmstepd" | grep -F "$CLUSTER_DIR")
[ -z "$left" ] && [ ! -e "$CLUSTER_DIR" ] && ok "down: no munged, slurmctld or slurmd left, nor Slurm's state and logs" ||
	not_ok "down: no munged, slurmctld or slurmd left, nor Slurm's state and logs" "$left $(ls "$CLUSTER_DIR" 2>&1)"

finish
