/*
 * mtree.c - what a source path is shown as, and the tree of nodes the
 * kernel holds references to.
 *
 * A node is a source object as it was looked up: a split file is its
 * directory's inode and the version of its commit, anything else its
 * inode.  The kernel names a node by its address (the command's inode
 * number) until it forgets it; the table finds a node again by (parent,
 * name).  When a name comes to lead to another object (a split file
 * committed again is a new directory renamed in), the next lookup makes a
 * new node and unlinks the old one, which lives on while the kernel
 * holds it: its open files keep reading the version they opened, and the
 * new node starts with an empty page cache.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core.h"
#include "layout_impl.h"
#include "mount.h"

#define MBLOCKS_PARTS	1024	/* parts stat'ed for a split file's st_blocks */

/* ------------------------------------------------------------ entries */

int
gfsp_mentry_stat(const char *path, struct gfsp_mentry *e,
		 struct gfsp_error *why, struct gfsp_error *err)
{
	struct gfsp_marker m;
	struct gfsp_error verr;
	int rc;

	memset(e, 0, sizeof(*e));
	rc = gfsp_lstat(path, &e->st, err);
	if (rc || !S_ISDIR(e->st.mode))
		return rc;
	gfsp_error_clear(&verr);
	rc = gfsp_split_version(path, &e->version, &m, &verr);
	if (rc == GFSP_ENOTSPLIT)
		return 0;		/* a plain directory */
	/* no wider than any of its files (and, unreadable, its marker's) */
	e->st.mode = S_IFREG | gfsp_msplit_mode(path, &e->st,
	    rc == 0 ? m.nprocs : 0, rc == 0 ? m.nnodes : 0);
	e->st.nlink = 1;
	if (rc) {
		/* a marker that cannot be read: the open that fails says
		 * why; until then the file is there, empty */
		e->kind = GFSP_MBADSPLIT;
		e->version = 0;
		e->st.size = 0;
		e->st.blocks_bytes = 0;
		if (why != NULL)
			*why = verr;
		return 0;
	}
	e->kind = GFSP_MSPLIT;
	e->st.size = m.logical_size;
	/* st_blocks from the parts: du, and cp's choice of a sparse copy,
	 * see the holes a sparse source left (a stat a part; past
	 * MBLOCKS_PARTS parts the logical size, as if dense) */
	e->st.blocks_bytes = m.nprocs <= MBLOCKS_PARTS ?
	    gfsp_parts_allocated(path, m.nprocs) : m.logical_size;
	e->st.mtime = m.ctime;
	e->st.mtime_ns = 0;
	return 0;
}

int
gfsp_mentry_same(const struct gfsp_mentry *a, const struct gfsp_mentry *b)
{
	/* a plain file's data may change under one inode (Gfarm's
	 * generation with it); a split file's only by a new commit */
	return a->kind == b->kind && a->st.ino == b->st.ino &&
	    (a->st.mode & S_IFMT) == (b->st.mode & S_IFMT) &&
	    a->version == b->version;
}

/* --------------------------------------------------------------- tree */

static size_t
bucket(const struct gfsp_mtree *t, const struct gfsp_mnode *parent,
       const char *name)
{
	uint64_t h = gfsp_hash64(name, strlen(name));

	h ^= (uint64_t)(uintptr_t)parent * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h % t->nbuckets);
}

