/* guardian/ffio-guardian.c -- the guardian of one process's cached writes:
 * it holds the guarded memory (two memfds, layout in libffio/guard/proto.h)
 * and the descriptors of the files the process writes through its cache,
 * and once the process is gone -- any signal, SIGKILL and the OOM killer
 * included, a crash, _exit, an exec -- it writes back every byte the
 * process had marked, then exits.
 *
 * Usage: ffio-guardian PID SOCKFD (started by libffio/guard/client.c, PID
 * the process guarded, SOCKFD its end of a SOCK_SEQPACKET socket; its
 * parent has already exited, so it is not the process's child).  In a
 * session of its own, it says it is ready (GUARD_MSG_READY, its pid) and
 * serves HELLO, OPEN and CLOSE messages until the socket reaches end of
 * file, which happens when the last descriptor of the process's end is
 * closed.  Only SIGKILL stops it: the signals a job's end sends to every
 * process are ignored.
 *
 * The guarded memory is mapped only to write back, so the guardian stays
 * small while the process lives, and nothing in it is trusted: every
 * offset and length is checked before it is used, and what does not hold
 * is reported and left alone.  Messages go to the descriptor HELLO gave
 * (ffio's log), else to stderr; there is none when all went well.  Exit
 * status: 0, or 1 when something could not be written back.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard/proto.h"

static pid_t guarded;          /* the process guarded */
static int guarded_fd = -1;    /* a pidfd of it, or -1 */
static int detached;           /* it said GOODBYE: its end comes later than the socket's */
static int sock = -1;          /* our end of its socket */
static int log_fd = 2;         /* where messages go */
static int meta_fd = -1, data_fd = -1;
static int failed;             /* something could not be written back */

/* A guarded file, by its index: the descriptor we write it through. */
static struct {
	int fd;                /* -1: none */
	int shared;            /* fd is the process's own description (no reopen) */
	int flags;             /* shared: its status flags, restored after */
	int err;               /* the first error writing it back */
	uint64_t lost;         /* bytes that could not be written */
} files[GUARD_FILES];

/* The mapped guarded memory, at write-back. */
static unsigned char *meta, *data;
static uint64_t meta_size, data_size, pages_end;

/* ---- messages ------------------------------------------------------------ */

/* One line to the log, "ffio-guardian[pid]: ...", in one write. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n = snprintf(buf, sizeof buf, "ffio-guardian[%d]: ", (int)getpid());
	int m;

	if (n < 0)
		return;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof buf - 2)
		len = sizeof buf - 2;
	buf[len++] = '\n';
	for (size_t done = 0; done < len;) {
		ssize_t w = write(log_fd, buf + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		done += (size_t)w;
	}
}

/* The name of the file written through fd, for messages. */
static const char *fd_name(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	if (n < 0)
		snprintf(buf, size, "(descriptor %d)", fd);
	else
		buf[n] = '\0';
	return buf;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}

/* ---- starting ------------------------------------------------------------- */

static const int ignored_signals[] = {
	SIGTERM, SIGINT,  SIGHUP,  SIGQUIT, SIGPIPE, SIGUSR1,   SIGUSR2, SIGALRM,
	SIGXCPU, SIGXFSZ, SIGTSTP, SIGTTIN, SIGTTOU, SIGVTALRM, SIGPROF,
};

/* Ignore what a job's end or a terminal sends; then unblock every signal
 * (the library starts us with all of them blocked). */
static int set_signals(void)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof ignored_signals / sizeof ignored_signals[0]; i++)
		if (sigaction(ignored_signals[i], &sa, NULL) < 0)
			return -errno;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		return -errno;
	return 0;
}

/* Close every descriptor above 2 but keep; fall back to a loop over
 * /proc/self/fd's listing where close_range is missing. */
