/*
 * onesided_tcp.c - the "tcp" one-sided transport: every rank serves its
 * own region to its peers over TCP, from threads of its own, so that an
 * operation on a rank's region never waits for that rank's program to
 * enter MPI.  For networks without RDMA (Ethernet, and InfiniBand or
 * Slingshot where no verbs device is usable), where MPI's one-sided calls
 * are active messages that the target serves only while it is in MPI.
 *
 *   rank i                                          rank j
 *   +--------------+  conn i->j (i's, made at its   +--------------+
 *   | region       |  first operation on j) ------> | acceptor     |
 *   +--------------+                                | server i     | reads, writes
 *   | acceptor     | <------ conn j->i              | (thread)     | j's region
 *   | server j     |                                +--------------+
 *   +--------------+
 *
 * Each rank listens on a port of its node's address (its host name's, as
 * the cluster's name service gives it; a port of GFSPLIT_CACHE_TCP_PORTS
 * "LO-HI" where a firewall opens only those; MPI_Allgather tells the
 * peers) and
 * runs one server thread per peer that connected.  A connection opens
 * with the job's secret (128 random bits rank 0 drew and sent the ranks
 * over MPI), checked by the acceptor thread: a process that is not one
 * of the job's ranks is dropped before it reads or writes a byte, and
 * gets no thread.  Anyone who reaches the address may connect, so the
 * acceptor waits for no connection in particular (see "the acceptor"
 * below): a stranger costs a place among the pending and a little CPU,
 * never a peer's time.  The bytes themselves travel in the
 * clear, as MPI's own do over TCP.
 *
 * A request is one header, and for a put its bytes; the server answers
 * every request, so every operation is complete at both ends when it
 * returns and flush has nothing left to do (as with "verbs").  A get's
 * bytes go from the region to the socket and from the socket into the
 * caller's buffer: no copy in user space on either side.
 *
 * The 64-bit words are changed by the server thread (or by the owner,
 * for its own words) with the CPU's atomic instructions: every access to
 * a word is one, so they are atomic against each other.  A rank's
 * operations on its own region take no detour through a socket.
 *
 * A peer that does not answer: with a timeout (--timeout, GFSPLIT_TIMEOUT)
 * an operation gives up after that long with GFSP_ENET naming the rank
 * and its node, and the connection is closed (later operations on that
 * rank fail at once); without one it waits, as MPI would.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "onesided.h"

#define HOST_MAX	64
#define WORDS_MAX	512		/* getv64 words per request */
#define GET_CHUNK	((size_t)1 << 16)	/* get bytes per request */
#define HELLO_MAGIC	UINT64_C(0x67667370746370)	/* "gfsptcp" */
#define HELLO_WAIT_S	5		/* from accept to the whole hello */
#define PENDING_MAX	64		/* accepted, not yet greeted */
#define ACCEPT_BATCH	16		/* accepts between reads of those */

enum { OP_GET = 1, OP_PUT, OP_GETV64, OP_CAS64 };

/* What each rank tells every other (MPI_Allgather, as bytes: every rank
 * runs this same build). */
struct wire_rank {
	uint64_t size;			/* region bytes */
	uint32_t addr;			/* IPv4, network order */
	uint16_t port;			/* network order */
	uint16_t loopback;		/* addr is 127.0.0.0/8 */
	char host[HOST_MAX];		/* its node */
};

struct hello {
	uint64_t magic;
	uint64_t secret[2];
};

struct req {
	uint32_t op;
	uint32_t pad;
	uint64_t off;
	uint64_t len;			/* bytes; getv64: words */
	uint64_t a, b;			/* cas64: expect, value */
};

struct conn {				/* one accepted connection */
	int fd;
	pthread_t thread;
	struct os_tcp *t;
};

struct peer {
	struct wire_rank info;
	int fd;				/* our connection to it, or -1 */
	int broken;			/* it failed: no more tries */
	char why[128];			/* how: "get: no answer within 4 s..." */
	pthread_mutex_t lock;		/* one request at a time on fd */
};

/* every struct gfsp_os handed out by this file is one of these */
struct os_tcp {
	MPI_Comm comm;			/* private duplicate; MPI_COMM_NULL */
	int rank, nprocs;
	unsigned char *region;
	size_t bytes, mapped;		/* asked for; mapped (pages) */
	uint64_t *size;			/* [nprocs], for gfsp_os_check */
	struct peer *peer;		/* [nprocs] */
	uint64_t secret[2];
	double timeout;			/* seconds; 0: wait */
	int lfd;			/* listening */
	pthread_t acceptor;
	int acceptor_on;
	/* [nconns], at most nprocs: made by the acceptor alone, read by
	 * release once it is joined */
	struct conn *conns;
	int nconns;
};

