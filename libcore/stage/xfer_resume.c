/*
 * xfer_resume.c - picking up after an earlier transfer (stage.h): the
 * temporary file a resumed run writes on, the chunks the journal says
 * are already in it, the files already in place (gfsp_xfer_present), and
 * the temporary files a killed run left that no record names
 * (gfsp_xfer_sweep).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core.h"
#include "stage.h"
#include "xfer_impl.h"
#include "zfile.h"

/*
 * The temporary file of entry `file` (malloc'd): the one the latest
 * chunk record of the journal names, so that a resumed run writes on
 * where the last one stopped, if it is still surely ours (a regular file
 * of this user's with one name: someone who can write the directory may
 * have put a link or a file of theirs in its place); otherwise a new name
 * with this transfer's nonce (stage.h).  Every rank of a node that
 * writes pieces of the file finds the same: the records it loaded, or
 * the nonce they share.
 */
char *
gfsp_xfer_tmp_path(const struct gfsp_xfer *x, uint32_t file)
{
	const struct gfsp_sfile *f = &x->fl->v[file];
	char *d = gfsp_xfer_dst_path(x, file), *t, *fresh;
	const char *rt, *best = NULL;
	struct gfsp_file *probe;
	int64_t bt = INT64_MIN;
	size_t n = 0, first = 0, i, dirlen;

	fresh = d ? gfsp_stage_tmp_name(d, f, x->o.nonce) : NULL;
	if (fresh != NULL && x->st != NULL)
		n = gfsp_state_chunks(x->st, f->rel, &first);
	for (i = first; i < first + n; i++) {
		const struct gfsp_chunkrec *c = gfsp_state_chunk(x->st, i, &rt,
								NULL);

		if (c->t >= bt) {
			bt = c->t;
			best = rt;
		}
	}
	/* only a name of this file's, in its directory, ".NAME.TAG.KEY." */
	dirlen = fresh ? (size_t)(strrchr(fresh, '/') - fresh) + 1 : 0;
	if (best != NULL && strncmp(best, fresh, dirlen) == 0 &&
	    strncmp(best + dirlen, fresh + dirlen,
		    strlen(fresh + dirlen) - 16) == 0 &&
	    strlen(best) == strlen(fresh) && strchr(best + dirlen, '/') == NULL &&
	    gfsp_open(best, GFSP_O_RDONLY | GFSP_O_PRIVATE, 0, &probe,
		      NULL) == 0) {
		gfsp_close(probe, NULL);
		t = strdup(best);
		free(fresh);
		fresh = t;
	}
	free(d);
	return fresh;
}

/*
 * Is the chunk at raw offset off already in the temporary file, as the
 * journal says?  A record of this version of the source is checked
 * against the temporary file's bytes (with o.checksum); a record of an
 * earlier version (a file that was still being written) against the
 * source's bytes now, which are read for that: only the write is saved.
 * Then fill h for a K_RESUMED chunk.  out: room for the raw chunk.  The
 * first chunk that is not there ends resuming for the piece.
 */
int
gfsp_xfer_rd_resumed(struct gfsp_xfer *x, const struct gfsp_piece *p,
		     uint64_t off, uint64_t len, struct xhdr *h,
		     unsigned char *out)
{
	const struct gfsp_chunkrec *r = NULL, *c;
	struct gfsp_error e = { 0 };
	struct gfsp_zentry ze;
	const char *tmp = NULL, *t;
	uint64_t seg[SEG_MAX], nseg, key = 0, k;
	size_t got;

	/* the latest usable record at off */
	for (; x->rd.ri < x->rd.rn; x->rd.ri++) {
		c = gfsp_state_chunk(x->st, x->rd.rfirst + x->rd.ri, &t, &k);
		if (c->off > off)
			break;
		if (c->off == off && c->t > x->rd.after) {
			r = c;
			tmp = t;
			key = k;
		}
	}
	/* an earlier version's chunk is not read back: its temporary file
	 * must hold it (Gfarm's size of a file whose writer failed may lag,
	 * which only costs the resume of such chunks) */
	if (r == NULL || r->len != len || r->nseg > SEG_MAX ||
	    r->zlen > x->scap || (key != x->rd.key &&
	    (r->zlen ? r->zoff + r->zlen : r->off + r->len) > x->rd.tmpsize))
		goto no;
	/* compressed frames follow each other from the header on */
	if (r->zlen != 0 && (x->rd.zdst == 0 ||
	    r->zoff != (x->rd.zdst == 1 ? x->rd.zoff : GFSP_Z_HEADER_SIZE)))
		goto no;
	if (r->zlen == 0 && x->rd.zdst == 1)
		goto no;
	/* the record's temporary file is this file's */
	if (strcmp(x->rd.tmpname, tmp) != 0)
		goto no;
	if (key != x->rd.key) {
		/* an earlier version: are these bytes of the source the same? */
		if (gfsp_pread(x->rd.src, out, len, off, &got, &e) ||
		    got != len)
			goto no;
		x->stats.bytes_read += len;
	} else if (x->o.checksum) {
		if (x->rd.tmp == NULL &&
		    gfsp_open(tmp, GFSP_O_RDONLY | GFSP_O_PRIVATE, 0, &x->rd.tmp,
			      &e) != 0)
			goto no;
		if (r->zlen == 0) {
			if (gfsp_pread(x->rd.tmp, out, len, off, &got, &e) ||
			    got != len)
				goto no;
		} else {
			if (gfsp_pread(x->rd.tmp, x->scratch, r->zlen, r->zoff,
				       &got, &e) || got != r->zlen)
				goto no;
			ze.z_off = r->zoff;
			ze.z_len = r->zlen;
			ze.raw_len = len;
			ze.hash = r->zhash;
			if (gfsp_z_decompress(x->zc, 0, &ze, x->scratch, out,
					      len, tmp, &e))
				goto no;
		}
	}
	if (key != x->rd.key || x->o.checksum) {
		gfsp_xfer_segs(out, len, seg, &nseg);
		if (nseg != r->nseg || memcmp(seg, r->seg, nseg * 8) != 0)
			goto no;
	}
	h->kind = K_RESUMED;
	h->raw_off = off;
	h->raw_len = len;
	h->nseg = r->nseg;
	memcpy(h->seg, r->seg, r->nseg * 8);
	if (r->zlen) {
		h->has_zent = 1;
		h->zent.z_off = r->zoff;
		h->zent.z_len = r->zlen;
		h->zent.raw_len = len;
		h->zent.hash = r->zhash;
		x->rd.zoff = r->zoff + r->zlen;
		x->rd.zdst = 1;
	} else {
		x->rd.zdst = 0;
	}
	return 1;
no:
	x->rd.resumable = 0;
	return 0;
}