static int close_others(int keep)
{
	if ((keep == 3 || syscall(SYS_close_range, 3, keep - 1, 0) == 0) &&
	    syscall(SYS_close_range, keep + 1, ~0U, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = 3; fd < max && fd < INT_MAX; fd++)
		if (fd != keep)
			(void)close((int)fd);
	return 0;
}

/* Descriptors: the socket above 2, stdin and stdout (and stderr if it is
 * not open, or was the socket) on /dev/null, nothing else inherited. */
static int set_descriptors(int fd)
{
	int stderr_open = fcntl(2, F_GETFD) >= 0 && fd != 2;

	if (fd <= 2) {
		int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (moved < 0)
			return -errno;
		(void)close(fd);
		fd = moved;
	} else if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		return -errno;
	}
	sock = fd;
	int err = close_others(fd);
	if (err < 0)
		return err;
	int null = open("/dev/null", O_RDWR);
	if (null < 0)
		return -errno;
	for (int std = 0; std <= 2; std++)
		if ((std < 2 || !stderr_open) && null != std && dup2(null, std) < 0)
			return -errno;
	if (null > 2)
		(void)close(null);
	return 0;
}

/* Parse a non-negative decimal number below limit, the whole string. */
static long number(const char *s, long limit)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v >= limit)
		return -1;
	return v;
}

/* A session of our own; then say we are ready, with our pid.  A process
 * already gone (or that gave up on us) cannot hear it, but what it queued
 * before is still to be read: we serve anyway. */
static int become_guardian(void)
{
	struct guard_msg ready = {.kind = GUARD_MSG_READY, .pid = getpid()};

	if (setsid() < 0)
		return -errno;
	guarded_fd = (int)syscall(SYS_pidfd_open, guarded, 0);
	(void)send(sock, &ready, sizeof ready, MSG_NOSIGNAL | MSG_DONTWAIT);
	return 0;
}

/* After GOODBYE: the socket is closed, the process lives on.  Wait for its
 * end: its pidfd becomes readable (without one, once a second: no call
 * of the kernel's tells of another process's end). */
static void await_end(void)
{
	struct pollfd p = {.fd = guarded_fd, .events = POLLIN};

	if (guarded_fd >= 0) {
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
		return;
	}
	while (kill(guarded, 0) == 0 || errno == EPERM)
		sleep(1);
}

/* ---- messages from the process -------------------------------------------- */

/* A file the process writes: a descriptor that names it (O_PATH, from the
 * library: one open for writing would keep the file from being executed
 * while the process lives), opened for writing when it has ended. */
static void file_open(uint32_t i, int fd)
{
	close_fd(&files[i].fd);
	files[i].fd = fd;
	files[i].shared = 0;
}

/* At the end: ours to write it with (write-only, without O_APPEND or
 * O_DIRECT: a description of our own), else the one we were given (a
 * library that passed one open for writing). */
static void file_reopen(uint32_t i)
{
	char link[64];

	snprintf(link, sizeof link, "/proc/self/fd/%d", files[i].fd);
	int own = open(link, O_WRONLY | O_CLOEXEC);
	if (own >= 0) {
		(void)close(files[i].fd);
		files[i].fd = own;
	}
	files[i].shared = own < 0;
}

static void hello(const int *fds, int nfds)
{
	if (meta_fd >= 0 || nfds < 2) {
		say("process %d: unexpected HELLO with %d descriptors ignored", (int)guarded, nfds);
		for (int i = 0; i < nfds; i++)
			(void)close(fds[i]);
		return;
	}
	meta_fd = fds[0];
	data_fd = fds[1];
	if (nfds > 2)
		log_fd = fds[2];
	for (int i = 3; i < nfds; i++)
		(void)close(fds[i]);
}

/* Serve until end of file (the process has ended) or an error.  A
 * process that ends with READY unread makes the next read fail with
 * ECONNRESET, once, before what it queued: read on. */
