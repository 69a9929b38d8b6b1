/*
 * onesided_verbs.c - the "verbs" one-sided transport: RDMA reads, writes
 * and atomics posted by this process itself on reliable-connection queue
 * pairs, one per peer.  Built only with libibverbs (HAVE_IBVERBS).
 *
 *   rank i                                         rank j
 *   +--------------+   qp[j] ====== RC ====== qp[i]   +--------------+
 *   | region (mr)  |   (i's QP for j is connected     | region (mr)  |
 *   +--------------+    to j's QP for i; qp[i] on     +--------------+
 *   | bounce (mr)  |    rank i loops back to itself)  | bounce (mr)  |
 *   +--------------+                                  +--------------+
 *     region: the window, registered for remote read, write and atomics
 *     bounce: local only: source of writes, sink of reads and of the
 *             old value an atomic returns; callers' buffers are copied
 *             through it, so they need no registration
 *
 * Completion model: one operation in flight per window.  Every work
 * request is signaled, and the call busy-polls the window's one CQ until
 * its completion arrives; get and put are complete at both ends when
 * they return (a write's completion is the responder's acknowledgement,
 * which RC gives once the data is placed), and flush has nothing left to
 * do.  This is the simplest
 * correct choice; it gives up overlapping transfers, which a later
 * version could win back with a window of outstanding requests per QP
 * and a flush that drains it.
 *
 * The 64-bit words: get64 is a fetch-and-add of 0, cas64 a
 * compare-and-swap, and put64 a CAS loop -- not an 8-byte RDMA write:
 * with IBV_ATOMIC_HCA (the common capability) an HCA's atomics are atomic
 * only against other atomics through that HCA, and a write is not one.
 * For the same reason this rank's own words go through the loopback QP,
 * never through CPU atomics.  Every atomic on rank j's region executes at
 * rank j's HCA, whoever posts it.  (Some HCAs keep an atomic word
 * big-endian in memory; since no one reads a word except by these three
 * operations, the byte order never shows.)
 *
 * Connection setup is the textbook one: port 1, GID index 0 (a GRH is
 * used on RoCE or where the port has no LID), the port's active MTU (the
 * smaller of the two ends), PSNs from the process id.
 */
#ifdef HAVE_IBVERBS

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "core.h"
#include "onesided.h"

#define IB_PORT		1
#define IB_GID_INDEX	0
#define BOUNCE_BYTES	((size_t)1 << 20)	/* one get/put piece */
#define CQ_DEPTH	16	/* one request in flight: plenty */
#define REGION_ALIGN	4096

/* What each rank tells every other (MPI_Allgather, as bytes: every rank
 * runs this same build). */
struct wire_rank {
	uint64_t addr;			/* region, in the owner's space */
	uint64_t size;			/* region bytes */
	uint32_t rkey;
	uint16_t lid;
	uint8_t mtu;			/* enum ibv_mtu */
	uint8_t pad;
	uint8_t gid[16];
};

/* What rank i tells rank j about its QP for j (MPI_Alltoall). */
struct wire_qp {
	uint32_t qpn;
	uint32_t psn;
};

struct peer {
	struct wire_rank info;
	struct wire_qp qp;		/* the peer's QP for us */
	uint32_t psn;			/* our QP's first send PSN */
	int broken;			/* our QP to it is in error state */
};

/* every struct gfsp_os handed out by this file is one of these */
struct os_verbs {
	MPI_Comm comm;			/* private duplicate; MPI_COMM_NULL */
	int rank, nprocs;
	char devname[IBV_SYSFS_NAME_MAX];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
	struct ibv_cq *cq;
	struct ibv_qp **qp;		/* [nprocs]: our QP to each rank */
	struct peer *peer;		/* [nprocs] */
	void *region;
	size_t bytes;			/* asked for; at least 8 registered */
	size_t zero;			/* of them, those set to 0 */
	struct ibv_mr *region_mr;
	unsigned char *bounce;		/* BOUNCE_BYTES + one 64-bit word */
	struct ibv_mr *bounce_mr;
	union ibv_gid gid;		/* port 1, IB_GID_INDEX */
	uint64_t wr_seq;		/* wr_id of the last request */
	/* the exchange's buffers, [nprocs] each, freed once connected:
	 * allocated before it, so that no rank can fail between the
	 * agreement and the collectives */
	struct wire_rank *x_all;
	struct wire_qp *x_out, *x_in;
};