/* --------------------------------------------- after a killed transfer */

static size_t
sweep_dir(const char *dir, struct gfsp_state *st, int depth)
{
	struct gfsp_stat sb;
	struct gfsp_file *probe;
	char **names = NULL, *p;
	size_t n = 0, i, removed = 0;

	if (depth > 64 || gfsp_readdir(dir, &names, &n, NULL) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (strcmp(names[i], GFSP_STATE_DIR) == 0 ||
		    asprintf(&p, "%s/%s", dir, names[i]) < 0)
			continue;
		if (gfsp_lstat(p, &sb, NULL) != 0) {
			free(p);
			continue;
		}
		if (S_ISDIR(sb.mode)) {
			removed += sweep_dir(p, st, depth + 1);
		} else if (gfsp_stage_internal_name(names[i]) &&
			   !gfsp_state_tmp_used(st, p) &&
			   (S_ISLNK(sb.mode) || (S_ISREG(sb.mode) &&
			    gfsp_open(p, GFSP_O_RDONLY | GFSP_O_PRIVATE, 0,
				      &probe, NULL) == 0 &&
			    gfsp_close(probe, NULL) == 0)) &&
			   gfsp_unlink(p, NULL) == 0) {
			gfsp_log_verbose("removed '%s', left by a transfer "
					"that was killed", p);
			removed++;
		}
		free(p);
	}
	gfsp_strv_free(names, n);
	return removed;
}

size_t
gfsp_xfer_sweep(const char *root, struct gfsp_state *st)
{
	return sweep_dir(root, st, 0);
}

/* ------------------------------------------------------- already there */

/* The phash of a whole file, the version st describes (x->scratch is
 * the buffer). */
static int
hash_whole(struct gfsp_xfer *x, const char *path, const struct gfsp_stat *st,
	   uint64_t *hash, struct gfsp_error *e)
{
	struct gfsp_file *f = NULL;
	struct gfsp_phash *ph;
	uint64_t off, len, size = st->size;
	size_t got;
	int rc;

	ph = gfsp_phash_new(SEG);
	if (ph == NULL)
		return OOM(e);
	rc = gfsp_open_listed(path, GFSP_O_RDONLY, st, 1, &f, e);
	for (off = 0; rc == 0 && off < size; off += len) {
		len = GFSP_MIN(x->scap, size - off);
		rc = gfsp_pread(f, x->scratch, len, off, &got, e);
		if (rc == 0 && got != len)
			rc = gfsp_error_set(e, GFSP_EIO, "'%s' is shorter than "
					   "it was", path);
		if (rc == 0)
			gfsp_phash_update(ph, x->scratch, len);
	}
	if (rc == 0)
		*hash = gfsp_phash_final(ph);
	if (f != NULL)
		gfsp_close(f, NULL);
	gfsp_phash_free(ph);
	return rc;
}

int
gfsp_xfer_present(struct gfsp_xfer *x, uint32_t file)
{
	const struct gfsp_sfile *f = &x->fl->v[file];
	const struct gfsp_done *d = NULL;
	struct gfsp_error e = { 0 };
	struct gfsp_stat now;
	uint64_t hs, hd;
	char *dst;
	int rc, same = 0;

	if (f->type != GFSP_SF_FILE)
		return 0;
	dst = gfsp_xfer_dst_path(x, file);
	if (dst == NULL)
		return 0;
	rc = gfsp_stat(dst, &now, &e);
	if (rc != 0 || !S_ISREG(now.mode))
		goto out;
	if (x->st != NULL)
		d = gfsp_state_done(x->st, f->rel);
	if (d != NULL) {
		/* installed by us from this very version, untouched since */
		same = d->key == gfsp_file_key(f->src, &f->st) &&
		       d->size == now.size && d->dino == now.ino &&
		       d->mtime == now.mtime && d->dmtime_ns == now.mtime_ns &&
		       d->dctime == now.ctime && d->dctime_ns == now.ctime_ns;
		if (same)
			x->res[file].hash = d->hash;
		goto out;
	}
	/* made by someone else: same size and time, and same bytes */
	if (now.size != f->st.size || now.mtime != f->st.mtime ||
	    now.mtime_ns != f->st.mtime_ns)
		goto out;
	if (!x->o.checksum) {
		same = 1;
		goto out;
	}
	same = hash_whole(x, f->src, &f->st, &hs, &e) == 0 &&
	       hash_whole(x, dst, &now, &hd, &e) == 0 && hs == hd;
	if (same)
		x->res[file].hash = hs;
out:
	if (same)
		x->res[file].skipped = 1;
	free(dst);
	return same;
}