static struct os_tcp *
os_tcp(struct gfsp_os *w)
{
	return (struct os_tcp *)w;
}

/* ------------------------------------------------------------ plain I/O */

/* All of n bytes, or -1 with errno (0 at end of stream: EPIPE). */
static int
send_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	ssize_t k;

	while (n > 0) {
		k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Milliseconds from now to `deadline` (gfsp_now() seconds) for poll(2):
 * rounded up, 0 once it has passed. */
static int
ms_until(double deadline)
{
	double ms = (deadline - gfsp_now()) * 1000;

	return ms <= 0 ? 0 : ms >= INT32_MAX - 1 ? INT32_MAX : (int)ms + 1;
}

/*
 * All of n bytes by `deadline` (gfsp_now() seconds; 0: no limit), or -1
 * with errno (ETIMEDOUT: the deadline passed; EPIPE: end of stream).  One
 * limit for the whole answer, however it comes in pieces: a sender that
 * trickles bytes cannot stretch it, as it could a timeout of each recv.
 */
static int
recv_by(int fd, void *buf, size_t n, double deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *p = buf;
	ssize_t k;
	int r;

	while (n > 0) {
		if (deadline > 0) {
			r = poll(&pfd, 1, ms_until(deadline));
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0)
				errno = ETIMEDOUT;
			if (r <= 0)
				return -1;
		}
		k = recv(fd, p, n, deadline > 0 ? MSG_DONTWAIT : 0);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k == 0)
			errno = EPIPE;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int
recv_all(int fd, void *buf, size_t n)
{
	return recv_by(fd, buf, n, 0);
}

/* ---------------------------------------------------------------- server */

static int
valid(const struct os_tcp *t, const struct req *r)
{
	uint64_t len = r->op == OP_GETV64 ? r->len * 8 :
		       r->op == OP_CAS64 ? 8 : r->len;

	if (r->op == OP_GETV64 && (r->len == 0 || r->len > WORDS_MAX))
		return 0;
	if ((r->op == OP_GETV64 || r->op == OP_CAS64) && r->off % 8 != 0)
		return 0;
	return r->op >= OP_GET && r->op <= OP_CAS64 && r->off <= t->bytes &&
	       len <= t->bytes - r->off;
}

/* One request from a peer; -1 ends the connection. */
static int
serve_one(struct os_tcp *t, int fd, const struct req *r)
{
	uint64_t words[WORDS_MAX], ack = 0, *word, old;

	if (!valid(t, r))
		return -1;
	switch (r->op) {
	case OP_GET:
		return send_all(fd, t->region + r->off, r->len);
	case OP_PUT:
		if (recv_all(fd, t->region + r->off, r->len) != 0)
			return -1;
		return send_all(fd, &ack, sizeof(ack));
	case OP_GETV64:
		for (uint64_t i = 0; i < r->len; i++)
			words[i] = __atomic_load_n((uint64_t *)(void *)
				(t->region + r->off) + i, __ATOMIC_SEQ_CST);
		return send_all(fd, words, r->len * 8);
	default:			/* OP_CAS64 */
		word = (uint64_t *)(void *)(t->region + r->off);
		old = r->a;
		__atomic_compare_exchange_n(word, &old, r->b, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		return send_all(fd, &old, sizeof(old));
	}
}

static void *
serve(void *arg)
{
	struct conn *c = arg;
	struct req r;

	while (recv_all(c->fd, &r, sizeof(r)) == 0)
		if (serve_one(c->t, c->fd, &r) != 0)
			break;
	return NULL;
}

/*
 * The acceptor: one thread that never waits on one connection, for anyone
 * who reaches the address may connect and then say nothing, or one byte
 * at a time.
 *
 *   listen queue        pending[PENDING_MAX]            server threads
 *   (SOMAXCONN)  ---->  fd, deadline, hello so far ---> one per peer
 *               accept4      (polled: read as it    the whole hello,
 *               ACCEPT_BATCH  comes, never waited   right: an answer
 *               at a time     for)                  and a thread
 *
 * A connection has HELLO_WAIT_S from its accept to present the whole
 * hello: one deadline, not one a recv, so trickled bytes do not stretch
 * it.  A rank sends its hello as soon as it is connected, so it is mostly
 * there at the accept already, and read at once.  A wrong hello, a closed
 * connection, or a deadline passed: closed.  When the pending are full,
 * the oldest of them is closed for the newcomer: a stranger holds at most
 * PENDING_MAX places, each for at most HELLO_WAIT_S, and a peer that is
 * pushed out so (its hello not yet in) connects again (peer_fd).  Between
 * two batches of accepts the pending are read, so neither a flood of
 * connections nor a silent one keeps the others waiting.
 */
struct pending {
	int fd;
	double deadline;		/* gfsp_now() seconds */
	size_t got;			/* bytes of hello[] so far */
	unsigned char hello[sizeof(struct hello)];
};

struct greeter {
	struct os_tcp *t;
	int n;
	struct pending p[PENDING_MAX];
};

/* The job's hello, compared in constant time. */
static int
hello_ok(const struct os_tcp *t, const unsigned char *buf)
{
	struct hello h;
	uint64_t diff;

	memcpy(&h, buf, sizeof(h));
	diff = (h.magic ^ HELLO_MAGIC) | (h.secret[0] ^ t->secret[0]) |
	       (h.secret[1] ^ t->secret[1]);
	return diff == 0;
}

/* A greeted peer: its answer, and a server thread of its own on a
 * blocking fd; one per peer, no more. */
static void
adopt(struct os_tcp *t, int fd)
{
	uint64_t ack = HELLO_MAGIC;
	int fl = fcntl(fd, F_GETFL);
	struct conn *c;

	if (t->nconns >= t->nprocs || fl < 0 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 ||
	    send_all(fd, &ack, sizeof(ack)) != 0) {
		close(fd);
		return;
	}
	c = &t->conns[t->nconns];
	c->fd = fd;
	c->t = t;
	if (pthread_create(&c->thread, NULL, serve, c) == 0)
		t->nconns++;
	else
		close(fd);
}

/* What has come of p's hello, without waiting; 1: p is done with (a
 * server thread has its fd, or it is closed), 0: more is to come. */
static int
read_hello(struct os_tcp *t, struct pending *p)
{
	ssize_t k;

	do
		k = recv(p->fd, p->hello + p->got, sizeof(p->hello) - p->got,
			 MSG_DONTWAIT);
	while (k < 0 && errno == EINTR);
	if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (k <= 0) {
		close(p->fd);
		return 1;
	}
	p->got += (size_t)k;
	if (p->got < sizeof(p->hello))
		return 0;
	/* a rank sends nothing more before the answer: nothing is lost
	 * by reading the hello alone */
	if (hello_ok(t, p->hello))
		adopt(t, p->fd);
	else
		close(p->fd);
	return 1;
}

static void
pend_remove(struct greeter *g, int i)
{
	g->p[i] = g->p[--g->n];
}

/* Close the oldest pending connection (the earliest deadline). */
static void
pend_drop_oldest(struct greeter *g)
{
	int i, old = 0;

	for (i = 1; i < g->n; i++)
		if (g->p[i].deadline < g->p[old].deadline)
			old = i;
	close(g->p[old].fd);
	pend_remove(g, old);
}

static void
pend_add(struct greeter *g, int fd)
{
	struct pending *p;

	if (g->n == PENDING_MAX)
		pend_drop_oldest(g);
	p = &g->p[g->n++];
	p->fd = fd;
	p->deadline = gfsp_now() + HELLO_WAIT_S;
	p->got = 0;
	if (read_hello(g->t, p))
		pend_remove(g, g->n - 1);
}

/*
 * Up to ACCEPT_BATCH connections off the listen queue into the pending.
 * -1: the listener is shut down (release); 1: out of descriptors, with
 * no pending one to give up (the caller pauses the listener).
 */
static int
accept_some(struct greeter *g)
{
	int i, fd, one = 1;

	for (i = 0; i < ACCEPT_BATCH; i++) {
		fd = accept4(g->t->lfd, NULL, NULL, SOCK_CLOEXEC |
			     SOCK_NONBLOCK);
		if (fd >= 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			pend_add(g, fd);
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno == EINVAL || errno == EBADF)
			return -1;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			if (g->n == 0)
				return 1;
			pend_drop_oldest(g);
		}
		/* anything else is the new connection's own error (accept(2):
		 * ECONNABORTED, EPROTO, ENETDOWN, ...), which a stranger can
		 * cause: the next one */
	}
	return 0;
}

static void *
accept_loop(void *arg)
{
	struct greeter gs = { .t = arg, .n = 0 }, *g = &gs;
	struct pollfd pfd[PENDING_MAX + 1];
	double now, first;
	int i, ms, pause = 0;

	for (;;) {
		/* [0] the listener (not while out of descriptors), [1 + i]
		 * pending i; the wait ends at the first deadline */
		pfd[0] = (struct pollfd){ .fd = pause ? -1 : g->t->lfd,
					  .events = POLLIN };
		first = 0;
		for (i = 0; i < g->n; i++) {
			pfd[1 + i] = (struct pollfd){ .fd = g->p[i].fd,
						      .events = POLLIN };
			if (i == 0 || g->p[i].deadline < first)
				first = g->p[i].deadline;
		}
		ms = g->n > 0 ? ms_until(first) : -1;
		if (pause && (ms < 0 || ms > 100))
			ms = 100;
		/* a failure (EINTR) leaves every revents 0: the deadlines
		 * are checked all the same */
		(void)poll(pfd, (nfds_t)g->n + 1, ms);
		pause = 0;
		/* backwards: pend_remove moves the last one, already seen,
		 * into i, so that pfd[1 + j] stays pending j for j < i */
		now = gfsp_now();
		for (i = g->n - 1; i >= 0; i--) {
			if (pfd[1 + i].revents != 0 &&
			    read_hello(g->t, &g->p[i]))
				pend_remove(g, i);
			else if (g->p[i].deadline <= now) {
				close(g->p[i].fd);
				pend_remove(g, i);
			}
		}
		if (pfd[0].revents != 0 && (pause = accept_some(g)) < 0)
			break;
	}
	for (i = 0; i < g->n; i++)
		close(g->p[i].fd);
	return NULL;
}

/* ----------------------------------------------------------------- setup */

/* This node's IPv4 address, from its host name. */
static int
my_address(struct wire_rank *me, struct gfsp_error *err)
{
	struct addrinfo hints, *ai = NULL;
	struct sockaddr_in sin;
	int e;

	gfsp_node_name(me->host, sizeof(me->host));
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	e = getaddrinfo(me->host, NULL, &hints, &ai);
	if (e != 0 || ai == NULL)
		return gfsp_error_set(err, GFSP_ENOTSUP, "one-sided window "
				     "(tcp): cannot resolve this node's name "
				     "'%s': %s", me->host, gai_strerror(e));
	memcpy(&sin, ai->ai_addr, sizeof(sin));
	freeaddrinfo(ai);
	me->addr = sin.sin_addr.s_addr;
	me->loopback = (ntohl(me->addr) >> 24) == 127;
	return 0;
}

/* GFSPLIT_CACHE_TCP_PORTS "LO-HI" (a firewall's opening), else 0-0: any */
static int
port_range(unsigned *lo, unsigned *hi, struct gfsp_error *err)
{
	const char *v = getenv("GFSPLIT_CACHE_TCP_PORTS");
	char tail;

	*lo = *hi = 0;
	if (v == NULL || *v == '\0')
		return 0;
	if (sscanf(v, "%u-%u%c", lo, hi, &tail) != 2 || *lo < 1 ||
	    *hi > 65535 || *lo > *hi)
		return gfsp_error_set(err, GFSP_EINVAL, "GFSPLIT_CACHE_TCP_PORTS="
				     "'%s': a range of ports LO-HI, please", v);
	return 0;
}

/*
 * A socket listening on sin, or -1 with errno (EADDRINUSE: the port is
 * taken).  Non-blocking: the acceptor takes what is queued and waits in
 * poll(2) alone.  The queue is as long as the system allows: the acceptor
 * empties it all the time (accept_loop), so that strangers cannot fill it
 * for the peers.  SO_REUSEADDR: the connections a rank closed on its port
 * (strangers' among them) linger in TIME_WAIT for a minute after the job,
 * and would keep the next job from that port of GFSPLIT_CACHE_TCP_PORTS;
 * a port someone listens on stays taken all the same, and two ranks that
 * bound the same port find out at listen(2).
 */
static int
listen_on(const struct sockaddr_in *sin)
{
	int fd, e, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
	    bind(fd, (const struct sockaddr *)sin, sizeof(*sin)) == 0 &&
	    listen(fd, SOMAXCONN) == 0)
		return fd;
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* A listening socket on this node's address: a port of the range, or
 * any the kernel gives. */
static int
listen_any(struct os_tcp *t, struct wire_rank *me, struct gfsp_error *err)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	unsigned lo, hi, port;
	int rc;

	if ((rc = port_range(&lo, &hi, err)) != 0)
		return rc;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = me->addr;
	for (port = lo;; port++) {
		sin.sin_port = htons((uint16_t)port);
		if ((t->lfd = listen_on(&sin)) >= 0)
			break;
		if (errno != EADDRINUSE || port >= hi)
			return gfsp_error_set(err, GFSP_ENET, "one-sided window "
			    "(tcp): cannot listen on %s (%s) port %u%s: %s",
			    me->host, inet_ntoa(sin.sin_addr), port, hi ?
			    ", the last of GFSPLIT_CACHE_TCP_PORTS" : "",
			    strerror(errno));
	}
	if (getsockname(t->lfd, (struct sockaddr *)&sin, &len) != 0)
		return gfsp_error_set(err, GFSP_ENET, "one-sided window (tcp): "
				     "cannot listen on %s (%s): %s", me->host,
				     inet_ntoa(sin.sin_addr), strerror(errno));
	me->port = sin.sin_port;
	return 0;
}