static struct os_verbs *
os_verbs(struct gfsp_os *w)
{
	return (struct os_verbs *)w;
}

/* errno's text, thread-safe (GNU strerror_r) */
static const char *
errtext(int e, char *buf, size_t len)
{
	return strerror_r(e, buf, len);
}

/* ----------------------------------------------------------------- setup */

/*
 * Open the first device whose port 1 is active and which can do atomics,
 * and allocate its protection domain.  Every failure here means "no
 * usable device": GFSP_ENOTSUP, with the reason.
 */
static int
open_device(struct os_verbs *v, struct gfsp_error *err)
{
	struct ibv_device **list;
	struct ibv_device_attr dattr;
	char why[256] = "", ebuf[128];
	int n = 0, i, e;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0) {
		e = errno;
		if (list != NULL)
			ibv_free_device_list(list);
		if (list == NULL && e != 0)
			return gfsp_error_set(err, GFSP_ENOTSUP, "no RDMA "
					     "device (ibv_get_device_list "
					     "found 0: %s)",
					     errtext(e, ebuf, sizeof(ebuf)));
		return gfsp_error_set(err, GFSP_ENOTSUP, "no RDMA device "
				     "(ibv_get_device_list found 0)");
	}
	for (i = 0; i < n && v->pd == NULL; i++) {
		const char *name = ibv_get_device_name(list[i]);

		v->ctx = ibv_open_device(list[i]);
		if (v->ctx == NULL) {
			snprintf(why, sizeof(why), "%s: cannot open: %s", name,
				 errtext(errno, ebuf, sizeof(ebuf)));
			continue;
		}
		if ((e = ibv_query_device(v->ctx, &dattr)) != 0 ||
		    (e = ibv_query_port(v->ctx, IB_PORT, &v->port)) != 0)
			snprintf(why, sizeof(why), "%s: cannot query: %s",
				 name, errtext(e, ebuf, sizeof(ebuf)));
		else if (v->port.state != IBV_PORT_ACTIVE)
			snprintf(why, sizeof(why), "%s: port %d is not "
				 "active", name, IB_PORT);
		else if (dattr.atomic_cap == IBV_ATOMIC_NONE)
			snprintf(why, sizeof(why), "%s: no atomic operations",
				 name);
		else if ((v->pd = ibv_alloc_pd(v->ctx)) == NULL)
			snprintf(why, sizeof(why), "%s: cannot allocate a "
				 "protection domain: %s", name,
				 errtext(errno, ebuf, sizeof(ebuf)));
		else
			snprintf(v->devname, sizeof(v->devname), "%s", name);
		if (v->pd == NULL) {
			ibv_close_device(v->ctx);
			v->ctx = NULL;
		}
	}
	ibv_free_device_list(list);
	if (v->pd == NULL)
		return gfsp_error_set(err, GFSP_ENOTSUP, "no usable RDMA "
				     "device among %d (%s)", n, why);
	return 0;
}

/*
 * Agree on "is there a usable device everywhere".  Unlike gfsp_agree,
 * every rank returns GFSP_ENOTSUP when any rank lacks one, so that "auto"
 * falls back on all ranks together; a rank that has a device learns the
 * lowest failed rank's reason, sent by that rank.
 */
static int
agree_device(MPI_Comm comm, struct os_verbs *v, int rc,
	     const struct gfsp_error *mine, struct gfsp_error *err)
{
	char msg[GFSP_ERRMSG_MAX];
	int key = rc != 0 ? v->rank : v->nprocs, low = 0, mrc;

	mrc = MPI_Allreduce(&key, &low, 1, MPI_INT, MPI_MIN, comm);
	if (mrc != MPI_SUCCESS)
		return gfsp_mpi_check(mrc, "one-sided window (verbs): cannot "
				      "agree on the device", err);
	if (low >= v->nprocs)
		return 0;
	memcpy(msg, mine->msg, sizeof(msg));
	mrc = MPI_Bcast(msg, (int)sizeof(msg), MPI_CHAR, low, comm);
	if (rc != 0)
		return gfsp_error_set(err, rc, "%s", mine->msg);
	if (mrc != MPI_SUCCESS)
		return gfsp_error_set(err, GFSP_ENOTSUP, "no usable RDMA device"
				     " on rank %d", low);
	msg[sizeof(msg) - 1] = '\0';
	return gfsp_error_set(err, GFSP_ENOTSUP, "rank %d: %s", low, msg);
}

