/*
 * file.c - which files the MPI-IO layer takes, opening and closing them,
 * and errors (mpiio.h).
 *
 * Selection, decided by rank 0 of the open's communicator and broadcast,
 * so every rank takes the same path even if their hints differ:
 *
 *   an existing split file, any amode    -> ours (read it, or replace it)
 *   MPI_Info "gfsplit_split" = "enable"  -> split-write
 *   a path matching $GFSPLIT_SPLIT_FILES -> split-write, unless the hint
 *                                           says "disable"
 *   anything else                        -> MPICH, untouched
 *
 * A write-open starts a new split file in a temporary sibling; the close
 * commits it in place of whatever was at the path (splitfile.h, commit
 * rule).  A failure on any rank aborts the commit on all of them, and the
 * old file stays.
 *
 * Opening a path again that every rank of the new communicator has open
 * for split-write makes an alias of the first handle (mpiio.h): one
 * writer, one commit, at the first handle's close.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <libgen.h>

#include "core.h"
#include "dst.h"
#include "layout_impl.h"
#include "mpiio.h"
#include "splitfile.h"
#include "store.h"
#include "view_impl.h"

#define HINT_KEY	"gfsplit_split"
#define VERIFY_KEY	"gfsplit_verify"	/* reading: check part checksums */
#define SHADOW_PATH	"/dev/null"

static struct sfile *files;	/* managed files, most recent first */
static int inited;
static const char *patterns;	/* $GFSPLIT_SPLIT_FILES */
static const char *hosts;	/* $GFSPLIT_GFARM_HOSTS */
static int verbose;

/* ------------------------------------------------------------ errors */

static int
world_rank(void)
{
	int r = 0, up = 0;

	MPI_Initialized(&up);
	if (up)
		MPI_Comm_rank(MPI_COMM_WORLD, &r);
	return r;
}