/* Release whatever exists; every resource here is local to this rank. */
static void
release(struct os_tcp *t)
{
	int j;

	if (t->lfd >= 0)
		shutdown(t->lfd, SHUT_RDWR);
	if (t->acceptor_on)
		pthread_join(t->acceptor, NULL);
	if (t->lfd >= 0)
		close(t->lfd);
	/* a server thread ends when its connection does; a peer that is
	 * gone or stopped would never end it */
	for (j = 0; j < t->nconns; j++)
		shutdown(t->conns[j].fd, SHUT_RDWR);
	for (j = 0; j < t->nconns; j++) {
		pthread_join(t->conns[j].thread, NULL);
		close(t->conns[j].fd);
	}
	for (j = 0; t->peer != NULL && j < t->nprocs; j++) {
		if (t->peer[j].fd >= 0)
			close(t->peer[j].fd);
		pthread_mutex_destroy(&t->peer[j].lock);
	}
	if (t->region != NULL && t->region != MAP_FAILED)
		munmap(t->region, t->mapped);
	free(t->conns);
	free(t->peer);
	free(t->size);
	free(t);
}

/* Everything but MPI: region, socket, buffers. */
static int
make_local(struct os_tcp *t, struct wire_rank *me, struct gfsp_error *err)
{
	long page = sysconf(_SC_PAGESIZE);
	int j;

	t->mapped = (GFSP_MAX(t->bytes, 8) + (size_t)page - 1) /
		    (size_t)page * (size_t)page;
	/* anonymous pages are 0 until written: the first `zero` bytes need
	 * nothing more, and the rest costs nothing until used */
	t->region = mmap(NULL, t->mapped, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	t->size = calloc((size_t)t->nprocs, sizeof(*t->size));
	t->peer = calloc((size_t)t->nprocs, sizeof(*t->peer));
	t->conns = calloc((size_t)t->nprocs, sizeof(*t->conns));
	for (j = 0; t->peer != NULL && j < t->nprocs; j++) {
		t->peer[j].fd = -1;
		pthread_mutex_init(&t->peer[j].lock, NULL);
	}
	if (t->region == MAP_FAILED || !t->size || !t->peer || !t->conns)
		return gfsp_error_set(err, GFSP_ENOMEM, "one-sided window "
				     "(tcp): cannot map %zu bytes", t->mapped);
	me->size = t->bytes;
	if (my_address(me, err) != 0)
		return err->code;
	return listen_any(t, me, err);
}

/*
 * Every rank must be reachable from every other: a loopback address is
 * fine only when all ranks are on one node (GFSP_ENOTSUP otherwise, so
 * that "auto" goes on to "mpi").
 */
static int
check_reachable(struct os_tcp *t, const struct wire_rank *all,
		struct gfsp_error *err)
{
	int j, lo = -1, far = -1;

	for (j = 0; j < t->nprocs; j++) {
		if (all[j].loopback && lo < 0)
			lo = j;
		if (strcmp(all[j].host, all[0].host) != 0 && far < 0)
			far = j;
	}
	if (lo < 0 || far < 0)		/* no loopback, or one node */
		return 0;
	/* a rank on another node than lo's: far, or rank 0 */
	j = strcmp(all[far].host, all[lo].host) != 0 ? far : 0;
	return gfsp_error_set(err, GFSP_ENOTSUP, "one-sided window (tcp): "
			     "rank %d's node name '%s' resolves to a loopback "
			     "address, which rank %d on '%s' cannot reach", lo,
			     all[lo].host, j, all[j].host);
}

/*
 * Collective, each step agreed (as onesided_verbs.c): the local
 * resources, then the secret and the addresses, then the acceptor.
 */
static int
tcp_create(MPI_Comm comm, size_t bytes, size_t zero, struct gfsp_os **out,
	   struct gfsp_error *err)
{
	struct os_tcp *t;
	struct wire_rank me, *all = NULL;
	int rc = 0, mrc, j, have_comm = 0;

	(void)zero;		/* mmap's pages are 0 already */
	*out = NULL;
	memset(&me, 0, sizeof(me));
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return gfsp_agree(comm, gfsp_error_set(err, GFSP_ENOMEM,
				  "one-sided window (tcp): out of memory"), err);
	t->comm = MPI_COMM_NULL;
	t->lfd = -1;
	t->bytes = bytes;
	t->timeout = gfsp_timeout_setting();
	mrc = MPI_Comm_rank(comm, &t->rank);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Comm_size(comm, &t->nprocs);
	rc = gfsp_mpi_check(mrc, "one-sided window (tcp)", err);
	if (rc == 0)
		rc = make_local(t, &me, err);
	all = rc == 0 ? calloc((size_t)t->nprocs, sizeof(*all)) : NULL;
	if (rc == 0 && all == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "one-sided window (tcp): "
				   "out of memory");
	rc = gfsp_agree(comm, rc, err);
	if (rc != 0)
		goto fail;

	mrc = MPI_Comm_dup(comm, &t->comm);
	rc = gfsp_mpi_check(mrc, "one-sided window (tcp): MPI_Comm_dup", err);
	rc = gfsp_agree(comm, rc, err);
	if (rc != 0)
		goto fail;
	have_comm = 1;

	if (t->rank == 0) {
		t->secret[0] = gfsp_random64();
		t->secret[1] = gfsp_random64();
	}
	mrc = MPI_Bcast(t->secret, 2, MPI_UINT64_T, 0, t->comm);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, all,
				    (int)sizeof(me), MPI_BYTE, t->comm);
	rc = gfsp_mpi_check(mrc, "one-sided window (tcp): cannot exchange "
			    "addresses", err);
	if (rc == 0)
		rc = check_reachable(t, all, err);
	for (j = 0; rc == 0 && j < t->nprocs; j++) {
		t->peer[j].info = all[j];
		t->size[j] = all[j].size;
	}
	if (rc == 0) {
		if (pthread_create(&t->acceptor, NULL, accept_loop, t) == 0)
			t->acceptor_on = 1;
		else
			rc = gfsp_error_set(err, GFSP_ENOMEM, "one-sided "
					   "window (tcp): no thread");
	}
	/* the agreement is also the barrier: no rank connects before every
	 * rank listens and accepts */
	rc = gfsp_agree(t->comm, rc, err);
	if (rc != 0)
		goto fail;
	free(all);
	*out = (struct gfsp_os *)t;
	return 0;

fail:
	free(all);
	if (have_comm)
		MPI_Comm_free(&t->comm);
	release(t);
	return rc;
}