/* Local resources: region, bounce buffer, their registrations, the CQ,
 * and one QP per rank, moved to INIT. */
static int
make_resources(struct os_verbs *v, struct gfsp_error *err)
{
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr a;
	size_t regbytes = GFSP_MAX(v->bytes, 8);
	char ebuf[128];
	int j, e;

	v->qp = calloc((size_t)v->nprocs, sizeof(*v->qp));
	v->peer = calloc((size_t)v->nprocs, sizeof(*v->peer));
	v->x_all = calloc((size_t)v->nprocs, sizeof(*v->x_all));
	v->x_out = calloc((size_t)v->nprocs, sizeof(*v->x_out));
	v->x_in = calloc((size_t)v->nprocs, sizeof(*v->x_in));
	v->region = gfsp_big_alloc(regbytes, REGION_ALIGN);
	v->bounce = gfsp_big_alloc(BOUNCE_BYTES + 8, REGION_ALIGN);
	if (v->qp == NULL || v->peer == NULL || v->x_all == NULL ||
	    v->x_out == NULL || v->x_in == NULL || v->region == NULL ||
	    v->bounce == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "one-sided window "
				     "(verbs): out of memory for %zu bytes",
				     regbytes);
	memset(v->region, 0, GFSP_MAX(v->zero, 8));
	e = ibv_query_gid(v->ctx, IB_PORT, IB_GID_INDEX, &v->gid);
	if (e != 0)
		return gfsp_error_set(err, GFSP_EIO, "one-sided window (verbs)"
				     ": %s: cannot query GID %d: %s",
				     v->devname, IB_GID_INDEX,
				     errtext(e, ebuf, sizeof(ebuf)));

	v->region_mr = ibv_reg_mr(v->pd, v->region, regbytes,
				  IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_ATOMIC);
	if (v->region_mr == NULL)
		/* most often the locked-memory limit (ulimit -l) */
		return gfsp_error_set(err, GFSP_EIO, "one-sided window "
				     "(verbs): %s: cannot register %zu bytes: "
				     "%s", v->devname, regbytes,
				     errtext(errno, ebuf, sizeof(ebuf)));
	v->bounce_mr = ibv_reg_mr(v->pd, v->bounce, BOUNCE_BYTES + 8,
				  IBV_ACCESS_LOCAL_WRITE);
	if (v->bounce_mr == NULL)
		return gfsp_error_set(err, GFSP_EIO, "one-sided window "
				     "(verbs): %s: cannot register the bounce "
				     "buffer: %s", v->devname,
				     errtext(errno, ebuf, sizeof(ebuf)));
	v->cq = ibv_create_cq(v->ctx, CQ_DEPTH, NULL, NULL, 0);
	if (v->cq == NULL)
		return gfsp_error_set(err, GFSP_EIO, "one-sided window "
				     "(verbs): %s: cannot create a CQ: %s",
				     v->devname,
				     errtext(errno, ebuf, sizeof(ebuf)));

	memset(&qia, 0, sizeof(qia));
	qia.send_cq = v->cq;
	qia.recv_cq = v->cq;
	qia.qp_type = IBV_QPT_RC;
	qia.sq_sig_all = 1;
	qia.cap.max_send_wr = 4;
	qia.cap.max_recv_wr = 1;	/* nothing is received; some providers
					 * refuse 0 */
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_sge = 1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = IB_PORT;
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_ATOMIC;
	for (j = 0; j < v->nprocs; j++) {
		v->qp[j] = ibv_create_qp(v->pd, &qia);
		if (v->qp[j] == NULL)
			return gfsp_error_set(err, GFSP_EIO, "one-sided window"
					     " (verbs): %s: cannot create a QP"
					     " for rank %d: %s", v->devname, j,
					     errtext(errno, ebuf, sizeof(ebuf)));
		e = ibv_modify_qp(v->qp[j], &a, IBV_QP_STATE |
				  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS);
		if (e != 0)
			return gfsp_error_set(err, GFSP_EIO, "one-sided window"
					     " (verbs): %s: QP for rank %d to "
					     "INIT: %s", v->devname, j,
					     errtext(e, ebuf, sizeof(ebuf)));
	}
	return 0;
}


