/*
 * onesided.c - choosing a one-sided transport by name.  The transports
 * themselves are onesided_mpi.c and onesided_verbs.c.
 */
#include <string.h>

#include "core.h"
#include "onesided.h"

#ifdef HAVE_IBVERBS
/*
 * "auto": verbs, and mpi where verbs is not usable.  Verbs' create is
 * collective and agreed, so its GFSP_ENOTSUP reaches every rank together
 * and all fall back as one.  The fallback is decided once more here, by
 * an MPI_LAND over "this rank got GFSP_ENOTSUP", so that a rank can never
 * go into mpi's (collective) create while another returns: a transport
 * whose failure reached some ranks as another code (GFSP_EPEER) is an
 * error, not a fallback.  The reason verbs gave is dropped: "auto" asks
 * for whatever works, and mpi does.
 */
static int
create_auto(MPI_Comm comm, size_t bytes, const struct gfsp_os_ops **ops,
	    struct gfsp_os **out, struct gfsp_error *err)
{
	struct gfsp_error verr;
	int rc, notsup, all = 0;

	gfsp_error_clear(&verr);
	rc = gfsp_os_verbs.create(comm, bytes, out, &verr);
	if (rc == 0) {
		*ops = &gfsp_os_verbs;
		return 0;
	}
	notsup = rc == GFSP_ENOTSUP;
	if (MPI_Allreduce(&notsup, &all, 1, MPI_INT, MPI_LAND, comm) !=
	    MPI_SUCCESS || !all) {
		if (err != NULL && err->code == GFSP_OK)
			*err = verr;
		return rc;
	}
	rc = gfsp_os_mpi.create(comm, bytes, out, err);
	if (rc == 0)
		*ops = &gfsp_os_mpi;
	return rc;
}
#endif

int
gfsp_os_create(MPI_Comm comm, const char *name, size_t bytes,
	       const struct gfsp_os_ops **ops, struct gfsp_os **out,
	       struct gfsp_error *err)
{
	const struct gfsp_os_ops *t;
	int rc;

	*ops = NULL;
	*out = NULL;
	if (name == NULL || strcmp(name, "auto") == 0) {
#ifdef HAVE_IBVERBS
		return create_auto(comm, bytes, ops, out, err);
#else
		t = &gfsp_os_mpi;
#endif
	} else if (strcmp(name, "mpi") == 0) {
		t = &gfsp_os_mpi;
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
	rc = t->create(comm, bytes, out, err);
	if (rc == 0)
		*ops = t;
	return rc;
}

const char *
gfsp_os_builtin(void)
{
#ifdef HAVE_IBVERBS
	return "mpi, verbs";
#else
	return "mpi";
#endif
}