/* One line in one write, so that ranks' lines do not interleave. */
static void
say(const char *prefix, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	n = snprintf(line, sizeof(line), "gfsplit-mpiio: %s", prefix);
	if (n >= 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	fprintf(stderr, "%s\n", line);
}

void
sf_notice_once(int *done, const char *fmt, ...)
{
	va_list ap;

	if (done != NULL && *done)
		return;
	if (done != NULL)
		*done = 1;
	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

static int
mpi_class(int code)
{
	switch (code) {
	case GFSP_ENOENT:	return MPI_ERR_NO_SUCH_FILE;
	case GFSP_EEXIST:	return MPI_ERR_FILE_EXISTS;
	case GFSP_EACCES:	return MPI_ERR_ACCESS;
	case GFSP_ENOSPC:	return MPI_ERR_NO_SPACE;
	case GFSP_ENOMEM:	return MPI_ERR_NO_MEM;
	case GFSP_ENOTSUP:	return MPI_ERR_UNSUPPORTED_OPERATION;
	case GFSP_EINVAL:	return MPI_ERR_ARG;
	default:		return MPI_ERR_IO;
	}
}

/*
 * The class through the file's error handler, as MPICH would.  Before
 * there is a handle, MPI_FILE_NULL's handler applies; only the predefined
 * ones can be honoured there (a user function needs a handle).
 * MPI_ERRORS_ABORT is MPI-4.0's (an MPI-3.1 library has only the other two).
 */
static int
through_handler(struct sfile *f, int cls)
{
	MPI_Errhandler eh = MPI_ERRORS_RETURN;

	if (f != NULL) {
		PMPI_File_call_errhandler(f->fh, cls);
		return cls;
	}
	PMPI_File_get_errhandler(MPI_FILE_NULL, &eh);
#if MPI_VERSION >= 4
	if (eh == MPI_ERRORS_ABORT)	/* the same here: no communicator */
		eh = MPI_ERRORS_ARE_FATAL;
#endif
	if (eh == MPI_ERRORS_ARE_FATAL)
		PMPI_Abort(MPI_COMM_WORLD, cls);
	return cls;
}

int
sf_fail(struct sfile *f, const struct gfsp_error *err)
{
	/* another rank's failure was reported there */
	if (err->code != GFSP_EPEER)
		fprintf(stderr, "gfsplit-mpiio: rank %d: %s\n", world_rank(),
		    err->msg);
	return through_handler(f, mpi_class(err->code));
}

int
sf_fail_code(struct sfile *f, int cls, const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "rank %d: ", world_rank());
	va_start(ap, fmt);
	say(prefix, fmt, ap);
	va_end(ap);
	return through_handler(f, cls);
}

/* --------------------------------------------------------- selection */

static void
init_once(void)
{
	const char *v;

	if (inited)
		return;
	inited = 1;
	patterns = getenv("GFSPLIT_SPLIT_FILES");
	hosts = getenv("GFSPLIT_GFARM_HOSTS");
	v = getenv("GFSPLIT_VERBOSE");
	verbose = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
	gfsp_fault_init(world_rank());
	if (verbose && world_rank() == 0)
		sf_notice_once(NULL, "split-write for paths matching "
		    "GFSPLIT_SPLIT_FILES='%s' and files opened with the "
		    "MPI_Info hint %s=enable (%s=disable opts out); existing "
		    "split files are read as one file",
		    patterns ? patterns : "", HINT_KEY, HINT_KEY);
}

/* -1 hint `key` says disable, 1 enable, 0 no hint */
static int
hint_of(MPI_Info info, const char *key)
{
	char val[32];
	int flag = 0;

	if (info == MPI_INFO_NULL)
		return 0;
	if (MPI_Info_get(info, key, sizeof(val) - 1, val, &flag) !=
	    MPI_SUCCESS || !flag)
		return 0;
	if (strcmp(val, "enable") == 0 || strcmp(val, "true") == 0)
		return 1;
	if (strcmp(val, "disable") == 0 || strcmp(val, "false") == 0)
		return -1;
	return 0;
}

enum { K_ABSENT, K_PLAIN, K_SPLIT };

static int
kind_of(const char *path)
{
	struct gfsp_stat st;
	struct gfsp_error e;
	char *marker;
	int kind = K_PLAIN;

	gfsp_error_clear(&e);
	if (gfsp_stat(path, &st, &e) != 0)
		return e.code == GFSP_ENOENT ? K_ABSENT : K_PLAIN;
	if (!S_ISDIR(st.mode))
		return K_PLAIN;
	marker = gfsp_marker_path(path);
	if (marker != NULL && gfsp_stat(marker, &st, &e) == 0)
		kind = K_SPLIT;
	free(marker);
	return kind;
}

/* MPI's rules for the access mode (MPI 4.1 section 14.2.1) */
static int
amode_ok(int amode)
{
	int acc = amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);

	return (acc == MPI_MODE_RDONLY || acc == MPI_MODE_WRONLY ||
	    acc == MPI_MODE_RDWR) && !(acc == MPI_MODE_RDONLY && (amode &
	    (MPI_MODE_CREATE | MPI_MODE_EXCL))) &&
	    !((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL));
}

/*
 * Rank 0's verdict on the file at path, which the program opens as name
 * (a link to it: the selection is by the name the program gave, and
 * MPI_MODE_EXCL fails on the link, as O_EXCL does): 0 (MPICH's), SF_READ,
 * SF_WRITE, or the negated MPI error class the open fails with.  OUT
 * *kind: what is at path now.
 */
static int
decide(const char *name, const char *path, int amode, MPI_Info info,
       int *kind)
{
	int linked = strcmp(name, path) != 0;
	int acc = amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
	int writing = acc != MPI_MODE_RDONLY;
	int h = hint_of(info, HINT_KEY), want;

	want = h > 0 || (h == 0 && gfsp_path_selected(patterns, name));
	*kind = kind_of(path);
	if (*kind != K_SPLIT && !(want && writing))
		return 0;
	if (!amode_ok(amode))
		return -MPI_ERR_AMODE;
	if (*kind == K_SPLIT && !writing)
		return SF_READ;
	if ((amode & MPI_MODE_EXCL) && (*kind != K_ABSENT || linked))
		return -MPI_ERR_FILE_EXISTS;
	if (!(amode & MPI_MODE_CREATE) && *kind == K_ABSENT)
		return -MPI_ERR_NO_SUCH_FILE;
	return SF_WRITE;
}