/* Our QP for rank j: INIT -> RTR (toward the peer's QP for us) -> RTS. */
static int
connect_qp(struct os_verbs *v, int j, struct gfsp_error *err)
{
	const struct peer *p = &v->peer[j];
	struct ibv_qp_attr a;
	char ebuf[128];
	int e;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)GFSP_MIN((int)v->port.active_mtu,
					    (int)p->info.mtu);
	a.dest_qp_num = p->qp.qpn;
	a.rq_psn = p->qp.psn;
	/* one request in flight (see the top of the file): one
	 * outstanding read or atomic is all either end ever needs */
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = p->info.lid;
	a.ah_attr.sl = 0;
	a.ah_attr.src_path_bits = 0;
	a.ah_attr.port_num = IB_PORT;
	/* RoCE has no LIDs: address the peer by its GID */
	if (v->port.link_layer == IBV_LINK_LAYER_ETHERNET ||
	    v->port.lid == 0) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, p->info.gid,
		       sizeof(a.ah_attr.grh.dgid.raw));
		a.ah_attr.grh.sgid_index = IB_GID_INDEX;
		a.ah_attr.grh.hop_limit = 64;
	}
	e = ibv_modify_qp(v->qp[j], &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (e != 0)
		return gfsp_error_set(err, GFSP_EIO, "one-sided window (verbs)"
				     ": %s: QP for rank %d to RTR: %s",
				     v->devname, j,
				     errtext(e, ebuf, sizeof(ebuf)));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;			/* 4.096 us * 2^14: about 67 ms */
	a.retry_cnt = 7;
	a.rnr_retry = 7;		/* 7: retry for ever */
	a.sq_psn = p->psn;
	a.max_rd_atomic = 1;
	e = ibv_modify_qp(v->qp[j], &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC);
	if (e != 0)
		return gfsp_error_set(err, GFSP_EIO, "one-sided window (verbs)"
				     ": %s: QP for rank %d to RTS: %s",
				     v->devname, j,
				     errtext(e, ebuf, sizeof(ebuf)));
	return 0;
}

/*
 * Tell every rank where our region is (MPI_Allgather) and which of our
 * QPs is theirs (MPI_Alltoall: element j of what rank i sends is its QP
 * for rank j).  Nothing here can fail before the collectives.
 */
static int
exchange(struct os_verbs *v, struct gfsp_error *err)
{
	struct wire_rank me;
	int j, mrc;

	memset(&me, 0, sizeof(me));
	me.addr = (uint64_t)(uintptr_t)v->region;
	me.size = v->bytes;
	me.rkey = v->region_mr->rkey;
	me.lid = v->port.lid;
	me.mtu = (uint8_t)v->port.active_mtu;
	memcpy(me.gid, v->gid.raw, sizeof(me.gid));
	for (j = 0; j < v->nprocs; j++) {
		/* a different first PSN per process and connection, so that
		 * stray packets of an earlier QP with the same number are
		 * not taken for ours */
		v->peer[j].psn = ((uint32_t)getpid() * 2654435761u ^
				  (uint32_t)j * 40503u) & 0xffffff;
		v->x_out[j].qpn = v->qp[j]->qp_num;
		v->x_out[j].psn = v->peer[j].psn;
	}
	mrc = MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, v->x_all,
			    (int)sizeof(me), MPI_BYTE, v->comm);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Alltoall(v->x_out, (int)sizeof(*v->x_out), MPI_BYTE,
				   v->x_in, (int)sizeof(*v->x_in), MPI_BYTE,
				   v->comm);
	if (mrc != MPI_SUCCESS)
		return gfsp_mpi_check(mrc, "one-sided window (verbs): cannot "
				      "exchange addresses", err);
	for (j = 0; j < v->nprocs; j++) {
		v->peer[j].info = v->x_all[j];
		v->peer[j].qp = v->x_in[j];
	}
	return 0;
}

/* The exchange's buffers, once it is done. */
static void
free_exchange(struct os_verbs *v)
{
	free(v->x_all);
	free(v->x_out);
	free(v->x_in);
	v->x_all = NULL;
	v->x_out = NULL;
	v->x_in = NULL;
}

