/*
 * onesided.c - choosing a one-sided transport by name, and the checks
 * every transport makes.  The transports themselves are onesided_mpi.c
 * ("mpi" and "shm"), onesided_tcp.c and onesided_verbs.c.
 */
#include <string.h>

#include "core.h"
#include "onesided.h"

/* "auto" tries these in order */
static const struct gfsp_os_ops *const auto_order[] = {
#ifdef HAVE_IBVERBS
	&gfsp_os_verbs,		/* an RDMA device on every rank */
#endif
	&gfsp_os_shm,		/* every rank on one node */
	&gfsp_os_tcp,		/* every node's name resolves to an address */
	&gfsp_os_mpi,		/* anywhere */
};

/*
 * "auto": the first transport that is usable here.  Every create is
 * collective and agreed, so a GFSP_ENOTSUP reaches every rank together
 * and all go on to the next as one.  That is decided once more here, by
 * an MPI_LAND over "this rank got GFSP_ENOTSUP", so that a rank can never
 * go into the next (collective) create while another returns: a failure
 * that reached some ranks as another code (GFSP_EPEER) is an error, not
 * a fallback.  The reasons the skipped ones gave are dropped: "auto" asks
 * for whatever works, and mpi does.
 */
static int
create_auto(MPI_Comm comm, size_t bytes, size_t zero,
	    const struct gfsp_os_ops **ops, struct gfsp_os **out,
	    struct gfsp_error *err)
{
	struct gfsp_error terr;
	size_t i, n = sizeof(auto_order) / sizeof(auto_order[0]);
	int rc = 0, notsup, all = 0;

	for (i = 0; i < n; i++) {
		gfsp_error_clear(&terr);
		rc = auto_order[i]->create(comm, bytes, zero, out, &terr);
		if (rc == 0) {
			*ops = auto_order[i];
			return 0;
		}
		notsup = rc == GFSP_ENOTSUP;
		if (i + 1 == n || MPI_Allreduce(&notsup, &all, 1, MPI_INT,
		    MPI_LAND, comm) != MPI_SUCCESS || !all)
			break;
	}
	if (err != NULL && err->code == GFSP_OK)
		*err = terr;
	return rc;
}

int
gfsp_os_create(MPI_Comm comm, const char *name, size_t bytes, size_t zero,
	       const struct gfsp_os_ops **ops, struct gfsp_os **out,
	       struct gfsp_error *err)
{
	const struct gfsp_os_ops *t;
	int rc;

	*ops = NULL;
	*out = NULL;
	if (name == NULL || strcmp(name, "auto") == 0) {
		return create_auto(comm, bytes, zero, ops, out, err);
	} else if (strcmp(name, "mpi") == 0) {
		t = &gfsp_os_mpi;
	} else if (strcmp(name, "shm") == 0) {
		t = &gfsp_os_shm;
	} else if (strcmp(name, "tcp") == 0) {
		t = &gfsp_os_tcp;
	} else if (strcmp(name, "verbs") == 0) {
#ifdef HAVE_IBVERBS
		t = &gfsp_os_verbs;
#else
		return gfsp_error_set(err, GFSP_ENOTSUP, "one-sided transport "
				     "'verbs': this build has no verbs "
				     "transport (configure --with-ibverbs)");
#endif
	} else {
		return gfsp_error_set(err, GFSP_EINVAL, "unknown one-sided "
				     "transport '%s' (known: auto, %s)", name,
				     gfsp_os_builtin());
	}
	rc = t->create(comm, bytes, zero, out, err);
	if (rc == 0)
		*ops = t;
	return rc;
}

const char *
gfsp_os_builtin(void)
{
#ifdef HAVE_IBVERBS
	return "mpi, shm, tcp, verbs";
#else
	return "mpi, shm, tcp";
#endif
}

int
gfsp_os_check(const char *transport, int nprocs, const uint64_t *size,
	      const char *op, const char *dir, int rank, uint64_t off,
	      uint64_t len, int word, struct gfsp_error *err)
{
	if (rank < 0 || rank >= nprocs)
		return gfsp_error_set(err, GFSP_EINVAL, "one-sided %s %s rank "
				     "%d (%s): no such rank (%d ranks)", op,
				     dir, rank, transport, nprocs);
	if (word && off % 8 != 0)
		return gfsp_error_set(err, GFSP_EINVAL, "one-sided %s %s rank "
				     "%d (%s): offset %llu is not 8-byte "
				     "aligned", op, dir, rank, transport,
				     (unsigned long long)off);
	if (off > size[rank] || len > size[rank] - off)
		return gfsp_error_set(err, GFSP_EINVAL, "one-sided %s %s rank "
				     "%d (%s): %llu bytes at offset %llu "
				     "overrun its %llu-byte region", op, dir,
				     rank, transport, (unsigned long long)len,
				     (unsigned long long)off,
				     (unsigned long long)size[rank]);
	return 0;
}

int
gfsp_os_put64_by_cas(const struct gfsp_os_ops *ops, struct gfsp_os *w,
		     int rank, uint64_t off, uint64_t val, struct gfsp_error *err)
{
	uint64_t expect = 0, old;
	int rc;

	for (;;) {
		rc = ops->cas64(w, rank, off, expect, val, &old, err);
		if (rc != 0 || old == expect)
			return rc;
		expect = old;
	}
}
