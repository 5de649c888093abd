/*
 * floor: the syscall floor of a closed-loop load generator. One thread, one
 * epoll set, N connections (TCP_NODELAY), each with one request in flight:
 * it writes a fixed request and counts fixed-size responses, parsing
 * nothing. Per response: one read (usually) and one write, nothing else.
 * Whatever a real client spends above this is its own work.
 *
 *   floor [--uring] http HOST PORT CONNECTIONS SECONDS [PATH]
 *   floor [--uring] resp HOST PORT CONNECTIONS SECONDS [KEY]
 *
 * --uring (built with -DFLOOR_URING -luring, liburing ≥ 2.3, Linux ≥ 6.1):
 * the same client on io_uring instead of epoll: one multishot recv per
 * connection into a ring of provided buffers, sends queued with their
 * completions skipped, and one io_uring_enter per pass that submits every
 * send and waits for a completion; task work deferred to that call
 * (SINGLE_ISSUER | DEFER_TASKRUN). No read, write or epoll_wait of its own:
 * what is left is the kernel's TCP work, and the floor it sets is the one an
 * io_uring client could reach.
 *
 * The response size is learned once, before the window: one request on a
 * blocking socket, and the bytes that come back until 200 ms of quiet.
 * The server must answer every request with the same number of bytes (a
 * fixed body, a Date header of fixed width; GET of a fixed value).
 *
 * Prints, on stdout: "requests N seconds S" (responses counted in the
 * window, its length). CPU is the caller's to measure (getrusage of the
 * child, as bench/lib/measure.py does).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef FLOOR_URING
#include <liburing.h>
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no system call */
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int dial(const char *host, int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "floor: %s: want an IPv4 address\n", host);
		exit(2);
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		die("connect");
	return fd;
}

static void writeall(int fd, const char *b, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, b, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		b += k, n -= (size_t)k;
	}
}

/* learn: the bytes one request gets back, until 200 ms of quiet. */
static size_t learn(int fd, const char *req, size_t reqlen)
{
	char buf[65536];
	size_t got = 0;
	writeall(fd, req, reqlen);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, got ? 200 : 5000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		ssize_t k = read(fd, buf, sizeof buf);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	if (got == 0) {
		fprintf(stderr, "floor: no response to the first request\n");
		exit(1);
	}
	return got;
}

#ifdef FLOOR_URING
#define NBUF 256  /* provided buffers: more than the responses in flight */
#define BUFSZ 4096

static void uring_recv(struct io_uring *ring, int fd, int i)
{
	struct io_uring_sqe *s = io_uring_get_sqe(ring);
	io_uring_prep_recv_multishot(s, fd, NULL, 0, 0);
	s->flags |= IOSQE_BUFFER_SELECT;
	s->buf_group = 1;
	s->user_data = (unsigned)i;
}

static void uring_send(struct io_uring *ring, int fd, int i, const char *req, size_t reqlen)
{
	struct io_uring_sqe *s = io_uring_get_sqe(ring);
	io_uring_prep_send(s, fd, req, reqlen, 0);
	s->flags |= IOSQE_CQE_SKIP_SUCCESS; /* a completion only when it fails */
	s->user_data = 1u << 31 | (unsigned)i;
}

/* uring_loop: the window on io_uring; returns the responses counted. A send
 * completes only when it fails; a short one (a 40-byte request into an empty
 * socket buffer, never seen) would count as sent, and its connection would
 * wait for a response until the window ends. */
static long long uring_loop(int *fds, size_t *have, int conns, const char *req, size_t reqlen, size_t size,
			    double end)
{
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
	int r = io_uring_queue_init_params(2 * (unsigned)conns + 8, &ring, &p);
	if (r < 0) {
		fprintf(stderr, "floor: io_uring_queue_init: %s\n", strerror(-r));
		exit(1);
	}
	struct io_uring_buf_ring *br;
	char *bufs = malloc((size_t)NBUF * BUFSZ);
	if (posix_memalign((void **)&br, 4096, NBUF * sizeof(struct io_uring_buf)) || !bufs)
		die("malloc");
	struct io_uring_buf_reg reg = {.ring_addr = (unsigned long)br, .ring_entries = NBUF, .bgid = 1};
	if ((r = io_uring_register_buf_ring(&ring, &reg, 0)) < 0) {
		fprintf(stderr, "floor: io_uring_register_buf_ring: %s\n", strerror(-r));
		exit(1);
	}
	io_uring_buf_ring_init(br);
	for (int b = 0; b < NBUF; b++)
		io_uring_buf_ring_add(br, bufs + b * BUFSZ, BUFSZ, (unsigned short)b, io_uring_buf_ring_mask(NBUF), b);
	io_uring_buf_ring_advance(br, NBUF);
	for (int i = 0; i < conns; i++) {
		uring_recv(&ring, fds[i], i);
		uring_send(&ring, fds[i], i, req, reqlen);
	}
	long long requests = 0;
	while (now() < end) {
		struct __kernel_timespec ts = {.tv_nsec = 100 * 1000 * 1000};
		struct io_uring_cqe *c;
		r = io_uring_submit_and_wait_timeout(&ring, &c, 1, &ts, NULL);
		if (r < 0 && r != -EINTR && r != -ETIME) {
			fprintf(stderr, "floor: io_uring_enter: %s\n", strerror(-r));
			exit(1);
		}
		unsigned head, n = 0;
		io_uring_for_each_cqe(&ring, head, c)
		{
			n++;
			int i = (int)(c->user_data & 0x7fffffff);
			if (c->user_data >> 31) {
				fprintf(stderr, "floor: send on connection %d: %s\n", i, strerror(-c->res));
				exit(1);
			}
			if (c->res <= 0) {
				fprintf(stderr, "floor: recv on connection %d: %s\n", i,
					c->res ? strerror(-c->res) : "the server closed it");
				exit(1);
			}
			unsigned bid = c->flags >> IORING_CQE_BUFFER_SHIFT;
			io_uring_buf_ring_add(br, bufs + bid * BUFSZ, BUFSZ, (unsigned short)bid,
					      io_uring_buf_ring_mask(NBUF), 0);
			io_uring_buf_ring_advance(br, 1);
			if (!(c->flags & IORING_CQE_F_MORE))
				uring_recv(&ring, fds[i], i); /* the multishot recv ended: re-arm it */
			have[i] += (size_t)c->res;
			if (have[i] < size)
				continue;
			if (have[i] > size) {
				fprintf(stderr, "floor: %zu bytes for a %zu-byte response: not a fixed size\n", have[i], size);
				exit(1);
			}
			have[i] = 0;
			requests++;
			uring_send(&ring, fds[i], i, req, reqlen);
		}
		io_uring_cq_advance(&ring, n);
	}
	return requests;
}
#endif