/* Release whatever exists; every resource here is local to this rank. */
static void
release(struct os_verbs *v)
{
	int j;

	if (v->qp != NULL)
		for (j = 0; j < v->nprocs; j++)
			if (v->qp[j] != NULL)
				ibv_destroy_qp(v->qp[j]);
	if (v->cq != NULL)
		ibv_destroy_cq(v->cq);
	if (v->region_mr != NULL)
		ibv_dereg_mr(v->region_mr);
	if (v->bounce_mr != NULL)
		ibv_dereg_mr(v->bounce_mr);
	if (v->pd != NULL)
		ibv_dealloc_pd(v->pd);
	if (v->ctx != NULL)
		ibv_close_device(v->ctx);
	free_exchange(v);
	free(v->qp);
	free(v->peer);
	free(v->region);
	free(v->bounce);
	free(v);
}

/*
 * Collective.  Each step is agreed: above all the device (GFSP_ENOTSUP
 * everywhere if any rank lacks one), and last the connected QPs -- that
 * agreement is also the barrier that keeps any rank from posting to a
 * peer whose QP is not yet ready to receive.  Everything but the
 * communicator is local, so a failure releases it all; the communicator
 * is freed only when its duplication succeeded everywhere (MPI_Comm_free
 * is collective, and the ranks where it failed could not join).
 */
static int
verbs_create(MPI_Comm comm, size_t bytes, size_t zero, struct gfsp_os **out,
	     struct gfsp_error *err)
{
	struct os_verbs *v;
	struct gfsp_error derr;
	int rc = 0, mrc, j, have_comm = 0;

	*out = NULL;
	v = calloc(1, sizeof(*v));
	if (v == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "one-sided window "
				   "(verbs): out of memory");
	} else {
		v->comm = MPI_COMM_NULL;
		v->bytes = bytes;
		v->zero = GFSP_MIN(zero, bytes);
		mrc = MPI_Comm_rank(comm, &v->rank);
		if (mrc == MPI_SUCCESS)
			mrc = MPI_Comm_size(comm, &v->nprocs);
		rc = gfsp_mpi_check(mrc, "one-sided window (verbs)", err);
	}
	rc = gfsp_agree(comm, rc, err);
	if (rc != 0)
		goto fail;

	gfsp_error_clear(&derr);
	rc = open_device(v, &derr);
	rc = agree_device(comm, v, rc, &derr, err);
	if (rc != 0)
		goto fail;

	mrc = MPI_Comm_dup(comm, &v->comm);
	rc = gfsp_mpi_check(mrc, "one-sided window (verbs): MPI_Comm_dup",
			    err);
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Comm_set_errhandler(v->comm,
			MPI_ERRORS_RETURN), "one-sided window (verbs): "
			"MPI_Comm_set_errhandler", err);
	rc = gfsp_agree(comm, rc, err);
	if (rc != 0)
		goto fail;
	have_comm = 1;

	rc = make_resources(v, err);
	rc = gfsp_agree(v->comm, rc, err);
	if (rc != 0)
		goto fail;

	rc = exchange(v, err);
	for (j = 0; rc == 0 && j < v->nprocs; j++)
		rc = connect_qp(v, j, err);
	rc = gfsp_agree(v->comm, rc, err);
	if (rc != 0)
		goto fail;
	free_exchange(v);
	*out = (struct gfsp_os *)v;
	return 0;

fail:
	if (v != NULL) {
		if (have_comm)
			MPI_Comm_free(&v->comm);
		release(v);
	}
	return rc;
}

static void
verbs_destroy(struct gfsp_os *w)
{
	struct os_verbs *v = os_verbs(w);

	if (v == NULL)
		return;
	/* every operation is complete when it returns, so once every rank
	 * is here nobody reads or writes this region any more */
	MPI_Barrier(v->comm);
	MPI_Comm_free(&v->comm);
	release(v);
}

static void *
verbs_base(struct gfsp_os *w)
{
	return os_verbs(w)->region;
}

/* ------------------------------------------------------------ operations */