static void
tcp_destroy(struct gfsp_os *w)
{
	struct os_tcp *t = os_tcp(w);

	if (t == NULL)
		return;
	/* every operation is complete when it returns, so once every rank
	 * is here nobody reads or writes this region any more */
	MPI_Barrier(t->comm);
	MPI_Comm_free(&t->comm);
	release(t);
}

static void *
tcp_base(struct gfsp_os *w)
{
	return os_tcp(w)->region;
}

/* ------------------------------------------------------------- the client */

/* The peer, in messages: "node n2 at 198.18.1.12:40123". */
static const char *
peer_where(const struct peer *p, char *buf, size_t n)
{
	struct in_addr a = { .s_addr = p->info.addr };
	char addr[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a, addr, sizeof(addr));
	snprintf(buf, n, "node %s at %s:%u", p->info.host, addr,
		 ntohs(p->info.port));
	return buf;
}

/* The operation failed: the peer is given up, for good. */
static int
peer_fail(struct os_tcp *t, int rank, const char *op, const char *dir,
	  int e, struct gfsp_error *err)
{
	struct peer *p = &t->peer[rank];
	char why[96], where[HOST_MAX + 32];

	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	p->broken = 1;
	if (e == EAGAIN || e == EWOULDBLOCK || e == ETIMEDOUT)
		snprintf(why, sizeof(why), "no answer within %g s "
			 "(--timeout); given up", t->timeout);
	else
		snprintf(why, sizeof(why), "%s", strerror(e));
	/* for the operations of other threads that were waiting on it */
	snprintf(p->why, sizeof(p->why), "%s: %s", op, why);
	return gfsp_error_set(err, GFSP_ENET, "one-sided %s %s rank %d (tcp, "
			     "%s): %s", op, dir, rank,
			     peer_where(p, where, sizeof(where)), why);
}