int main(int argc, char **argv)
{
	int uring = argc > 1 && strcmp(argv[1], "--uring") == 0;
	if (uring) {
#ifndef FLOOR_URING
		fprintf(stderr, "floor: --uring: this build has no io_uring (build with -DFLOOR_URING -luring)\n");
		return 2;
#endif
		argc--, argv++;
	}
	if (argc < 6) {
		fprintf(stderr, "usage: floor [--uring] http|resp HOST PORT CONNECTIONS SECONDS [PATH|KEY]\n");
		return 2;
	}
	const char *mode = argv[1], *host = argv[2];
	int port = atoi(argv[3]), conns = atoi(argv[4]);
	double secs = atof(argv[5]);
	char req[4096];
	int reqlen;
	if (strcmp(mode, "http") == 0) {
		const char *path = argc > 6 ? argv[6] : "/";
		/* wrk's request: the fewest bytes a server accepts */
		reqlen = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", path, host, port);
	} else if (strcmp(mode, "resp") == 0) {
		const char *key = argc > 6 ? argv[6] : "key";
		reqlen = snprintf(req, sizeof req, "*2\r\n$3\r\nGET\r\n$%zu\r\n%s\r\n", strlen(key), key);
	} else {
		fprintf(stderr, "floor: mode %s: want http or resp\n", mode);
		return 2;
	}
	if (conns < 1 || secs <= 0 || reqlen <= 0 || reqlen >= (int)sizeof req) {
		fprintf(stderr, "floor: want CONNECTIONS ≥ 1 and SECONDS > 0\n");
		return 2;
	}

	int *fds = calloc((size_t)conns, sizeof *fds);
	size_t *have = calloc((size_t)conns, sizeof *have); /* bytes of the response in flight */
	if (!fds || !have)
		die("calloc");
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	size_t size = 0;
	for (int i = 0; i < conns; i++) {
		fds[i] = dial(host, port);
		if (i == 0)
			size = learn(fds[0], req, (size_t)reqlen);
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0)
			die("epoll_ctl");
	}
	fprintf(stderr, "floor: %s on %s, %d connections, %.1f s, %d request bytes, %zu response bytes\n",
		mode, uring ? "io_uring" : "epoll", conns, secs, reqlen, size);

	static char buf[1 << 16];
	struct epoll_event evs[1024];
	long long requests = 0;
	double t0 = now(), end = t0 + secs;
#ifdef FLOOR_URING
	if (uring) {
		requests = uring_loop(fds, have, conns, req, (size_t)reqlen, size, end);
		printf("requests %lld seconds %.3f\n", requests, now() - t0);
		return 0;
	}
#endif
	for (int i = 0; i < conns; i++)
		writeall(fds[i], req, (size_t)reqlen);
	double t = t0;
	while (t < end) {
		int n = epoll_wait(ep, evs, 1024, (int)((end - t) * 1000) + 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (int e = 0; e < n; e++) {
			int i = (int)evs[e].data.u32;
			ssize_t k = read(fds[i], buf, sizeof buf);
			if (k < 0) {
				if (errno == EAGAIN || errno == EINTR)
					continue;
				die("read");
			}
			if (k == 0) {
				fprintf(stderr, "floor: the server closed connection %d\n", i);
				return 1;
			}
			have[i] += (size_t)k;
			if (have[i] < size)
				continue; /* the rest of the response is on its way */
			if (have[i] > size) {
				fprintf(stderr, "floor: %zu bytes for a %zu-byte response: not a fixed size\n", have[i], size);
				return 1;
			}
			have[i] = 0;
			requests++;
			writeall(fds[i], req, (size_t)reqlen);
		}
		t = now();
	}
	printf("requests %lld seconds %.3f\n", requests, t - t0);
	return 0;
}