/* Same checks, same words as onesided_mpi.c. */
static int
check_target(const struct os_verbs *v, const char *op, const char *dir,
	     int rank, uint64_t off, uint64_t len, struct gfsp_error *err)
{
	uint64_t size;

	if (rank < 0 || rank >= v->nprocs)
		return gfsp_error_set(err, GFSP_EINVAL, "one-sided %s %s rank "
				     "%d (verbs): no such rank (%d ranks)", op,
				     dir, rank, v->nprocs);
	size = v->peer[rank].info.size;
	if (off > size || len > size - off)
		return gfsp_error_set(err, GFSP_EINVAL, "one-sided %s %s rank "
				     "%d (verbs): %llu bytes at offset %llu "
				     "overrun its %llu-byte region", op, dir,
				     rank, (unsigned long long)len,
				     (unsigned long long)off,
				     (unsigned long long)size);
	if (v->peer[rank].broken)
		return gfsp_error_set(err, GFSP_EIO, "one-sided %s %s rank %d "
				     "(verbs): the connection failed earlier",
				     op, dir, rank);
	return 0;
}

static int
check_word(const struct os_verbs *v, const char *op, const char *dir,
	   int rank, uint64_t off, struct gfsp_error *err)
{
	if (off % 8 != 0)
		return gfsp_error_set(err, GFSP_EINVAL, "one-sided %s %s rank "
				     "%d (verbs): offset %llu is not 8-byte "
				     "aligned", op, dir, rank,
				     (unsigned long long)off);
	return check_target(v, op, dir, rank, off, 8, err);
}

/*
 * Post one signaled request to `rank` and poll until it completes.  With
 * one request in flight, the next completion on the CQ is this one's; a
 * failed one leaves the QP in error state, remembered in `broken`.
 */
static int
post_wait(struct os_verbs *v, int rank, struct ibv_send_wr *wr,
	  const char *op, const char *dir, struct gfsp_error *err)
{
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;
	char ebuf[128];
	int n, e;

	wr->wr_id = ++v->wr_seq;
	wr->send_flags = IBV_SEND_SIGNALED;
	e = ibv_post_send(v->qp[rank], wr, &bad);
	if (e != 0)
		return gfsp_error_set(err, GFSP_EIO, "one-sided %s %s rank %d "
				     "(verbs): ibv_post_send: %s", op, dir,
				     rank, errtext(e, ebuf, sizeof(ebuf)));
	do
		n = ibv_poll_cq(v->cq, 1, &wc);
	while (n == 0);
	if (n < 0) {
		v->peer[rank].broken = 1;
		return gfsp_error_set(err, GFSP_EIO, "one-sided %s %s rank %d "
				     "(verbs): ibv_poll_cq failed", op, dir,
				     rank);
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr->wr_id) {
		v->peer[rank].broken = 1;
		return gfsp_error_set(err, GFSP_EIO, "one-sided %s %s rank %d "
				     "(verbs): %s", op, dir, rank,
				     wc.status != IBV_WC_SUCCESS ?
				     ibv_wc_status_str(wc.status) :
				     "completion of another request");
	}
	return 0;
}

/* A read or write of n <= BOUNCE_BYTES bytes between the bounce buffer
 * and rank's region at off. */
static int
rdma(struct os_verbs *v, enum ibv_wr_opcode opcode, int rank, uint64_t off,
     size_t n, const char *op, const char *dir, struct gfsp_error *err)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	sge.addr = (uint64_t)(uintptr_t)v->bounce;
	sge.length = (uint32_t)n;
	sge.lkey = v->bounce_mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = opcode;
	wr.wr.rdma.remote_addr = v->peer[rank].info.addr + off;
	wr.wr.rdma.rkey = v->peer[rank].info.rkey;
	return post_wait(v, rank, &wr, op, dir, err);
}

/* An atomic on rank's word at off; *old gets the word's previous value. */
static int
atomic64(struct os_verbs *v, enum ibv_wr_opcode opcode, int rank,
	 uint64_t off, uint64_t compare_add, uint64_t swap, uint64_t *old,
	 const char *op, const char *dir, struct gfsp_error *err)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	int rc;

	sge.addr = (uint64_t)(uintptr_t)(v->bounce + BOUNCE_BYTES);
	sge.length = 8;
	sge.lkey = v->bounce_mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = opcode;
	wr.wr.atomic.remote_addr = v->peer[rank].info.addr + off;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	wr.wr.atomic.rkey = v->peer[rank].info.rkey;
	rc = post_wait(v, rank, &wr, op, dir, err);
	if (rc == 0)
		memcpy(old, v->bounce + BOUNCE_BYTES, 8);
	return rc;
}