int
gfsp_mtree_init(struct gfsp_mtree *t, const char *root,
		struct gfsp_error *err)
{
	struct gfsp_mentry e;
	char *abs = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	if (strncmp(root, "gfarm:", 6) != 0) {
		abs = realpath(root, NULL);
		if (abs == NULL)
			return gfsp_error_errno(err, errno, "cannot resolve "
			    "'%s'", root);
	} else if ((abs = strdup(root)) == NULL) {
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	/* "gfarm:///d/" and "/d/" end without the slash ("/" keeps it) */
	while (strlen(abs) > 1 && abs[strlen(abs) - 1] == '/' &&
	    abs[strlen(abs) - 2] != '/')
		abs[strlen(abs) - 1] = '\0';
	t->root = abs;
	rc = gfsp_mentry_stat(abs, &e, NULL, err);
	if (rc == 0 && (e.kind != GFSP_MPLAIN || !S_ISDIR(e.st.mode)))
		rc = gfsp_error_set(err, GFSP_EINVAL, "'%s': %s", root,
		    e.kind != GFSP_MPLAIN ? "a split file (mount the "
		    "directory that holds it)" : "not a directory");
	if (rc == 0 && strncmp(abs, "gfarm:", 6) != 0) {
		rc = gfsp_confine(abs, err);
		t->confined = rc == 0;
	}
	if (rc == 0) {
		t->nbuckets = 1024;
		t->hash = calloc(t->nbuckets, sizeof(*t->hash));
		if (t->hash == NULL)
			rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	if (rc) {
		gfsp_mtree_destroy(t);
		return rc;
	}
	t->top.e = e;
	t->top.nlookup = 1;
	t->top.gen = t->gen++;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void
gfsp_mtree_destroy(struct gfsp_mtree *t)
{
	struct gfsp_mnode *n, *next;
	size_t i;

	for (i = 0; t->hash != NULL && i < t->nbuckets; i++)
		for (n = t->hash[i]; n != NULL; n = next) {
			next = n->next;
			free(n->name);
			free(n);
		}
	/* unlinked nodes the kernel never forgot go with the process */
	free(t->hash);
	if (t->confined)
		gfsp_unconfine(t->root);
	if (t->nbuckets > 0)
		pthread_mutex_destroy(&t->lock);
	free(t->root);
	memset(t, 0, sizeof(*t));
}

/* n's path, with the lock held (names and parents change by rename):
 * the root, then "/name" for each node down from it */
static char *
path_locked(const struct gfsp_mtree *t, const struct gfsp_mnode *n,
	    const char *name)
{
	const struct gfsp_mnode *p;
	size_t rootlen = strlen(t->root), len = 0, at, k;
	char *s;

	/* the root "/" (or "gfarm:///") ends with the slash a name adds */
	if (rootlen > 0 && t->root[rootlen - 1] == '/')
		rootlen--;
	if (name != NULL)
		len += strlen(name) + 1;
	for (p = n; p->parent != NULL; p = p->parent)
		len += strlen(p->name) + 1;
	/* the root itself: its held directory ("ROOT/." below the confined
	 * root), not whatever its name leads to now */
	if (len == 0 && t->confined && asprintf(&s, "%s/.", t->root) >= 0)
		return s;
	if (len == 0)
		return strdup(t->root);
	s = malloc(rootlen + len + 1);
	if (s == NULL)
		return NULL;
	memcpy(s, t->root, rootlen);
	at = rootlen + len;
	s[at] = '\0';
	if (name != NULL) {
		k = strlen(name);
		at -= k;
		memcpy(s + at, name, k);
		s[--at] = '/';
	}
	for (p = n; p->parent != NULL; p = p->parent) {
		k = strlen(p->name);
		at -= k;
		memcpy(s + at, p->name, k);
		s[--at] = '/';
	}
	return s;
}

char *
gfsp_mtree_path(struct gfsp_mtree *t, const struct gfsp_mnode *n,
		const char *name)
{
	char *s;

	pthread_mutex_lock(&t->lock);
	s = path_locked(t, n, name);
	pthread_mutex_unlock(&t->lock);
	return s;
}

static void
unlink_node(struct gfsp_mtree *t, struct gfsp_mnode *n)
{
	struct gfsp_mnode **pp;

	if (!n->linked)
		return;
	for (pp = &t->hash[bucket(t, n->parent, n->name)]; *pp != NULL;
	    pp = &(*pp)->next)
		if (*pp == n) {
			*pp = n->next;
			break;
		}
	n->next = NULL;
	n->linked = 0;
	t->nnodes--;
}

static struct gfsp_mnode *
find(struct gfsp_mtree *t, const struct gfsp_mnode *parent, const char *name)
{
	struct gfsp_mnode *n;

	for (n = t->hash[bucket(t, parent, name)]; n != NULL; n = n->next)
		if (n->parent == parent && strcmp(n->name, name) == 0)
			return n;
	return NULL;
}

/* Twice the buckets once there are twice as many nodes (a find over a
 * tree of millions keeps chains short); no room: the chains grow. */
static void
grow(struct gfsp_mtree *t)
{
	struct gfsp_mnode **old = t->hash, *n, *next;
	size_t nold = t->nbuckets, i, b;

	if (t->nnodes < 2 * t->nbuckets)
		return;
	t->hash = calloc(2 * nold, sizeof(*t->hash));
	if (t->hash == NULL) {
		t->hash = old;
		return;
	}
	t->nbuckets = 2 * nold;
	for (i = 0; i < nold; i++)
		for (n = old[i]; n != NULL; n = next) {
			next = n->next;
			b = bucket(t, n->parent, n->name);
			n->next = t->hash[b];
			t->hash[b] = n;
		}
	free(old);
}

static void
link_node(struct gfsp_mtree *t, struct gfsp_mnode *n)
{
	size_t b;

	grow(t);
	b = bucket(t, n->parent, n->name);
	n->next = t->hash[b];
	t->hash[b] = n;
	n->linked = 1;
	t->nnodes++;
}

int
gfsp_mtree_lookup(struct gfsp_mtree *t, struct gfsp_mnode *parent,
		  const char *name, struct gfsp_mnode **out,
		  struct gfsp_mentry *e, struct gfsp_error *err)
{
	struct gfsp_mentry now;
	struct gfsp_mnode *n;
	char *path;
	int rc;

	*out = NULL;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strchr(name, '/') != NULL)
		return gfsp_error_set(err, GFSP_EINVAL, "'%s': not a name "
		    "of the tree", name);
	path = gfsp_mtree_path(t, parent, name);
	if (path == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_mentry_stat(path, &now, NULL, err);
	free(path);
	if (rc)
		return rc;
	pthread_mutex_lock(&t->lock);
	n = find(t, parent, name);
	if (n != NULL && !gfsp_mentry_same(&n->e, &now)) {
		unlink_node(t, n);
		n = NULL;
	}
	if (n == NULL) {
		n = calloc(1, sizeof(*n));
		if (n == NULL || (n->name = strdup(name)) == NULL) {
			pthread_mutex_unlock(&t->lock);
			free(n);
			return gfsp_error_set(err, GFSP_ENOMEM,
			    "out of memory");
		}
		n->parent = parent;
		n->gen = t->gen++;
		parent->children++;
		link_node(t, n);
	}
	n->e = now;
	n->nlookup++;
	pthread_mutex_unlock(&t->lock);
	if (e != NULL)
		*e = now;
	*out = n;
	return 0;
}

void
gfsp_mtree_forget(struct gfsp_mtree *t, struct gfsp_mnode *node, uint64_t n)
{
	struct gfsp_mnode *p;

	pthread_mutex_lock(&t->lock);
	node->nlookup -= GFSP_MIN(n, node->nlookup);
	/* free it and every parent it was the last thing holding */
	while (node->parent != NULL && node->nlookup == 0 &&
	    node->children == 0) {
		p = node->parent;
		unlink_node(t, node);
		free(node->name);
		free(node);
		p->children--;
		node = p;
	}
	pthread_mutex_unlock(&t->lock);
}

int
gfsp_mtree_stat(struct gfsp_mtree *t, struct gfsp_mnode *node,
		struct gfsp_mentry *e, char **path, struct gfsp_error *err)
{
	struct gfsp_error serr;
	int linked, rc;
	char *p;

	pthread_mutex_lock(&t->lock);
	p = path_locked(t, node, NULL);
	linked = node->linked || node->parent == NULL;
	pthread_mutex_unlock(&t->lock);
	if (p == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	gfsp_error_clear(&serr);
	rc = linked ? gfsp_mentry_stat(p, e, NULL, &serr) : GFSP_ENOENT;
	if (rc == 0 && !gfsp_mentry_same(&node->e, e))
		rc = GFSP_ESTALE;
	if (rc == GFSP_ENOENT || rc == GFSP_ESTALE)
		rc = gfsp_error_set(err, GFSP_ESTALE, "'%s' changed: it is "
		    "not the file it was when it was looked up", p);
	else if (rc)
		gfsp_error_set(err, rc, "%s", serr.msg);
	if (rc == 0 && path != NULL)
		*path = p;
	else
		free(p);
	return rc;
}

void
gfsp_mtree_moved(struct gfsp_mtree *t, struct gfsp_mnode *from,
		 const char *name, struct gfsp_mnode *to, const char *newname)
{
	struct gfsp_mnode *n, *old;
	char *s = strdup(newname);

	pthread_mutex_lock(&t->lock);
	old = find(t, to, newname);
	if (old != NULL)
		unlink_node(t, old);	/* replaced */
	n = find(t, from, name);
	if (n != NULL) {
		unlink_node(t, n);
		if (s != NULL) {
			free(n->name);
			n->name = s;
			s = NULL;
			from->children--;
			to->children++;
			n->parent = to;
			link_node(t, n);
		}
	}
	pthread_mutex_unlock(&t->lock);
	free(s);
}

void
gfsp_mtree_removed(struct gfsp_mtree *t, struct gfsp_mnode *parent,
		   const char *name)
{
	struct gfsp_mnode *n;

	pthread_mutex_lock(&t->lock);
	n = find(t, parent, name);
	if (n != NULL)
		unlink_node(t, n);
	pthread_mutex_unlock(&t->lock);
}