/* ------------------------------------------------------ open, close */

struct sfile *
sf_find(MPI_File fh)
{
	struct sfile *f;

	if (fh == MPI_FILE_NULL)
		return NULL;
	for (f = files; f != NULL; f = f->next)
		if (f->fh == fh)
			return f;
	return NULL;
}

/*
 * Where path is: its directory's device and inode, and its last name
 * (a Gfarm URL: the URL).  Two spellings of one path give the same key
 * where the directory can be looked up; 0 with *name set, else -1.
 */
static int
path_key(const char *path, uint64_t *dev, uint64_t *ino, char **name)
{
	char *a = strdup(path), *b = strdup(path);
	struct stat st;
	int rc = -1;

	*dev = *ino = 0;
	*name = NULL;
	if (a == NULL || b == NULL)
		goto out;
	if (strncmp(path, "gfarm:", 6) == 0) {
		*name = b;
		b = NULL;
		rc = 0;
		goto out;
	}
	if (stat(dirname(a), &st) != 0)
		goto out;
	*dev = st.st_dev;
	*ino = st.st_ino;
	*name = strdup(basename(b));
	rc = *name != NULL ? 0 : -1;
out:
	free(a);
	free(b);
	return rc;
}

/* This process's open split-write of path, the first handle. */
static struct sfile *
find_owner(const char *path)
{
	struct sfile *f, *found = NULL;
	uint64_t dev, ino;
	char *name;

	for (f = files; f != NULL; f = f->next)
		if (f->owner == NULL && f->mode == SF_WRITE && !f->orphan)
			break;
	if (f == NULL || path_key(path, &dev, &ino, &name) != 0)
		return NULL;
	for (f = files; f != NULL && found == NULL; f = f->next)
		if (f->owner == NULL && f->mode == SF_WRITE && !f->orphan &&
		    f->key_name != NULL && f->key_dev == dev &&
		    f->key_ino == ino && strcmp(f->key_name, name) == 0)
			found = f;
	free(name);
	return found;
}

