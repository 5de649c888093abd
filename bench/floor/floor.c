/*
 * floor: the syscall floor of a closed-loop load generator. One thread, one
 * epoll set, N connections (TCP_NODELAY), each with one request in flight:
 * it writes a fixed request and counts fixed-size responses, parsing
 * nothing. Per response: one read (usually) and one write, nothing else.
 * Whatever a real client spends above this is its own work.
 *
 *   floor http HOST PORT CONNECTIONS SECONDS [PATH]
 *   floor resp HOST PORT CONNECTIONS SECONDS [KEY]
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

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: floor http|resp HOST PORT CONNECTIONS SECONDS [PATH|KEY]\n");
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
	fprintf(stderr, "floor: %s, %d connections, %.1f s, %d request bytes, %zu response bytes\n",
		mode, conns, secs, reqlen, size);

	static char buf[1 << 16];
	struct epoll_event evs[1024];
	long long requests = 0;
	double t0 = now(), end = t0 + secs;
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
