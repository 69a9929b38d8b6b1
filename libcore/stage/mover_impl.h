/*
 * mover_impl.h - what the background mover (mover.c) and its client
 * (mover_client.c) share: the names in a state directory and a node's
 * entry in the registry.
 *
 * Used by mover.c and mover_client.c.  Included by libcore/stage/ only.
 */
#ifndef GFSP_MOVER_IMPL_H
#define GFSP_MOVER_IMPL_H

#define GFSP_MOVER_SOCK		"mover.sock"	/* requests, one line each */
#define GFSP_MOVER_RECORD	"mover.json"	/* who the mover is */

/* "REGISTRY/NODE.HASH" of a state directory (malloc'd; NULL: out of
 * memory) */
char *gfsp_mover_entry(const char *node, const char *state);

#endif /* GFSP_MOVER_IMPL_H */
