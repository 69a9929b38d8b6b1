/*
 * size.c - sizes with binary suffixes, their display, and the clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

/*
 * Grammar (suffixes are always binary multiples, whatever their spelling):
 *
 *   size   := digits [ "." digits ] [ unit ]
 *   unit   := ( "b" | "B" )
 *           | letter [ "i" ] [ "B" ]        letter in k m g t p e, any case
 *
 * A fraction needs a unit of at least KiB; it is truncated to whole bytes
 * ("1.5K" = 1536, "0.1K" = 102).  Arithmetic is done in 128 bits so an
 * overflow past 2^64-1 is detected rather than wrapped.
 */
int
gfsp_parse_size(const char *s, uint64_t *out, struct gfsp_error *err)
{
	static const char units[] = "kmgtpe";
	unsigned __int128 ip = 0, frac = 0, fscale = 1, mult = 1, v;
	const char *p = s, *u;
	int ndig = 0, nfrac = 0;

	if (s == NULL || *s == '\0')
		return gfsp_error_set(err, GFSP_EINVAL, "invalid size '': empty");
	for (; *p >= '0' && *p <= '9'; p++, ndig++) {
		ip = ip * 10 + (unsigned)(*p - '0');
		if (ip > UINT64_MAX)
			goto too_large;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, nfrac++) {
			/* digits past 10^-19 cannot change a whole byte
			 * count below 2^64 */
			if (nfrac < 19) {
				frac = frac * 10 + (unsigned)(*p - '0');
				fscale *= 10;
			}
		}
		if (nfrac == 0)
			goto invalid;
	}
	if (ndig == 0)
		goto invalid;

	if (*p != '\0' && (u = strchr(units, *p | 0x20)) != NULL) {
		mult = (unsigned __int128)1 << (10 * (u - units + 1));
		p++;
		if (*p == 'i')
			p++;
		if (*p == 'B' || *p == 'b')
			p++;
	} else if (*p == 'B' || *p == 'b') {
		p++;
	}
	if (*p != '\0')
		goto invalid;
	if (nfrac > 0 && mult == 1)
		return gfsp_error_set(err, GFSP_EINVAL,
				     "invalid size '%s': fraction of a byte", s);

	v = ip * mult + frac * mult / fscale;
	if (v > UINT64_MAX)
		goto too_large;
	*out = (uint64_t)v;
	return 0;
too_large:
	return gfsp_error_set(err, GFSP_EINVAL, "invalid size '%s': too large", s);
invalid:
	return gfsp_error_set(err, GFSP_EINVAL,
			     "invalid size '%s' (expected a number with an "
			     "optional suffix K, M, G, T, P or E)", s);
}

/* "512 B", "1.50 GiB", "512.0 MiB": three or four significant digits */
const char *
gfsp_format_size(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = {
		"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"
	};
	double v;
	size_t i;

	if (n < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)n);
		return buf;
	}
	v = (double)n / 1024;
	for (i = 0; i + 1 < GFSP_ARRAY_SIZE(units) && v >= 1023.95; i++)
		v /= 1024;
	snprintf(buf, len, v < 99.995 ? "%.2f %s" : "%.1f %s", v, units[i]);
	return buf;
}

double
gfsp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * A comma-separated list of sizes ("1K,128K,1M"), sorted and without
 * duplicates; each at least 1 byte.  OUT *v malloc'ed.
 */
int
gfsp_parse_size_list(const char *s, uint64_t **v, size_t *n,
		    struct gfsp_error *err)
{
	char *copy, *tok, *save = NULL;
	uint64_t x, *a = NULL;
	size_t i, k = 0, cap = 0;
	int rc = 0;

	*v = NULL;
	*n = 0;
	copy = strdup(s != NULL ? s : "");
	if (copy == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",", &save); rc == 0 && tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		rc = gfsp_parse_size(tok, &x, err);
		if (rc == 0 && x == 0)
			rc = gfsp_error_set(err, GFSP_EINVAL, "invalid size "
					   "'%s': must be at least 1 byte", tok);
		if (rc == 0 && gfsp_grow(&a, &cap, k + 1, sizeof(*a)) != 0)
			rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		if (rc != 0)
			break;
		/* insertion keeps it sorted; equal ones are dropped */
		for (i = k; i > 0 && a[i - 1] > x; i--)
			;
		if (i > 0 && a[i - 1] == x)
			continue;
		memmove(&a[i + 1], &a[i], (k - i) * sizeof(*a));
		a[i] = x;
		k++;
	}
	if (rc == 0 && k == 0)
		rc = gfsp_error_set(err, GFSP_EINVAL, "invalid list '%s': "
				   "empty", s != NULL ? s : "");
	free(copy);
	if (rc != 0) {
		free(a);
		return rc;
	}
	*v = a;
	*n = k;
	return 0;
}