static void serve(void)
{
	int resets = 0;

	for (;;) {
		struct guard_msg m;
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(4 * sizeof(int))];
		} control;
		struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
		struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1,
				   .msg_control = control.buf, .msg_controllen = sizeof control.buf};
		int fds[4], nfds = 0;

		ssize_t n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EINTR || (errno == ECONNRESET && ++resets < 100)))
			continue;
		if (n == 0)
			return;
		if (n < 0) {
			say("process %d: reading its socket failed: %s", (int)guarded, strerror(errno));
			return;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			int *p = (int *)CMSG_DATA(c);
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t j = 0; j < k; j++) {
				int fd;
				memcpy(&fd, p + j, sizeof fd);
				if (nfds < 4)
					fds[nfds++] = fd;
				else
					(void)close(fd);
			}
		}
		if ((h.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || n != (ssize_t)sizeof m) {
			say("process %d: a message of %zd bytes%s ignored", (int)guarded, n,
			    h.msg_flags & MSG_CTRUNC ? " (descriptors cut)" : "");
			m.kind = 0;
		}
		if (m.kind == GUARD_MSG_HELLO) {
			hello(fds, nfds);
		} else if (m.kind == GUARD_MSG_OPEN && nfds == 1 && m.file < GUARD_FILES) {
			file_open(m.file, fds[0]);
		} else if (m.kind == GUARD_MSG_CLOSE && nfds == 0 && m.file < GUARD_FILES) {
			close_fd(&files[m.file].fd);
		} else if (m.kind == GUARD_MSG_GOODBYE && nfds == 0) {
			detached = 1;
		} else {
			if (m.kind != 0)
				say("process %d: unexpected message %u (file %u, %d descriptors) ignored",
				    (int)guarded, m.kind, m.file, nfds);
			for (int i = 0; i < nfds; i++)
				(void)close(fds[i]);
		}
	}
}

/* ---- the guarded memory ----------------------------------------------------- */

static void *map_fd(int fd, uint64_t *size)
{
	struct stat st;

	*size = 0;
	if (fstat(fd, &st) < 0 || st.st_size <= 0)
		return NULL;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	*size = (uint64_t)st.st_size;
	return p;
}

/* Map both memfds and check the header; 0 or -EINVAL (said). */
static int map_memory(void)
{
	struct guard_meta *h;

	meta = map_fd(meta_fd, &meta_size);
	data = map_fd(data_fd, &data_size);
	if (!meta || meta_size < sizeof(struct guard_meta)) {
		say("process %d: its guarded memory cannot be read (%llu bytes): nothing is written back",
		    (int)guarded, (unsigned long long)meta_size);
		return -EINVAL;
	}
	h = (struct guard_meta *)meta;
	if (h->magic != GUARD_MAGIC || h->version != GUARD_VERSION || h->files != GUARD_FILES ||
	    h->pages_off < sizeof(struct guard_meta) || h->pages_off % 8 || h->end > meta_size ||
	    h->pages_off > h->end) {
		say("process %d: its guarded memory has no valid header (version %u): nothing is written back",
		    (int)guarded, h->version);
		return -EINVAL;
	}
	pages_end = h->end;
	return 0;
}

/* The page record at off, when its header, its map and its bytes all lie
 * inside the guarded memory; else NULL. */
static struct guard_page *record_at(uint64_t off)
{
	const struct guard_meta *h = (const struct guard_meta *)meta;
	const uint64_t hdr = sizeof(struct guard_page);

	if (off < h->pages_off || off % 8 || off > pages_end || pages_end - off < hdr)
		return NULL;
	struct guard_page *r = (struct guard_page *)(meta + off);
	if (r->size < hdr || r->size > pages_end - off || r->page > (r->size - hdr) / 8 * 64)
		return NULL;
	if (r->data_off > data_size || r->page > data_size - r->data_off)
		return NULL;
	if (r->file >= GUARD_FILES || r->pno < 0 ||
	    (r->page > 0 && (uint64_t)r->pno > ((uint64_t)INT64_MAX - r->page) / r->page))
		return NULL;
	return r;
}

static void clear_bits(uint64_t *map, uint32_t lo, uint32_t hi)
{
	for (uint32_t b = lo; b < hi; b++)
		map[b / 64] &= ~(1ULL << (b % 64));
}