/* connect(2) by the deadline (0: none); fd blocking again after it */
static int
connect_by(int fd, const struct sockaddr_in *sin, double deadline)
{
	int fl = fcntl(fd, F_GETFL), e = 0, r;
	socklen_t len = sizeof(e);
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };

	if (deadline <= 0)
		return connect(fd, (const struct sockaddr *)sin, sizeof(*sin));
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin)) != 0) {
		if (errno != EINPROGRESS)
			return -1;
		while ((r = poll(&pfd, 1, ms_until(deadline))) < 0 &&
		       errno == EINTR)
			;
		if (r == 0)
			errno = ETIMEDOUT;
		if (r <= 0)
			return -1;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0 || e) {
			errno = e ? e : errno;
			return -1;
		}
	}
	return fcntl(fd, F_SETFL, fl);
}

/* One try at a connection to p: connect, our hello, its answer, all by
 * the deadline (0: none); the fd, or -1 with errno. */
static int
greet_peer(struct os_tcp *t, const struct peer *p, double deadline)
{
	struct hello h = { HELLO_MAGIC, { t->secret[0], t->secret[1] } };
	struct sockaddr_in sin;
	struct timeval tv;
	uint64_t ack = 0;
	int fd, one = 1, e;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = p->info.addr;
	sin.sin_port = p->info.port;
	if (t->timeout > 0) {		/* for the sends; recv_by has its own */
		tv.tv_sec = (time_t)t->timeout;
		tv.tv_usec = (suseconds_t)((t->timeout - (double)tv.tv_sec) * 1e6);
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect_by(fd, &sin, deadline) == 0 &&
	    send_all(fd, &h, sizeof(h)) == 0 &&
	    recv_by(fd, &ack, sizeof(ack), deadline) == 0) {
		if (ack == HELLO_MAGIC)
			return fd;
		errno = EPROTO;		/* not the acceptor of a rank */
	}
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/*
 * Our connection to rank, made and greeted at first use, by the deadline
 * (0: none).  A connection closed before the answer came (EPIPE,
 * ECONNRESET) was let go by the peer's acceptor while our hello was on
 * its way: strangers had crowded its pending set (accept_loop).  So it is
 * made again, a moment later, until the deadline; anything else (the
 * peer's port closed: ECONNREFUSED) ends the tries.
 */
static int
peer_fd(struct os_tcp *t, int rank, double deadline)
{
	struct peer *p = &t->peer[rank];
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	int fd;

	if (p->fd >= 0)
		return p->fd;
	while ((fd = greet_peer(t, p, deadline)) < 0 &&
	       (errno == EPIPE || errno == ECONNRESET)) {
		if (deadline > 0 && gfsp_now() + (double)nap.tv_nsec * 1e-9 >=
		    deadline) {
			errno = ETIMEDOUT;
			break;
		}
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 500 * 1000 * 1000)	/* 10 ms .. 0.64 s */
			nap.tv_nsec *= 2;
	}
	if (fd >= 0)
		p->fd = fd;
	return fd;
}

