/*
 * driver.h - the driver wing: what the thin commands in cmd/ call.  The
 * top of libcore: it may use every wing below (base for errors and
 * logging, store for fault injection, cache for the transports --version
 * lists); nothing in libcore uses it.  Included by cmd/, libcore/driver/
 * and tests/.
 */
#ifndef GFSP_DRIVER_H
#define GFSP_DRIVER_H

#include <stdio.h>
#include "core.h"

/*
 * The shared command driver.  A command fills a struct gfsp_cmd and calls
 * gfsp_cmd_main() from main().  The driver initialises MPI (or not, for
 * commands with .uses_mpi == 0 and no mpiexec), handles --help, --version,
 * -v/-q and usage errors, calls run(), agrees on the exit code across ranks
 * (0 success, 1 failure, 2 usage), checks that stdout was written without
 * error, and finalises MPI.
 *
 * Options are described once, in the command's table; --help text, the man
 * page and the completions are checked against it by tests/cmd/options.sh.
 */
/* SIZE: a positive size with suffixes ("4M"); OFFSET: the same, 0 allowed;
 * OPTUINT: a flag that may take "=N" (value: int64_t, -1 when not given,
 * 0 when given alone, N when given as --name=N, and -2, -3... for the
 * first, second... word of its choices given as --name=WORD); LIST: a string that may
 * be given again, the values joined with commas (value: char **, NULL
 * when not given), as mount's -o */
enum gfsp_optarg {
	GFSP_OPT_FLAG, GFSP_OPT_SIZE, GFSP_OPT_OFFSET, GFSP_OPT_STRING,
	GFSP_OPT_UINT, GFSP_OPT_OPTUINT, GFSP_OPT_LIST
};

struct gfsp_opt {
	const char *lname;	/* "block-size" */
	char sname;		/* 'b', or 0 */
	enum gfsp_optarg type;
	const char *argname;	/* "SIZE"; NULL for flags */
	const char *help;	/* one line */
	void *value;		/* int* for flags, uint64_t* sizes/uints, const char** strings */
	const char *choices;	/* strings: the accepted values, "a|b", or NULL */
};

/* An old spelling that still works, out of --help: -b, once envelope-bench's
 * --buffer-size, or --no-sync, stage-out's default now.  Given, it says
 * note (rank 0) and sets target (a long name in the table) as that would
 * be set; a NULL target makes it a no-op. */
struct gfsp_alias {
	char sname;		/* 'b', or 0 */
	const char *lname;	/* "no-sync", or NULL */
	const char *target;	/* "buffer-size", or NULL */
	const char *note;	/* "-b is --buffer-size here; ..." */
};

struct gfsp_cmd {
	const char *name;		/* "pcp-split" */
	const char *usage;		/* "[OPTIONS] SRC DST" */
	const char *summary;		/* one line */
	const struct gfsp_opt *opts;	/* terminated by a zeroed entry */
	const struct gfsp_alias *aliases; /* the same, or NULL */
	int min_args, max_args;		/* positional arguments */
	int uses_mpi;			/* 0: plain program, no MPI_Init */
	int mpi_multiple;		/* MPI_THREAD_MULTIPLE, for the
					 * cache's progress thread */
	int daemon;			/* runs until asked to end: no
					 * --timeout (the mover) */
	int progress;			/* draws a progress line: gets
					 * --progress[=SECONDS] */
	int stoppable;			/* a copy whose pipeline stops at
					 * SIGINT or SIGTERM and removes what
					 * it made (gfsp_watch_stoppable) */
	/* run: argc/argv are the positional arguments; return 0, 1 or
	 * GFSP_EXIT_PARTIAL.
	 * Must be collective-safe: every rank returns, none exits. */
	int (*run)(int argc, char **argv, MPI_Comm comm);
};

/* A run's status beyond 0 (done), 1 (failed) and 2 (usage): done with
 * what can be done, some entries left out by design (stage: FIFOs,
 * sockets, devices), each named in a warning. */
#define GFSP_EXIT_PARTIAL	3

/* Common options every command gets from the driver. */
extern int gfsp_opt_verbose, gfsp_opt_quiet;

int gfsp_cmd_main(const struct gfsp_cmd *cmd, int argc, char **argv);

/* What this process does after MPI_Finalize, when every rank's run
 * succeeded (stage-out --async --attach: wait for its node's mover); its
 * return is the exit status.  Called from a command's run. */
void gfsp_cmd_then(int (*fn)(void));

/* "gfsplit 0.1.0 (backends: posix gfarm; transports: ...)" */
void gfsp_print_version(FILE *out, const char *prog);

#endif /* GFSP_DRIVER_H */