static void
sf_free(struct sfile *f)
{
	struct sfile **pp;

	for (pp = &files; *pp != NULL; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	sf_view_release(f);
	sf_view_types_free(f);
	sf_shared_close(f);	/* collective, as the callers are */
	if (f->comm != MPI_COMM_NULL)
		MPI_Comm_free(&f->comm);
	if (f->group != MPI_GROUP_NULL)
		MPI_Group_free(&f->group);
	free(f->key_name);
	free(f->path);
	free(f);
}

/*
 * Collective: the writer or the reader behind f.  A file that exists is
 * the writer's base: its bytes stay where nothing is written (MPI never
 * drops a file's data on open).
 */
static int
open_data(struct sfile *f, int kind, MPI_Info info, struct gfsp_error *err)
{
	struct gfsp_split_opts o;
	char host[GFSP_NAME_MAX];
	struct gfsp_error e;
	int rc, v;

	if (f->mode == SF_READ) {
		/* rank 0 reads the metadata for every rank */
		rc = gfsp_layout_open_comm(f->comm, f->path, &f->layout, err);
		if (rc)
			return rc;
		f->size = gfsp_layout_size(f->layout);
		/* the hint overrides GFSPLIT_VERIFY, which the open read */
		if ((v = hint_of(info, VERIFY_KEY)) != 0)
			gfsp_layout_set_verify(f->layout, v > 0);
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.force = 1;		/* replaces the old file, at the commit */
	o.layout = "mpiio";
	o.comm_private = 1;	/* f->comm: ours, in step on every rank */
	o.guard = 1;		/* another process's handle: no silent loss */
	rc = gfsp_agree(f->comm, gfsp_host_for_rank(hosts, f->rank, host,
	    sizeof(host), err), err);
	if (rc)
		return rc;
	o.host = host[0] ? host : NULL;
	rc = gfsp_split_create(f->comm, f->path, NULL, &o, &f->w, NULL, err);
	if (rc || kind == K_ABSENT)
		return rc;
	rc = gfsp_agree(f->comm, gfsp_split_set_base(f->w, f->path, &f->size,
	    err), err);
	if (rc) {
		gfsp_error_clear(&e);	/* removes what create made */
		gfsp_split_finish(f->w, rc, 0, &e);
		f->w = NULL;
	}
	f->had_base = 1;
	return rc;
}

/*
 * Collective, after the verdict: the path the file is read or written at.
 * MPICH's open(2) follows a final symbolic link, and so does ours, so
 * that the split file lands where the link points and the link stays; but
 * only links of root's or this user's (gfsp_dst_follow): one another user
 * planted is left for the writer to refuse, naming it.  Rank 0 found it
 * (*target, when it differs from name: followed); the others get it.
 */
static int
share_target(MPI_Comm comm, int rank, int followed, const char *name,
	     char **target, struct gfsp_error *err)
{
	if (!followed) {
		free(*target);
		*target = strdup(name);
		return *target ? 0 : gfsp_error_set(err, GFSP_ENOMEM,
		    "out of memory");
	}
	if (rank != 0) {
		free(*target);
		*target = NULL;
	}
	return gfsp_bcast_string(comm, target, err);
}

/* The open of name refused for all ranks with MPI error class code
 * (said by rank 0), through the handler. */
static int
refuse(const char *name, int rank, int code)
{
	if (rank == 0)
		sf_fail_code(NULL, code, "cannot open '%s': %s",
		    name, code == MPI_ERR_FILE_EXISTS ?
		    "file exists (MPI_MODE_EXCL)" :
		    code == MPI_ERR_NO_SUCH_FILE ?
		    "no such file (no MPI_MODE_CREATE)" :
		    code == MPI_ERR_FILE_IN_USE ?
		    "some of the ranks have it open for split-write "
		    "and others do not: a second handle needs every "
		    "one of its ranks to have the first" :
		    "invalid access mode");
	return through_handler(NULL, code);
}

/* A handle of ours over MPICH's shadow handle, still to be set up (NULL:
 * out of memory; f->path NULL too). */
static struct sfile *
new_sfile(MPI_File shadow, struct sfile *owner, int amode, int mode,
	  const char *path)
{
	struct sfile *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->fh = shadow;
	f->comm = MPI_COMM_NULL;
	f->group = MPI_GROUP_NULL;
	f->owner = owner;
	f->shwin = MPI_WIN_NULL;
	f->etype = f->filetype = MPI_DATATYPE_NULL;
	f->amode = amode;
	f->mode = mode;
	f->path = strdup(path);
	f->etype_size = 1;
	f->dense = 1;
	gfsp_view_empty(&f->view, 0, 1);
	return f;
}

/* Collective: f (over comm, the data's kind from rank 0) set up: its
 * communicator, its shared state, its data (unless it is another handle
 * of a split-write) and its key; every rank's verdict. */
static int
set_up(struct sfile *f, MPI_Comm comm, int kind, MPI_Info info,
       const char *name, struct gfsp_error *err)
{
	const char *path = f->path;
	struct sfile *owner = f->owner;
	int rc;

	rc = gfsp_comm_dup(comm, &f->comm) == MPI_SUCCESS ? 0 :
	    gfsp_error_set(err, GFSP_EMPI, "cannot open '%s': cannot "
	    "duplicate the communicator", path);
	rc = gfsp_agree(comm, rc, err);
	if (rc == 0) {
		/* ours alone: the library checks what its calls return */
		MPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
		MPI_Comm_rank(f->comm, &f->rank);
		MPI_Comm_size(f->comm, &f->nprocs);
		MPI_Comm_group(comm, &f->group);
		rc = sf_shared_open(f, err);
	}
	if (rc == 0 && owner == NULL)
		rc = open_data(f, kind, info, err);
	/* a second open finds it by where it is */
	if (rc == 0 && owner == NULL && f->mode == SF_WRITE)
		rc = gfsp_agree(f->comm, path_key(name, &f->key_dev,
		    &f->key_ino, &f->key_name) == 0 ? 0 : gfsp_error_set(err,
		    GFSP_ENOMEM, "cannot open '%s': out of memory", path),
		    err);
	return rc;
}

int
sf_open(MPI_Comm comm, const char *name, int amode, MPI_Info info,
	MPI_File *fh)
{
	struct gfsp_error err;
	struct sfile *f, *owner;
	/* rank 0's verdict, kind and whether name is a link; whether each
	 * rank has it open */
	int v[5] = { INT_MIN, INT_MIN, INT_MIN, 0, 0 }, all[5], verdict, rank,
	    rc, shadow_rc;
	MPI_File shadow = MPI_FILE_NULL;
	char *path = NULL;

	init_once();
	MPI_Comm_rank(comm, &rank);
	gfsp_error_clear(&err);
	owner = find_owner(name);
	v[3] = owner != NULL;
	v[4] = -v[3];
	if (rank == 0) {
		/* (a link that cannot be read: MPICH's open says why) */
		if (gfsp_dst_follow(name, &path, NULL) != 0)
			path = NULL;
		v[0] = decide(name, path ? path : name, amode, info, &v[1]);
		v[2] = path != NULL && strcmp(path, name) != 0;
	}
	gfsp_allreduce(v, all, 5, MPI_INT, MPI_MAX, comm);
	verdict = all[0];
	if (all[3] == 1 && all[4] == -1)	/* every rank has it open */
		verdict = !amode_ok(amode) ? -MPI_ERR_AMODE :
		    (amode & MPI_MODE_EXCL) ? -MPI_ERR_FILE_EXISTS : SF_WRITE;
	else if (all[3] == 1)
		verdict = -MPI_ERR_FILE_IN_USE;
	else
		owner = NULL;
	if (verdict == 0) {
		free(path);
		return PMPI_File_open(comm, name, amode, info, fh);
	}
	if (verdict < 0) {
		free(path);
		return refuse(name, rank, -verdict);
	}
	if (share_target(comm, rank, all[2], name, &path, &err) != 0) {
		free(path);
		return sf_fail(NULL, &err);
	}

	/*
	 * ours: MPICH gets the shadow, we get the data.  The shadow is
	 * opened over comm with the application's hints, so that
	 * MPI_File_get_info answers what MPICH makes of them for this
	 * communicator: cb_nodes and romio_aggregator_list depend on its
	 * ranks and nodes (mpiio.h).
	 */
	gfsp_error_clear(&err);
	rc = 0;
	shadow_rc = PMPI_File_open(comm, SHADOW_PATH, MPI_MODE_RDWR, info,
	    &shadow);
	f = new_sfile(shadow, owner, amode, verdict, path);
	if (shadow_rc != MPI_SUCCESS)
		rc = gfsp_error_set(&err, GFSP_EMPI, "cannot open '%s': MPICH "
		    "cannot open %s for its handle", path, SHADOW_PATH);
	else if (f == NULL || f->path == NULL)
		rc = gfsp_error_set(&err, GFSP_ENOMEM, "cannot open '%s': out "
		    "of memory", path);
	rc = gfsp_agree(comm, rc, &err);
	if (rc == 0)
		rc = set_up(f, comm, all[1], info, name, &err);
	if (rc) {
		if (f != NULL) {
			f->fh = MPI_FILE_NULL;
			sf_free(f);
		}
		if (shadow != MPI_FILE_NULL)
			PMPI_File_close(&shadow);
		free(path);
		return sf_fail(NULL, &err);
	}
	free(path);
	f->next = files;
	files = f;
	if (owner != NULL)
		owner->aliases++;
	if (verbose && rank == 0)
		sf_notice_once(NULL, "'%s': %s by %d ranks", f->path,
		    owner != NULL ? "another handle of its split-write" :
		    f->mode == SF_WRITE ? "split-write" :
		    "reading the split file", f->nprocs);
	*fh = shadow;
	return MPI_SUCCESS;
}

/*
 * f closes before its aliases (a program that closes the collective
 * handle first): they can no longer reach the writer, and say so at
 * their next read or write.
 */
static void
orphan_aliases(struct sfile *f)
{
	struct sfile *a;

	for (a = files; a != NULL; a = a->next)
		if (a->owner == f) {
			a->owner = NULL;
			a->orphan = 1;
		}
	f->aliases = 0;
}

int
sf_close(struct sfile *f, MPI_File *fh)
{
	struct gfsp_error err;
	int rc = 0, del = f->amode & MPI_MODE_DELETE_ON_CLOSE;

	gfsp_error_clear(&err);
	if (f->owner != NULL || f->orphan) {
		/* an alias: its bytes are the owner's, committed with them */
		if (f->owner != NULL)
			f->owner->aliases--;
		rc = gfsp_agree(f->comm, 0, &err);
	} else if (f->mode == SF_WRITE) {
		if (f->aliases > 0)
			orphan_aliases(f);
		/* delete-on-close: never commit, remove everything */
		rc = gfsp_split_finish(f->w, f->failed ? gfsp_error_set(&err,
		    GFSP_EIO, "'%s': not committed: a write failed on this "
		    "rank", f->path) : del ? GFSP_ECANCELED : 0, f->size, &err);
		f->w = NULL;
		if (del && rc == GFSP_ECANCELED)
			rc = 0;
		/* the file that was there goes too */
		if (del && rc == 0 && f->had_base && f->rank == 0)
			rc = gfsp_dst_remove_tree(f->path, &err);
		if (del)
			rc = gfsp_agree(f->comm, rc, &err);
	} else {
		gfsp_layout_close(f->layout);
		f->layout = NULL;
		gfsp_quiet_barrier(f->comm);
		if (del && f->rank == 0)
			rc = gfsp_dst_remove_tree(f->path, &err);
		rc = gfsp_agree(f->comm, rc, &err);
	}
	if (rc) {
		/* the handle goes away either way, as MPICH's does */
		rc = sf_fail(f, &err);
	}
	sf_free(f);
	PMPI_File_close(fh);
	return rc;
}

/* Not collective (MPI_File_delete is not): a split file is removed here,
 * any other file is left to MPICH (*handled = 0). */
int
sf_delete(const char *path, MPI_Info info, int *handled)
{
	struct gfsp_error err;

	init_once();
	*handled = 0;
	if (kind_of(path) != K_SPLIT) {
		if (strncmp(path, "gfarm:", 6) != 0)
			return MPI_SUCCESS;
		/* MPICH cannot reach Gfarm: a plain Gfarm file is ours */
		*handled = 1;
		gfsp_error_clear(&err);
		if (gfsp_unlink(path, &err) != 0)
			return sf_fail(NULL, &err);
		return MPI_SUCCESS;
	}
	*handled = 1;
	gfsp_error_clear(&err);
	if (gfsp_dst_remove_tree(path, &err) != 0)
		return sf_fail(NULL, &err);
	return MPI_SUCCESS;
}

int
sf_barrier(MPI_Comm comm)
{
	struct gfsp_error err;
	MPI_Group g = MPI_GROUP_NULL;
	struct sfile *f;
	int inter = 1, same, rc = MPI_SUCCESS;

	if (files == NULL || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
	    inter || MPI_Comm_group(comm, &g) != MPI_SUCCESS)
		return MPI_SUCCESS;	/* MPICH's barrier says what is wrong */
	for (f = files; f != NULL && rc == MPI_SUCCESS; f = f->next) {
		if (f->owner != NULL || f->mode != SF_WRITE ||
		    f->nprocs == 1 || f->orphan ||
		    MPI_Group_compare(f->group, g, &same) != MPI_SUCCESS ||
		    same != MPI_IDENT)
			continue;
		gfsp_error_clear(&err);
		if (SF_WORK(sf_catch_up(f, &err)) != 0)
			rc = sf_fail(f, &err);
		sf_next_epoch(f);
	}
	MPI_Group_free(&g);
	return rc;
}