/* Undo the write in flight into file i: its entries, last first. */
static void undo_intent(uint32_t i)
{
	struct guard_intent *in = &((struct guard_meta *)meta)->file[i].intent;
	uint32_t n = in->n_entries;

	if (n > GUARD_INTENT_ENTRIES) {
		say("process %d: file %u: its write in flight counts %u pages; the first %d are undone",
		    (int)guarded, i, n, GUARD_INTENT_ENTRIES);
		failed = 1;
		n = GUARD_INTENT_ENTRIES;
	}
	while (n-- > 0) {
		const struct guard_intent_entry *e = &in->entry[n];
		struct guard_page *r = record_at(e->page_off);
		uint32_t lo = e->lo, hi = e->hi;

		if (!r || r->file != i || lo >= hi || hi > r->page) {
			say("process %d: file %u: a part of its write in flight cannot be undone (page record at %llu)",
			    (int)guarded, i, (unsigned long long)e->page_off);
			failed = 1;
			continue;
		}
		if (e->fresh) {
			clear_bits(r->map, lo, hi);
			continue;
		}
		uint32_t w0 = lo / 64, nw = (hi - 1) / 64 - w0 + 1;
		if (e->words_at > GUARD_INTENT_WORDS || nw > GUARD_INTENT_WORDS - e->words_at ||
		    e->bytes_at > GUARD_INTENT_BYTES || hi - lo > GUARD_INTENT_BYTES - e->bytes_at) {
			say("process %d: file %u: a part of its write in flight cannot be undone (saved at %u, %u)",
			    (int)guarded, i, e->words_at, e->bytes_at);
			failed = 1;
			continue;
		}
		memcpy(&r->map[w0], &in->words[e->words_at], (size_t)nw * 8);
		memcpy(data + r->data_off + lo, &in->bytes[e->bytes_at], hi - lo);
	}
}

/* The first bit of map at or after b that is set (want 1) or clear (want
 * 0), or page when there is none before it. */
static uint64_t next_bit(const uint64_t *map, uint64_t page, uint64_t b, int want)
{
	while (b < page) {
		uint64_t w = want ? map[b / 64] : ~map[b / 64];
		w &= ~0ULL << (b % 64);
		if (w) {
			b = b / 64 * 64 + (uint64_t)__builtin_ctzll(w);
			return b < page ? b : page;
		}
		b = (b / 64 + 1) * 64;
	}
	return page;
}

static void write_run(uint32_t i, const unsigned char *p, uint64_t n, off_t off)
{
	while (n > 0) {
		ssize_t w = pwrite(files[i].fd, p, n > (1u << 30) ? (1u << 30) : n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!files[i].err)
				files[i].err = w < 0 ? errno : EIO;
			files[i].lost += n;
			return;
		}
		p += w;
		n -= (uint64_t)w;
		off += w;
	}
}

/* Every marked byte of record r to its file, below an armed truncation. */
static void write_record(const struct guard_page *r)
{
	const struct guard_file *gf = &((const struct guard_meta *)meta)->file[r->file];
	int64_t base = r->pno * (int64_t)r->page;
	uint64_t limit = r->page; /* bytes at or past it are not written */

	if (gf->trunc_armed && gf->trunc_len >= 0) {
		if (gf->trunc_len <= base)
			return;
		if ((uint64_t)(gf->trunc_len - base) < limit)
			limit = (uint64_t)(gf->trunc_len - base);
	}
	for (uint64_t lo = next_bit(r->map, limit, 0, 1); lo < limit;) {
		uint64_t hi = next_bit(r->map, limit, lo, 0);
		write_run(r->file, data + r->data_off + lo, hi - lo, (off_t)(base + (int64_t)lo));
		lo = next_bit(r->map, limit, hi, 1);
	}
}

/* Walk the page records from pages_off to end; stop at one whose size
 * makes no sense (the rest cannot be found). */
