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

static const char *const errtexts[GFSP_NERRCODES] = {
	[GFSP_OK]	= "success",
	[GFSP_EINVAL]	= "invalid argument",
	[GFSP_ENOENT]	= "no such file or directory",
	[GFSP_EEXIST]	= "file exists",
	[GFSP_EACCES]	= "permission denied",
	[GFSP_ENOSPC]	= "no space left on device",
	[GFSP_EIO]	= "input/output error",
	[GFSP_ENOMEM]	= "out of memory",
	[GFSP_ENOTSUP]	= "operation not supported",
	[GFSP_ECORRUPT]	= "corrupt metadata",
	[GFSP_EVERSION]	= "unsupported format version",
	[GFSP_ECHECKSUM]	= "checksum mismatch",
	[GFSP_ENOTSPLIT]	= "not a split file",
	[GFSP_EMPI]	= "MPI error",
	[GFSP_EPEER]	= "another rank failed",
	[GFSP_ENET]	= "network error",
	[GFSP_ECANCELED]	= "operation canceled",
	[GFSP_ESTALE]	= "the file changed since it was opened",
};

const char *
gfsp_strerror(int code)
{
	if (code < 0 || code >= GFSP_NERRCODES || errtexts[code] == NULL)
		return "unknown error";
	return errtexts[code];
}

/*
 * The message is formatted into a local buffer first so that a caller may
 * pass err->msg itself as an argument (wrapping a previous message).
 */
static int
error_vset(struct gfsp_error *err, int code, int sys, const char *suffix,
	   const char *fmt, va_list ap)
{
	char buf[GFSP_ERRMSG_MAX];
	int n;

	if (err == NULL || code == GFSP_OK || err->code != GFSP_OK)
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
gfsp_error_set(struct gfsp_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = error_vset(err, code, 0, NULL, fmt, ap);
	va_end(ap);
	return code;
}

int
gfsp_error_errno(struct gfsp_error *err, int errnum, const char *fmt, ...)
{
	char ebuf[256];
	const char *etext;
	va_list ap;
	int code = gfsp_errcode_from_errno(errnum);

	/* GNU strerror_r: thread-safe, returns the text (maybe not in ebuf) */
	etext = strerror_r(errnum, ebuf, sizeof(ebuf));
	va_start(ap, fmt);
	code = error_vset(err, code, errnum, etext, fmt, ap);
	va_end(ap);
	return code;
}

int
gfsp_errcode_from_errno(int errnum)
{
	switch (errnum) {
	case ENOENT:
	case ENOTDIR:
	case ENODATA:		/* no such extended attribute */
	case ELOOP:
		return GFSP_ENOENT;
	case EEXIST:
	case ENOTEMPTY:
		return GFSP_EEXIST;
	case EACCES:
	case EPERM:
	case EROFS:
	case ETXTBSY:
		return GFSP_EACCES;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return GFSP_ENOSPC;
	case ENOMEM:
		return GFSP_ENOMEM;
	case ENOTSUP:
#if EOPNOTSUPP != ENOTSUP
	case EOPNOTSUPP:
#endif
	case ENOSYS:
	case EXDEV:		/* rename across file systems */
		return GFSP_ENOTSUP;
	case EINVAL:
	case EISDIR:
	case ENAMETOOLONG:
	case EBADF:
	case ERANGE:
		return GFSP_EINVAL;
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
		return GFSP_ENET;
	case EINTR:
	case ECANCELED:
		return GFSP_ECANCELED;
	default:
		/* including 0: a failure without a cause is still a failure */
		return GFSP_EIO;
	}
}

int
gfsp_errno_of(const struct gfsp_error *err)
{
	static const int errnos[GFSP_NERRCODES] = {
		[GFSP_OK] = 0, [GFSP_EINVAL] = EINVAL, [GFSP_ENOENT] = ENOENT,
		[GFSP_EEXIST] = EEXIST, [GFSP_EACCES] = EACCES,
		[GFSP_ENOSPC] = ENOSPC, [GFSP_EIO] = EIO,
		[GFSP_ENOMEM] = ENOMEM, [GFSP_ENOTSUP] = ENOTSUP,
		[GFSP_ECORRUPT] = EIO, [GFSP_EVERSION] = EIO,
		[GFSP_ECHECKSUM] = EIO, [GFSP_ENOTSPLIT] = EIO,
		[GFSP_EMPI] = EIO, [GFSP_EPEER] = EIO,
		[GFSP_ENET] = EIO, [GFSP_ECANCELED] = EINTR,
		[GFSP_ESTALE] = ESTALE,
	};

	if (err->code <= 0 || err->code >= GFSP_NERRCODES)
		return err->code == 0 ? 0 : EIO;
	/* a POSIX errno kept with a code that lumps several together
	 * (ENOTEMPTY, ENOTDIR, EROFS) says more than the code's own */
	if (err->sys > 0 && err->sys < 4096 &&
	    gfsp_errcode_from_errno(err->sys) == err->code)
		return err->sys;
	return errnos[err->code];
}

void
gfsp_error_clear(struct gfsp_error *err)
{
	if (err == NULL)
		return;
	err->code = GFSP_OK;
	err->sys = 0;
	err->msg[0] = '\0';
}
