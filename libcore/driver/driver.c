/*
 * driver.c - the shared command driver: MPI set-up, options from the
 * command's table, --help/--version, exit codes agreed across ranks.
 *
 * Exit codes: 0 success, 1 failure, 2 usage.  Every rank parses the same
 * argv, so a usage error is found by all of them without communication;
 * only rank 0 prints it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>


#include "core.h"
#include "driver.h"
#include "onesided.h"
#include "store.h"

int gfsp_opt_verbose, gfsp_opt_quiet;

#define EXIT_USAGE	2
#define OPTVAL_LONG	256	/* getopt value of table entry i: 256 + i */
#define OPTVAL_ALIAS	1024	/* ... of alias j without a letter */
#define PROGRESS_LINES	10	/* --progress alone: seconds between lines */

static int gfsp_opt_help, gfsp_opt_version;
static uint64_t gfsp_opt_timeout;
static int64_t gfsp_opt_progress = -1;

static const struct gfsp_opt common_opts[] = {
	{ "help", 'h', GFSP_OPT_FLAG, NULL, "show this help and exit",
	  &gfsp_opt_help, NULL },
	{ "version", 'V', GFSP_OPT_FLAG, NULL,
	  "show version and build features and exit", &gfsp_opt_version, NULL },
	{ "verbose", 'v', GFSP_OPT_FLAG, NULL,
	  "list what is done to each file or part, and print more",
	  &gfsp_opt_verbose, NULL },
	{ "quiet", 'q', GFSP_OPT_FLAG, NULL,
	  "print only errors (no progress line)", &gfsp_opt_quiet, NULL },
	{ "timeout", 0, GFSP_OPT_UINT, "SECONDS",
	  "give up when a rank waits for the others or makes no progress "
	  "for SECONDS, naming the rank and phase waited for (default: "
	  "GFSPLIT_TIMEOUT, or never)", &gfsp_opt_timeout, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

/* for the commands with a progress line */
static const struct gfsp_opt progress_opts[] = {
	{ "progress", 0, GFSP_OPT_OPTUINT, "SECONDS",
	  "show progress even when stderr is not a terminal: there one line "
	  "every SECONDS (default 10); on a terminal the line is redrawn",
	  &gfsp_opt_progress, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

void
gfsp_print_version(FILE *out, const char *prog)
{
	fprintf(out, "%s (gfsplit) %s\n", prog, GFSPLIT_VERSION);
	fprintf(out, "backends: posix%s\n",
#ifdef HAVE_GFARM
		" gfarm"
#else
		""
#endif
		);
	/* detected by configure and linked; the staging (zstd) and cache
	 * (verbs) code that uses them lists itself here when it exists */
	fprintf(out, "optional libraries:%s%s%s\n",
#ifdef HAVE_ZSTD
		" zstd",
#else
		"",
#endif
#ifdef HAVE_IBVERBS
		" ibverbs",
#else
		"",
#endif
#if defined(HAVE_ZSTD) || defined(HAVE_IBVERBS)
		""
#else
		" none"
#endif
		);
	fprintf(out, "cache transports: %s\n", gfsp_os_builtin());
}

/* the tables, command's first, as one indexable sequence */
struct optset {
	const struct gfsp_opt *tab[3];
	size_t n[3];
};

static size_t
table_len(const struct gfsp_opt *t)
{
	size_t n = 0;

	while (t != NULL && t[n].lname != NULL)
		n++;
	return n;
}

static const struct gfsp_opt *
optset_get(const struct optset *s, size_t i)
{
	size_t t = 0;

	while (i >= s->n[t]) {
		i -= s->n[t];
		t++;
	}
	return &s->tab[t][i];
}

static size_t
optset_len(const struct optset *s)
{
	return s->n[0] + s->n[1] + s->n[2];
}

/* the option of long name lname, or NULL */
static const struct gfsp_opt *
optset_named(const struct optset *s, const char *lname)
{
	size_t i;

	for (i = 0; lname != NULL && i < optset_len(s); i++)
		if (strcmp(optset_get(s, i)->lname, lname) == 0)
			return optset_get(s, i);
	return NULL;
}

static size_t
alias_len(const struct gfsp_alias *a)
{
	size_t n = 0;

	while (a != NULL && (a[n].sname != 0 || a[n].lname != NULL))
		n++;
	return n;
}

/* the alias a getopt value stands for, or NULL */
static const struct gfsp_alias *
alias_find(const struct gfsp_cmd *cmd, int val)
{
	size_t i, n = alias_len(cmd->aliases);

	if (val >= OPTVAL_ALIAS)
		return (size_t)(val - OPTVAL_ALIAS) < n ?
			&cmd->aliases[val - OPTVAL_ALIAS] : NULL;
	for (i = 0; i < n; i++)
		if (cmd->aliases[i].sname == val)
			return &cmd->aliases[i];
	return NULL;
}

/* the option a getopt value stands for, or NULL */
static const struct gfsp_opt *
optset_find(const struct optset *s, int val)
{
	size_t i;

	if (val >= OPTVAL_LONG)
		return (size_t)(val - OPTVAL_LONG) < optset_len(s) ?
			optset_get(s, (size_t)(val - OPTVAL_LONG)) : NULL;
	for (i = 0; i < optset_len(s); i++)
		if (val != 0 && optset_get(s, i)->sname == val)
			return optset_get(s, i);
	return NULL;
}

/* "  -b, --block-size=SIZE" / "      --json" */
static int
opt_head(const struct gfsp_opt *o, char *buf, size_t len)
{
	char sh[8] = "    ";

	if (o->sname != 0)
		snprintf(sh, sizeof(sh), "-%c, ", o->sname);
	if (o->type == GFSP_OPT_OPTUINT)
		return snprintf(buf, len, "  %s--%s[=%s]", sh, o->lname,
				o->argname);
	return snprintf(buf, len, "  %s--%s%s%s", sh, o->lname,
			o->argname != NULL ? "=" : "",
			o->argname != NULL ? o->argname : "");
}

#define HELP_WIDTH	80

/* text from column col (where the caller's output stands), its words
 * wrapped before HELP_WIDTH onto lines that start at column indent */
static void
put_wrapped(const char *text, int col, int indent)
{
	const char *p = text, *end;
	int n;

	while (*p != '\0') {
		while (*p == ' ')
			p++;
		end = p;
		while (*end != '\0' && *end != ' ')
			end++;
		n = (int)(end - p);
		if (n == 0)
			break;
		if (col > indent && col + 1 + n > HELP_WIDTH) {
			printf("\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			putchar(' ');
			col++;
		}
		printf("%.*s", n, p);
		col += n;
		p = end;
	}
	putchar('\n');
}

static void
print_help(const struct gfsp_cmd *cmd, const struct optset *s)
{
	char head[256];
	size_t i;
	int w = 0, n;

	printf("Usage: %s %s\n", cmd->name, cmd->usage);
	if (cmd->summary != NULL)
		put_wrapped(cmd->summary, 0, 0);
	printf("\nOptions:\n");
	for (i = 0; i < optset_len(s); i++) {
		n = opt_head(optset_get(s, i), head, sizeof(head));
		w = GFSP_MAX(w, n);
	}
	for (i = 0; i < optset_len(s); i++) {
		opt_head(optset_get(s, i), head, sizeof(head));
		printf("%-*s  ", w, head);
		put_wrapped(optset_get(s, i)->help, w + 2, w + 2);
	}
}

static void
usage_error(const struct gfsp_cmd *cmd, int rank, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
usage_error(const struct gfsp_cmd *cmd, int rank, const char *fmt, ...)
{
	char msg[GFSP_ERRMSG_MAX];
	va_list ap;

	if (rank != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n",
		cmd->name, msg, cmd->name);
	fflush(stderr);
	gfsp_log_remember(msg);
}

/* strict decimal: no sign, no junk, no overflow */
static int
parse_uint(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

/* arg's position in choices "a|b|c", from 1; 0 when it is none of them */
static int
is_choice(const char *choices, const char *arg)
{
	size_t n = strlen(arg);
	const char *p = choices, *bar;
	int i;

	for (i = 1;; i++) {
		bar = strchr(p, '|');
		if ((size_t)((bar ? bar : p + strlen(p)) - p) == n &&
		    strncmp(p, arg, n) == 0)
			return i;
		if (bar == NULL)
			return 0;
		p = bar + 1;
	}
}

/* 0, or EXIT_USAGE after printing why (rank 0) */
static int
set_value(const struct gfsp_cmd *cmd, int rank, const struct gfsp_opt *o,
	  const char *arg)
{
	struct gfsp_error err;
	uint64_t v;
	int word;

	switch (o->type) {
	case GFSP_OPT_FLAG:
		(*(int *)o->value)++;
		break;
	case GFSP_OPT_SIZE:
	case GFSP_OPT_OFFSET:
		gfsp_error_clear(&err);
		if (gfsp_parse_size(arg, (uint64_t *)o->value, &err) != 0) {
			usage_error(cmd, rank, "option '--%s': %s", o->lname,
				    err.msg);
			return EXIT_USAGE;
		}
		if (o->type == GFSP_OPT_SIZE && *(uint64_t *)o->value == 0) {
			usage_error(cmd, rank, "option '--%s': size must be "
				    "positive", o->lname);
			return EXIT_USAGE;
		}
		break;
	case GFSP_OPT_OPTUINT:
		if (arg == NULL) {
			*(int64_t *)o->value = 0;
			break;
		}
		/* a word of choices: -2 for the first, -3 the next... */
		if (o->choices != NULL && (word = is_choice(o->choices,
							    arg)) > 0) {
			*(int64_t *)o->value = -1 - word;
			break;
		}
		if (parse_uint(arg, &v) != 0 || v > INT64_MAX) {
			usage_error(cmd, rank, "option '--%s': invalid number "
				    "'%s'", o->lname, arg);
			return EXIT_USAGE;
		}
		*(int64_t *)o->value = (int64_t)v;
		break;
	case GFSP_OPT_UINT:
		if (parse_uint(arg, (uint64_t *)o->value) != 0) {
			usage_error(cmd, rank, "option '--%s': invalid number "
				    "'%s'", o->lname, arg);
			return EXIT_USAGE;
		}
		break;
	case GFSP_OPT_STRING:
		if (o->choices != NULL && !is_choice(o->choices, arg)) {
			usage_error(cmd, rank, "option '--%s': '%s' is not "
				    "one of %s", o->lname, arg, o->choices);
			return EXIT_USAGE;
		}
		*(const char **)o->value = arg;
		break;
	case GFSP_OPT_LIST: {
		char **list = o->value, *s;

		if (asprintf(&s, "%s%s%s", *list != NULL ? *list : "",
		    *list != NULL ? "," : "", arg) < 0) {
			usage_error(cmd, rank, "out of memory");
			return EXIT_USAGE;
		}
		free(*list);
		*list = s;
		break;
	}
	}
	return 0;
}

/* The tables getopt_long wants (lopts: room for every option and alias,
 * and a zero entry; sopts: 3 bytes each, and 2) from the options of s and
 * the command's aliases. */
static void
getopt_tables(const struct gfsp_cmd *cmd, const struct optset *s,
	      struct option *lopts, char *sopts)
{
	const struct gfsp_opt *o;
	const struct gfsp_alias *al;
	size_t i, j, n = optset_len(s), na = alias_len(cmd->aliases);
	char *sp;

	/* leading ':' makes a missing argument return ':' */
	sp = sopts;
	*sp++ = ':';
	for (i = 0; i < n; i++) {
		o = optset_get(s, i);
		lopts[i].name = o->lname;
		lopts[i].has_arg = o->type == GFSP_OPT_FLAG ? no_argument :
			o->type == GFSP_OPT_OPTUINT ? optional_argument :
			required_argument;
		lopts[i].flag = NULL;
		lopts[i].val = o->sname != 0 ? o->sname :
			OPTVAL_LONG + (int)i;
		if (o->sname != 0) {
			*sp++ = o->sname;
			if (o->type != GFSP_OPT_FLAG)
				*sp++ = ':';
			if (o->type == GFSP_OPT_OPTUINT)
				*sp++ = ':';	/* "z::": -zN only */
		}
	}
	for (j = 0; j < na; j++) {
		al = &cmd->aliases[j];
		o = optset_named(s, al->target);
		if (al->lname != NULL) {
			lopts[i].name = al->lname;
			lopts[i].has_arg = o == NULL ||
				o->type == GFSP_OPT_FLAG ? no_argument :
				required_argument;
			lopts[i++].val = OPTVAL_ALIAS + (int)j;
		}
		if (al->sname != 0) {
			*sp++ = al->sname;
			if (o != NULL && o->type != GFSP_OPT_FLAG)
				*sp++ = ':';
		}
	}
	*sp = '\0';
}

/* The message for what getopt_long returned as c, ':' (an argument
 * missing) or '?' (an option unknown, or given an argument it takes not). */
static void
bad_option(const struct gfsp_cmd *cmd, int rank, const struct optset *s,
	   int c, char **argv)
{
	const struct gfsp_opt *o = optset_find(s, optopt);

	if (c == ':') {
		if (o != NULL && (optopt >= OPTVAL_LONG ||
				  strncmp(argv[optind - 1], "--", 2) == 0))
			usage_error(cmd, rank, "option '--%s' requires "
				    "an argument", o->lname);
		else
			usage_error(cmd, rank, "option requires an "
				    "argument -- '%c'", optopt);
	} else if (o != NULL) {	/* "--flag=value" */
		usage_error(cmd, rank, "option '--%s' doesn't "
			    "allow an argument", o->lname);
	} else if (optopt != 0) {
		usage_error(cmd, rank, "invalid option -- "
			    "'%c'", optopt);
	} else {
		usage_error(cmd, rank, "unrecognized option "
			    "'%s'", argv[optind - 1]);
	}
}

/* The operands argv[optind..argc): as many as cmd takes, and no "-";
 * 0 or EXIT_USAGE (said). */
static int
check_operands(const struct gfsp_cmd *cmd, int rank, int argc, char **argv)
{
	int npos, k;

	npos = argc - optind;
	if (npos < cmd->min_args) {
		usage_error(cmd, rank, npos == 0 ? "missing operand" :
			    "missing operand after '%s'", argv[argc - 1]);
		return EXIT_USAGE;
	}
	if (cmd->max_args >= 0 && npos > cmd->max_args) {
		usage_error(cmd, rank, "extra operand '%s'",
			    argv[optind + cmd->max_args]);
		return EXIT_USAGE;
	}
	/* no command reads standard input or writes its data to standard
	 * output: "-" would be a file of that name, surprising everyone */
	for (k = optind; k < argc; k++)
		if (strcmp(argv[k], "-") == 0) {
			usage_error(cmd, rank, "'-': standard input and output "
				    "are not files here (write ./- for a file "
				    "named '-')");
			return EXIT_USAGE;
		}
	return 0;
}

/*
 * Parse argv; 0 to run, -1 when --help/--version was handled (exit 0),
 * EXIT_USAGE on a usage error.  On 0, *first is the index of the first
 * positional argument (getopt moves them to the end).
 */
static int
parse_args(const struct gfsp_cmd *cmd, int rank, int argc, char **argv,
	   int *first)
{
	struct optset s = { { cmd->opts, common_opts, progress_opts },
			    { table_len(cmd->opts), table_len(common_opts),
			      cmd->progress ? table_len(progress_opts) : 0 } };
	struct option *lopts = NULL;
	char *sopts = NULL;
	const struct gfsp_opt *o;
	const struct gfsp_alias *al;
	size_t n = optset_len(&s), na = alias_len(cmd->aliases);
	int c, rc = 0;

	lopts = calloc(n + na + 1, sizeof(*lopts));
	sopts = malloc(3 * (n + na) + 2);
	if (lopts == NULL || sopts == NULL) {
		if (rank == 0)
			fprintf(stderr, "%s: out of memory\n", cmd->name);
		rc = 1;
		goto out;
	}
	getopt_tables(cmd, &s, lopts, sopts);

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		if (c == ':' || c == '?') {
			bad_option(cmd, rank, &s, c, argv);
			rc = EXIT_USAGE;
			goto out;
		}
		o = optset_find(&s, c);
		if (o == NULL && (al = alias_find(cmd, c)) != NULL) {
			if (rank == 0)
				fprintf(stderr, "%s: note: %s\n", cmd->name,
					al->note);
			o = optset_named(&s, al->target);
		}
		if (o == NULL)
			continue;	/* a no-op alias */
		rc = set_value(cmd, rank, o, optarg);
		if (rc != 0)
			goto out;
	}

	if (gfsp_opt_help) {
		if (rank == 0)
			print_help(cmd, &s);
		rc = -1;
		goto out;
	}
	if (gfsp_opt_version) {
		if (rank == 0)
			gfsp_print_version(stdout, cmd->name);
		rc = -1;
		goto out;
	}
	rc = check_operands(cmd, rank, argc, argv);
	if (rc != 0)
		goto out;
	*first = optind;
out:
	free(lopts);
	free(sopts);
	return rc;
}

/* 0 if everything written to stdout reached it, else 1 (with a message) */
static int
check_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		gfsp_log_error("write error on stdout%s%s",
			      errno != 0 ? ": " : "",
			      errno != 0 ? strerror(errno) : "");
		return 1;
	}
	return 0;
}

/* --timeout, or GFSPLIT_TIMEOUT: the same on every rank */
static int
watch(const struct gfsp_cmd *cmd, MPI_Comm comm)
{
	struct gfsp_error err = { 0 };
	double t = (double)gfsp_opt_timeout;

	if (cmd->daemon)
		return 0;
	if (t == 0 && gfsp_timeout_env(&t) != 0) {
		gfsp_log_error("GFSPLIT_TIMEOUT='%s': seconds, please",
			      getenv("GFSPLIT_TIMEOUT"));
		return EXIT_USAGE;
	}
	if (gfsp_watch_start(cmd->name, comm, t, &err) != 0) {
		gfsp_log_gfs_error(&err);
		return 1;
	}
	return 0;
}

/* --json given (the command's flag of that name is set) */
static int
json_wanted(const struct gfsp_cmd *cmd)
{
	const struct gfsp_opt *o;

	for (o = cmd->opts; o != NULL && o->lname != NULL; o++)
		if (strcmp(o->lname, "json") == 0 && o->type == GFSP_OPT_FLAG)
			return *(const int *)o->value != 0;
	return 0;
}

/*
 * A run that failed before it printed its document still owes --json one
 * (schemas/error.schema.json): the common members and "error", with the
 * message of rank 0's last error (the one on standard error).
 */
static void
print_error_doc(const struct gfsp_cmd *cmd, int nprocs, double seconds,
		int status, int argc, char **argv)
{
	json_object *doc, *e, *ops;
	const char *msg = gfsp_log_last_error();
	int i;

	doc = gfsp_json_doc(cmd->name, NULL, NULL, nprocs, seconds, -1);
	e = json_object_new_object();
	ops = json_object_new_array();
	if (doc == NULL || e == NULL || ops == NULL) {
		json_object_put(doc);
		json_object_put(e);
		json_object_put(ops);
		return;
	}
	json_object_object_add(e, "message", json_object_new_string(
	    msg[0] != '\0' ? msg : "failed (see standard error)"));
	json_object_object_add(e, "exit_status", json_object_new_int(status));
	for (i = 0; i < argc; i++)
		json_object_array_add(ops, json_object_new_string(argv[i]));
	json_object_object_add(e, "operands", ops);
	json_object_object_add(doc, "error", e);
	gfsp_json_print(stdout, doc, JSON_C_TO_STRING_PLAIN |
			JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(doc);
}

static int (*then)(void);

void
gfsp_cmd_then(int (*fn)(void))
{
	then = fn;
}

int
gfsp_cmd_main(const struct gfsp_cmd *cmd, int argc, char **argv)
{
	MPI_Comm comm = MPI_COMM_NULL;
	int rank = 0, nprocs = 1, provided = 0, rc, all, first = 0, level;
	double t0 = gfsp_now();

	if (cmd->uses_mpi) {
		if (MPI_Init_thread(&argc, &argv, cmd->mpi_multiple ?
				    MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED,
				    &provided) != MPI_SUCCESS) {
			fprintf(stderr, "%s: cannot initialize MPI\n",
				cmd->name);
			return 1;
		}
		comm = MPI_COMM_WORLD;
		MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
		MPI_Comm_rank(comm, &rank);
		MPI_Comm_size(comm, &nprocs);
	}
	/* messages from option parsing already carry the program name */
	gfsp_log_setup(cmd->name, rank, nprocs, GFSP_LOG_NORMAL);

	rc = parse_args(cmd, rank, argc, argv, &first);
	if (rc == 0) {
		level = gfsp_opt_quiet ? GFSP_LOG_QUIET :
			gfsp_opt_verbose ? GFSP_LOG_VERBOSE : GFSP_LOG_NORMAL;
		gfsp_log_setup(cmd->name, rank, nprocs, level);
		if (gfsp_opt_progress >= 0)
			gfsp_progress_force(gfsp_opt_progress > 0 ?
					    (double)gfsp_opt_progress :
					    PROGRESS_LINES);
		gfsp_fault_init(rank);
		if (cmd->uses_mpi && provided < MPI_THREAD_FUNNELED)
			gfsp_log_verbose("MPI provides thread level %d only",
					provided);
		rc = watch(cmd, comm);
		/* to the end: a signal that comes after this rank's run
		 * (another rank's stop ended it) must not kill it before it
		 * reports; a stop not over in 10 s ends it all the same */
		gfsp_watch_stoppable(cmd->stoppable);
		if (rc == 0)
			rc = cmd->run(argc - first, argv + first, comm);
		if (rc < 0 || (rc > EXIT_USAGE && rc != GFSP_EXIT_PARTIAL))
			rc = 1;		/* a stray GFSP_E* code: failure */
		/* stopped by SIGINT or SIGTERM, what it made removed: the
		 * status a shell gives a process the signal ended (a run
		 * that was complete before it could stop keeps its 0) */
		if (rc != 0 && gfsp_watch_stopped() != 0)
			rc = 128 + gfsp_watch_stopped();
	} else if (rc < 0) {
		rc = 0;		/* --help, --version */
	}
	if (rc != 0 && rank == 0 && json_wanted(cmd) && !gfsp_json_printed())
		print_error_doc(cmd, nprocs, gfsp_now() - t0, rc,
				first > 0 ? argc - first : 0, argv + first);
	errno = 0;
	if (check_stdout() != 0)
		rc = rc == GFSP_EXIT_PARTIAL ? 1 : GFSP_MAX(rc, 1);

	if (cmd->uses_mpi) {
		/* every rank exits with the worst code of any rank */
		if (gfsp_allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, comm) ==
		    MPI_SUCCESS)
			rc = all;
		else
			rc = GFSP_MAX(rc, 1);
		MPI_Finalize();
	}
	if (rc == 0 && then != NULL)
		rc = then();
	return rc;
}
