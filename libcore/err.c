/*
 * err.c - the library's one error type: code texts, first-error-wins
 * setters, and the errno translation used at the POSIX boundary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

static const char *const errtexts[GFS_NERRCODES] = {
	[GFS_OK]	= "success",
	[GFS_EINVAL]	= "invalid argument",
	[GFS_ENOENT]	= "no such file or directory",
	[GFS_EEXIST]	= "file exists",
	[GFS_EACCES]	= "permission denied",
	[GFS_ENOSPC]	= "no space left on device",
	[GFS_EIO]	= "input/output error",
	[GFS_ENOMEM]	= "out of memory",
	[GFS_ENOTSUP]	= "operation not supported",
	[GFS_ECORRUPT]	= "corrupt metadata",
	[GFS_EVERSION]	= "unsupported format version",
	[GFS_ECHECKSUM]	= "checksum mismatch",
	[GFS_ENOTSPLIT]	= "not a split file",
	[GFS_EMPI]	= "MPI error",
	[GFS_EPEER]	= "another rank failed",
	[GFS_ENET]	= "network error",
	[GFS_ECANCELED]	= "operation canceled",
};

const char *
gfs_strerror(int code)
{
	if (code < 0 || code >= GFS_NERRCODES || errtexts[code] == NULL)
		return "unknown error";
	return errtexts[code];
}

/*
 * The message is formatted into a local buffer first so that a caller may
 * pass err->msg itself as an argument (wrapping a previous message).
 */
static int
error_vset(struct gfs_error *err, int code, int sys, const char *suffix,
	   const char *fmt, va_list ap)
{
	char buf[GFS_ERRMSG_MAX];
	int n;

	if (err == NULL || code == GFS_OK || err->code != GFS_OK)
		return code;
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		buf[0] = '\0';
	if (suffix != NULL) {
		size_t used = strlen(buf);

		snprintf(buf + used, sizeof(buf) - used, ": %s", suffix);
	}
	err->code = code;
	err->sys = sys;
	memcpy(err->msg, buf, sizeof(buf));
	return code;
}

int
gfs_error_set(struct gfs_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = error_vset(err, code, 0, NULL, fmt, ap);
	va_end(ap);
	return code;
}

int
gfs_error_errno(struct gfs_error *err, int errnum, const char *fmt, ...)
{
	char ebuf[256];
	const char *etext;
	va_list ap;
	int code = gfs_errcode_from_errno(errnum);

	/* GNU strerror_r: thread-safe, returns the text (maybe not in ebuf) */
	etext = strerror_r(errnum, ebuf, sizeof(ebuf));
	va_start(ap, fmt);
	code = error_vset(err, code, errnum, etext, fmt, ap);
	va_end(ap);
	return code;
}

int
gfs_errcode_from_errno(int errnum)
{
	switch (errnum) {
	case ENOENT:
	case ENOTDIR:
	case ENODATA:		/* no such extended attribute */
	case ELOOP:
		return GFS_ENOENT;
	case EEXIST:
	case ENOTEMPTY:
		return GFS_EEXIST;
	case EACCES:
	case EPERM:
	case EROFS:
	case ETXTBSY:
		return GFS_EACCES;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return GFS_ENOSPC;
	case ENOMEM:
		return GFS_ENOMEM;
	case ENOTSUP:
#if EOPNOTSUPP != ENOTSUP
	case EOPNOTSUPP:
#endif
	case ENOSYS:
	case EXDEV:		/* rename across file systems */
		return GFS_ENOTSUP;
	case EINVAL:
	case EISDIR:
	case ENAMETOOLONG:
	case EBADF:
	case ERANGE:
		return GFS_EINVAL;
	case ECONNREFUSED:
	case ECONNRESET:
	case ECONNABORTED:
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case EHOSTDOWN:
	case ENETUNREACH:
	case ENETDOWN:
	case ENETRESET:
	case ENOTCONN:
	case EPIPE:
		return GFS_ENET;
	case EINTR:
	case ECANCELED:
		return GFS_ECANCELED;
	default:
		/* including 0: a failure without a cause is still a failure */
		return GFS_EIO;
	}
}

void
gfs_error_clear(struct gfs_error *err)
{
	if (err == NULL)
		return;
	err->code = GFS_OK;
	err->sys = 0;
	err->msg[0] = '\0';
}