static int
verbs_get(struct gfsp_os *w, int rank, uint64_t off, void *dst, size_t len,
	  struct gfsp_error *err)
{
	struct os_verbs *v = os_verbs(w);
	size_t done, n;
	int rc;

	if ((rc = check_target(v, "get", "from", rank, off, len, err)) != 0)
		return rc;
	for (done = 0; done < len; done += n) {
		n = GFSP_MIN(len - done, BOUNCE_BYTES);
		rc = rdma(v, IBV_WR_RDMA_READ, rank, off + done, n, "get",
			  "from", err);
		if (rc != 0)
			return rc;
		memcpy((char *)dst + done, v->bounce, n);
	}
	return 0;
}

static int
verbs_put(struct gfsp_os *w, int rank, uint64_t off, const void *src,
	  size_t len, struct gfsp_error *err)
{
	struct os_verbs *v = os_verbs(w);
	size_t done, n;
	int rc;

	if ((rc = check_target(v, "put", "to", rank, off, len, err)) != 0)
		return rc;
	for (done = 0; done < len; done += n) {
		n = GFSP_MIN(len - done, BOUNCE_BYTES);
		memcpy(v->bounce, (const char *)src + done, n);
		rc = rdma(v, IBV_WR_RDMA_WRITE, rank, off + done, n, "put",
			  "to", err);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Nothing is ever left in flight (see the top of the file). */
static int
verbs_flush(struct gfsp_os *w, int rank, struct gfsp_error *err)
{
	return check_target(os_verbs(w), "flush", "of", rank, 0, 0, err);
}

static int
verbs_get64(struct gfsp_os *w, int rank, uint64_t off, uint64_t *val,
	    struct gfsp_error *err)
{
	struct os_verbs *v = os_verbs(w);
	int rc;

	if ((rc = check_word(v, "get64", "from", rank, off, err)) != 0)
		return rc;
	return atomic64(v, IBV_WR_ATOMIC_FETCH_AND_ADD, rank, off, 0, 0, val,
			"get64", "from", err);
}

/* one atomic per word: an RDMA read of several words is not atomic per
 * word against the card's atomics on every device */
static int
verbs_getv64(struct gfsp_os *w, int rank, uint64_t off, uint64_t *vals,
	     size_t n, struct gfsp_error *err)
{
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < n; i++)
		rc = verbs_get64(w, rank, off + 8 * i, &vals[i], err);
	return rc;
}

static int
verbs_cas64(struct gfsp_os *w, int rank, uint64_t off, uint64_t expect,
	    uint64_t val, uint64_t *old, struct gfsp_error *err)
{
	struct os_verbs *v = os_verbs(w);
	int rc;

	if ((rc = check_word(v, "cas64", "on", rank, off, err)) != 0)
		return rc;
	return atomic64(v, IBV_WR_ATOMIC_CMP_AND_SWP, rank, off, expect, val,
			old, "cas64", "on", err);
}

/* A CAS loop, first guessing 0, like onesided_mpi.c's put64. */
static int
verbs_put64(struct gfsp_os *w, int rank, uint64_t off, uint64_t val,
	    struct gfsp_error *err)
{
	return gfsp_os_put64_by_cas(&gfsp_os_verbs, w, rank, off, val, err);
}

static void
verbs_publish(struct gfsp_os *w)
{
	/* the HCA reads memory coherently: ordering our stores before
	 * whatever tells the readers to come (a barrier, a message) is all
	 * that is needed */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

const struct gfsp_os_ops gfsp_os_verbs = {
	.name		= "verbs",
	.create		= verbs_create,
	.destroy	= verbs_destroy,
	.base		= verbs_base,
	.get		= verbs_get,
	.put		= verbs_put,
	.flush		= verbs_flush,
	.get64		= verbs_get64,
	.getv64		= verbs_getv64,
	.put64		= verbs_put64,
	.cas64		= verbs_cas64,
	.publish	= verbs_publish,
};

#endif /* HAVE_IBVERBS */