/*
 * One request to rank: header, then `out` (a put's bytes), then the
 * answer into `in`, the answer whole within the timeout (and the
 * connection made, at the first request).  Any failure closes the
 * connection for good.
 */
static int
call(struct os_tcp *t, int rank, const struct req *r, const void *out,
     size_t nout, void *in, size_t nin, const char *op, const char *dir,
     struct gfsp_error *err)
{
	struct peer *p = &t->peer[rank];
	char where[HOST_MAX + 32];
	double deadline;
	int fd, rc = 0;

	pthread_mutex_lock(&p->lock);
	/* from here: the wait for the lock is other requests' time */
	deadline = t->timeout > 0 ? gfsp_now() + t->timeout : 0;
	if (p->broken) {
		rc = gfsp_error_set(err, GFSP_ENET, "one-sided %s %s rank %d "
				   "(tcp, %s): given up earlier (%s)", op, dir,
				   rank, peer_where(p, where, sizeof(where)),
				   p->why);
	} else if ((fd = peer_fd(t, rank, deadline)) < 0 ||
		   send_all(fd, r, sizeof(*r)) != 0 ||
		   (nout > 0 && send_all(fd, out, nout) != 0) ||
		   recv_by(fd, in, nin, deadline) != 0) {
		rc = peer_fail(t, rank, op, dir, errno, err);
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

static int
tcp_get(struct gfsp_os *w, int rank, uint64_t off, void *dst, size_t len,
	struct gfsp_error *err)
{
	struct os_tcp *t = os_tcp(w);
	struct req r = { .op = OP_GET };
	size_t done, k;
	int rc;

	if ((rc = gfsp_os_check("tcp", t->nprocs, t->size, "get", "from",
				rank, off, len, 0, err)) != 0)
		return rc;
	if (rank == t->rank) {
		memcpy(dst, t->region + off, len);
		return 0;
	}
	/* in pieces, so that another thread's small operation on the same
	 * peer (a directory word) waits for one piece, not a whole block */
	for (done = 0; rc == 0 && done < len; done += k) {
		k = GFSP_MIN(len - done, GET_CHUNK);
		r.off = off + done;
		r.len = k;
		rc = call(t, rank, &r, NULL, 0, (char *)dst + done, k, "get",
			  "from", err);
	}
	return rc;
}

static int
tcp_put(struct gfsp_os *w, int rank, uint64_t off, const void *src,
	size_t len, struct gfsp_error *err)
{
	struct os_tcp *t = os_tcp(w);
	struct req r = { .op = OP_PUT, .off = off, .len = len };
	uint64_t ack;
	int rc;

	if ((rc = gfsp_os_check("tcp", t->nprocs, t->size, "put", "to", rank,
				off, len, 0, err)) != 0)
		return rc;
	if (rank == t->rank) {
		memcpy(t->region + off, src, len);
		return 0;
	}
	return len == 0 ? 0 : call(t, rank, &r, src, len, &ack, sizeof(ack),
				   "put", "to", err);
}

/* Nothing is ever left in flight (see the top of the file). */
static int
tcp_flush(struct gfsp_os *w, int rank, struct gfsp_error *err)
{
	struct os_tcp *t = os_tcp(w);

	return gfsp_os_check("tcp", t->nprocs, t->size, "flush", "of", rank,
			     0, 0, 0, err);
}

static int
tcp_getv64(struct gfsp_os *w, int rank, uint64_t off, uint64_t *vals,
	   size_t n, struct gfsp_error *err)
{
	struct os_tcp *t = os_tcp(w);
	struct req r = { .op = OP_GETV64 };
	size_t done, k;
	int rc;

	if ((rc = gfsp_os_check("tcp", t->nprocs, t->size, "getv64", "from",
				rank, off, n * 8, 1, err)) != 0)
		return rc;
	for (done = 0; done < n; done += k) {
		k = GFSP_MIN(n - done, (size_t)WORDS_MAX);
		if (rank == t->rank) {
			for (size_t i = 0; i < k; i++)
				vals[done + i] = __atomic_load_n((uint64_t *)
					(void *)(t->region + off) + done + i,
					__ATOMIC_SEQ_CST);
			continue;
		}
		r.off = off + done * 8;
		r.len = k;
		rc = call(t, rank, &r, NULL, 0, vals + done, k * 8, "getv64",
			  "from", err);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
tcp_get64(struct gfsp_os *w, int rank, uint64_t off, uint64_t *val,
	  struct gfsp_error *err)
{
	return tcp_getv64(w, rank, off, val, 1, err);
}

static int
tcp_cas64(struct gfsp_os *w, int rank, uint64_t off, uint64_t expect,
	  uint64_t val, uint64_t *old, struct gfsp_error *err)
{
	struct os_tcp *t = os_tcp(w);
	struct req r = { .op = OP_CAS64, .off = off, .a = expect, .b = val };
	int rc;

	if ((rc = gfsp_os_check("tcp", t->nprocs, t->size, "cas64", "on",
				rank, off, 8, 1, err)) != 0)
		return rc;
	if (rank == t->rank) {
		*old = expect;
		__atomic_compare_exchange_n((uint64_t *)(void *)
			(t->region + off), old, val, 0, __ATOMIC_SEQ_CST,
			__ATOMIC_SEQ_CST);
		return 0;
	}
	return call(t, rank, &r, NULL, 0, old, sizeof(*old), "cas64", "on",
		    err);
}

static int
tcp_put64(struct gfsp_os *w, int rank, uint64_t off, uint64_t val,
	  struct gfsp_error *err)
{
	return gfsp_os_put64_by_cas(&gfsp_os_tcp, w, rank, off, val, err);
}

static void
tcp_publish(struct gfsp_os *w)
{
	/* the server threads read this memory: ordering our stores before
	 * whatever tells the readers to come is all that is needed */
	(void)w;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

const struct gfsp_os_ops gfsp_os_tcp = {
	.name		= "tcp",
	.threads	= 1,
	.create		= tcp_create,
	.destroy	= tcp_destroy,
	.base		= tcp_base,
	.get		= tcp_get,
	.put		= tcp_put,
	.flush		= tcp_flush,
	.get64		= tcp_get64,
	.getv64		= tcp_getv64,
	.put64		= tcp_put64,
	.cas64		= tcp_cas64,
	.publish	= tcp_publish,
};