static void write_pages(void)
{
	const struct guard_meta *h = (const struct guard_meta *)meta;
	uint64_t off = h->pages_off;

	while (off < pages_end) {
		const struct guard_page *r = (const struct guard_page *)(meta + off);
		uint64_t size = pages_end - off >= sizeof *r ? r->size : 0;

		if (size < sizeof *r || size % 64 || size > pages_end - off) {
			say("process %d: a corrupt page record at %llu of its guarded memory: "
			    "the records after it are not written back",
			    (int)guarded, (unsigned long long)off);
			failed = 1;
			return;
		}
		if (r->state == GUARD_PAGE_LIVE && (r->file >= GUARD_FILES || files[r->file].fd >= 0)) {
			if (record_at(off)) {
				write_record(r);
			} else {
				say("process %d: file %u: a corrupt page record at %llu is not written back",
				    (int)guarded, r->file, (unsigned long long)off);
				failed = 1;
			}
		}
		off += size;
	}
}

/* A description we share with the process: O_APPEND and O_DIRECT off
 * while we write (a write must land where it belongs, from any buffer). */
static void unshare_flags(uint32_t i)
{
	int fl = fcntl(files[i].fd, F_GETFL);

	files[i].flags = fl;
	if (fl >= 0 && (fl & (O_APPEND | O_DIRECT)))
		(void)fcntl(files[i].fd, F_SETFL, fl & ~(O_APPEND | O_DIRECT));
}

static void restore_flags(uint32_t i)
{
	if (files[i].flags >= 0 && (files[i].flags & (O_APPEND | O_DIRECT)))
		(void)fcntl(files[i].fd, F_SETFL, files[i].flags);
}

static void write_back(void)
{
	struct guard_meta *h;
	char name[4096];

	if (meta_fd < 0 || data_fd < 0)
		return; /* no HELLO: nothing was guarded */
	if (map_memory() < 0) {
		failed = 1;
		return;
	}
	h = (struct guard_meta *)meta;
	for (uint32_t i = 0; i < GUARD_FILES; i++) {
		if (files[i].fd < 0)
			continue;
		file_reopen(i);
		if (files[i].shared)
			unshare_flags(i);
		if (h->file[i].intent.armed)
			undo_intent(i);
	}
	write_pages();
	for (uint32_t i = 0; i < GUARD_FILES; i++) {
		if (files[i].fd < 0)
			continue;
		const struct guard_file *gf = &h->file[i];
		if (files[i].err) {
			say("%s: writing back %llu bytes after process %d ended failed: %s",
			    fd_name(files[i].fd, name, sizeof name), (unsigned long long)files[i].lost,
			    (int)guarded, strerror(files[i].err));
			failed = 1;
		} else if (gf->trunc_armed && gf->trunc_len >= 0 && ftruncate(files[i].fd, gf->trunc_len) < 0) {
			say("%s: truncating to %lld bytes after process %d ended failed: %s",
			    fd_name(files[i].fd, name, sizeof name), (long long)gf->trunc_len, (int)guarded,
			    strerror(errno));
			failed = 1;
		}
		if (files[i].shared)
			restore_flags(i);
	}
}

/* Room for a descriptor of every guarded file: the soft limit raised to
 * the hard one (a descriptor that finds no room is dropped by recvmsg). */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int start(int fd)
{
	int err;

	if ((err = set_signals()) < 0 || (err = set_descriptors(fd)) < 0)
		return err;
	raise_fd_limit();
	if (chdir("/") < 0)
		return -errno;
	return become_guardian();
}

int main(int argc, char **argv)
{
	long pid = argc == 3 ? number(argv[1], INT_MAX) : -1;
	long fd = argc == 3 ? number(argv[2], INT_MAX) : -1;
	int err;

	if (pid <= 0 || fd < 0) {
		fprintf(stderr, "usage: ffio-guardian PID SOCKFD (started by libffio, not by hand)\n");
		return 2;
	}
	guarded = (pid_t)pid;
	for (uint32_t i = 0; i < GUARD_FILES; i++)
		files[i].fd = -1;
	if ((err = start((int)fd)) < 0) {
		say("process %d: cannot start: %s: its cached data is lost if it dies", (int)guarded,
		    strerror(-err));
		_exit(1);
	}
	serve();
	if (detached)
		await_end();
	write_back();
	_exit(failed ? 1 : 0);
}
