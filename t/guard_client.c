/* t/guard_client.c -- the guardian, started through the library's client
 * (libffio/guard/client.c) over guarded memory this test lays out itself
 * as proto.h says (the arena is not used).  The test process starts a
 * guardian and looks at it from outside: not its child, no SIGCHLD, its
 * own session, no environment, only its own descriptors, the signals of a
 * job's end ignored; then children (forked: each gets a guardian of its
 * own) hand theirs files and die by SIGKILL, _exit or exec, and the files
 * must hold exactly the bytes marked: an armed intent undone, an armed
 * truncation applied, free records, closed and unknown files left alone,
 * corrupt records skipped or ending the walk, a write error reported.
 * Last, the test's own guardian is killed: the next open fails and says
 * so once.  Guardians are waited for with pidfd_open and poll. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ffio_ext.h"
#include "guard/guard.h"
#include "kill_safe.h"
#include "tap.h"

#define PAGE 4096
#define WAIT_MS 60000 /* a guardian that takes longer has failed */

static char dir[4096], log_path[4200];
static int traced; /* the guardian runs under valgrind too: its environment and argv are valgrind's */

static void bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	tap_flush();
	exit(1);
}

/* ---- guarded memory, laid out by hand ------------------------------------ */

struct memory {
	int meta_fd, data_fd;
	struct guard_meta *meta;
	unsigned char *data;
	uint64_t meta_size, data_size, next_data;
};

static uint64_t round64(uint64_t n)
{
	return (n + 63) / 64 * 64;
}

static void *map_memfd(const char *name, uint64_t size, int *fd)
{
	*fd = memfd_create(name, MFD_CLOEXEC);
	if (*fd < 0) {
		if (errno == ENOSYS)
			tap_skip_all("no memfd_create");
		bail("memfd_create");
	}
	if (ftruncate(*fd, (off_t)size) < 0)
		bail("ftruncate memfd");
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (p == MAP_FAILED)
		bail("mmap memfd");
	return p;
}

/* A valid header, no page record yet; room for records records. */
static void mem_init(struct memory *m, int records)
{
	uint64_t pages_off = round64(sizeof(struct guard_meta));

	m->meta_size = pages_off + (uint64_t)records * round64(sizeof(struct guard_page) + PAGE / 8);
	m->data_size = (uint64_t)records * PAGE;
	m->meta = map_memfd("guard-test-meta", m->meta_size, &m->meta_fd);
	m->data = map_memfd("guard-test-data", m->data_size, &m->data_fd);
	m->meta->magic = GUARD_MAGIC;
	m->meta->version = GUARD_VERSION;
	m->meta->files = GUARD_FILES;
	m->meta->pages_off = pages_off;
	m->meta->end = pages_off;
	m->next_data = 0;
}

/* A page record after the last one: page bytes of file's page pno, all
 * of them fill, none marked. */
static struct guard_page *mem_page(struct memory *m, uint32_t state, uint32_t file, int64_t pno, uint64_t page,
				   int fill)
{
	uint64_t off = m->meta->end;
	struct guard_page *r = (struct guard_page *)((char *)m->meta + off);

	r->state = state;
	r->file = file;
	r->size = round64(sizeof *r + (page + 63) / 64 * 8);
	r->pno = pno;
	r->page = page;
	r->data_off = m->next_data;
	memset(m->data + r->data_off, fill, page);
	m->next_data += round64(page);
	m->meta->end = off + r->size;
	return r;
}

static uint64_t offset_of(const struct memory *m, const struct guard_page *r)
{
	return (uint64_t)((const char *)r - (const char *)m->meta);
}

static void mark(struct guard_page *r, uint32_t lo, uint32_t hi)
{
	for (uint32_t b = lo; b < hi; b++)
		r->map[b / 64] |= 1ULL << (b % 64);
}

/* ---- files --------------------------------------------------------------- */

static void path_of(char *path, size_t size, const char *name)
{
	snprintf(path, size, "%s/%s", dir, name);
}

/* name made afresh with n bytes of c. */
static void prefill(const char *name, int c, size_t n)
{
	char path[4200], buf[8192];
	int fd;

	path_of(path, sizeof path, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		bail(path);
	memset(buf, c, sizeof buf);
	if (n > sizeof buf || write(fd, buf, n) != (ssize_t)n || close(fd) < 0)
		bail("prefill");
}

static int open_file(const char *name, int flags)
{
	char path[4200];

	if (name[0] == '/')
		snprintf(path, sizeof path, "%s", name);
	else
		path_of(path, sizeof path, name);
	int fd = open(path, flags);
	if (fd < 0)
		bail(path);
	return fd;
}

/* name holds exactly want[0, n). */
static void check_file(const char *name, const unsigned char *want, size_t n)
{
	unsigned char got[16384];
	char path[4200];
	struct stat st;
	int fd;
	ssize_t r;

	path_of(path, sizeof path, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		bail(path);
	tap_is(st.st_size, n, "%s: %zu bytes", name, n);
	r = pread(fd, got, sizeof got, 0);
	close(fd);
	size_t same = 0;
	while (r >= 0 && same < n && same < (size_t)r && got[same] == want[same])
		same++;
	if (!tap_ok(r == (ssize_t)n && same == n, "%s: every byte as expected", name))
		tap_diag("  first difference at byte %zu: got 0x%02x, expected 0x%02x", same,
			 same < (size_t)(r > 0 ? r : 0) ? got[same] : 0, same < n ? want[same] : 0);
}

static char *read_all(const char *path, size_t *len)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);

	if (fd >= 0)
		close(fd);
	n = n < 0 ? 0 : n;
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* ---- guardians ------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A descriptor of process pid, or -errno. */
static int pidfd_of(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -errno : fd;
}

/* Process pid, whose descriptor pidfd_of gave, has ended (-ESRCH: it had
 * already).  Where there is no pidfd_open (valgrind does not know the
 * call), kill(pid, 0) until it fails, yielding the processor. */
static int ended(pid_t pid, int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	int r;

	if (pidfd == -ENOSYS) {
		double end = now() + WAIT_MS / 1e3;
		while (kill(pid, 0) == 0 && now() < end)
			sched_yield();
		return kill(pid, 0) < 0 && errno == ESRCH;
	}
	if (pidfd < 0)
		return pidfd == -ESRCH;
	do
		r = poll(&p, 1, WAIT_MS);
	while (r < 0 && errno == EINTR);
	close(pidfd);
	return r == 1;
}

/* A line of /proc/pid/status, its value as a hexadecimal mask. */
static unsigned long long status_mask(pid_t pid, const char *key)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	const char *s = strstr(read_all(path, NULL), key);
	return s ? strtoull(s + strlen(key), NULL, 16) : ~0ULL;
}

static pid_t parent_of(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	const char *s = strrchr(read_all(path, NULL), ')');
	int ppid = -1;
	if (!s || sscanf(s, ") %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

static int link_is(pid_t pid, const char *what, const char *want)
{
	char path[64], got[4096];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
	ssize_t n = readlink(path, got, sizeof got - 1);
	if (n < 0)
		return 0;
	got[n] = '\0';
	return strcmp(got, want) == 0;
}

static volatile sig_atomic_t sigchld_seen;

static void on_sigchld(int sig)
{
	(void)sig;
	sigchld_seen++;
}

/* ---- children that die with files guarded ------------------------------------ */

enum death { BY_SIGKILL, BY_EXIT, BY_EXEC };
enum {
	SIGNALS = 1, /* send its guardian the signals of a job's end */
	UNREAD = 2,  /* leave READY unread: hand the files while the guardian is stopped, then die */
};

struct handed {
	pid_t guardian, before;  /* its guardian; the one it knew of before starting it */
	int sockets;             /* sockets it had then */
	int start_err, open_err;
	double start_time;
};

/* The sockets among this process's descriptors. */
static int sockets(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++) {
		char path[64], got[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		ssize_t k = readlink(path, got, sizeof got - 1);
		n += k > 7 && memcmp(got, "socket:", 7) == 0;
	}
	return n;
}

typedef int build_fn(struct memory *m, int *fds);

/* Hand the guardian the files of fds[], then close the one of index closed. */
static void hand(const int *fds, int closed, int *err)
{
	for (int i = 0; i < GUARD_FILES && *err == 0; i++)
		if (fds[i] >= 0)
			*err = ffio_guardian_open((uint32_t)i, fds[i]);
	if (closed >= 0)
		ffio_guardian_close((uint32_t)closed);
}

/* The guardian of process pid, found by its argv (ffio-guardian PID FD)
 * once it has exec'd, which its start does not wait for: looked for again,
 * yielding, WAIT_MS at most; 0 if not found. */
static pid_t find_guardian(pid_t pid)
{
	char want[64], path[300];
	pid_t found = 0;
	size_t len;
	int n = snprintf(want, sizeof want, "ffio-guardian%c%d%c", 0, (int)pid, 0);
	double end = now() + WAIT_MS / 1e3;

	do {
		DIR *d = opendir("/proc");
		struct dirent *e;
		if (!d)
			bail("opendir /proc");
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] < '1' || e->d_name[0] > '9')
				continue;
			snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
			const char *cmd = read_all(path, &len);
			if (len > (size_t)n && memcmp(cmd, want, (size_t)n) == 0)
				found = atoi(e->d_name);
		}
		closedir(d);
		if (!found)
			sched_yield();
	} while (!found && now() < end);
	return found;
}

/* Process pid is in system call nr (/proc/pid/syscall), or in state
 * (/proc/pid/stat) when nr < 0: waited for, yielding, WAIT_MS at most. */
static int wait_until(pid_t pid, long nr, char state)
{
	char path[64];
	double end = now() + WAIT_MS / 1e3;

	do {
		if (nr >= 0) {
			snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
			const char *s = read_all(path, NULL);
			if (*s >= '0' && *s <= '9' && strtol(s, NULL, 10) == nr)
				return 1;
		} else {
			snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
			const char *s = strrchr(read_all(path, NULL), ')');
			if (s && s[1] == ' ' && s[2] == state)
				return 1;
		}
		sched_yield();
	} while (now() < end);
	return 0;
}

/* In the child: the scenario's memory and files, handed to a guardian of
 * its own; its pid to the parent; then death, when the parent says. */
static void child(build_fn *build, enum death how, int flags, int to_parent, int go)
{
	struct memory m;
	struct handed h = {0};
	int fds[GUARD_FILES];
	char c;

	h.before = ffio_guardian_pid_internal();
	h.sockets = sockets();
	for (int i = 0; i < GUARD_FILES; i++)
		fds[i] = -1;
	int closed = build(&m, fds);
	double t0 = now();
	h.start_err = ffio_guardian_start(m.meta_fd, m.data_fd);
	h.start_time = now() - t0;
	if (!(flags & UNREAD)) {
		hand(fds, closed, &h.open_err);
		h.guardian = ffio_guardian_pid_internal();
	}
	if (write(to_parent, &h, sizeof h) != (ssize_t)sizeof h || read(go, &c, 1) != 1)
		_exit(1);
	if (flags & UNREAD)
		hand(fds, closed, &h.open_err);
	switch (how) {
	case BY_SIGKILL:
		raise(SIGKILL);
		break;
	case BY_EXIT:
		_exit(3);
	case BY_EXEC:
		execl(tap_self(), "guard_client", "--exit", (char *)NULL);
		break;
	}
	_exit(1);
}

/* Run build in a child that dies how; flags: SIGNALS, UNREAD.  1 when
 * the guardian ended. */
static int run(const char *name, build_fn *build, enum death how, pid_t ours, int flags)
{
	int up[2], go[2], status;
	struct handed h;

	if (pipe2(up, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0)
		bail("pipe");
	pid_t pid = fork();
	if (pid < 0)
		bail("fork");
	if (flags & UNREAD && traced)
		flags &= ~UNREAD; /* its guardian's argv is valgrind's: it is not found */
	if (pid == 0)
		child(build, how, flags, up[1], go[0]);
	close(up[1]);
	close(go[0]);
	if (read(up[0], &h, sizeof h) != (ssize_t)sizeof h)
		bail("reading the child's guardian");
	tap_is(h.before, 0, "%s: the child knows no guardian after fork", name);
	tap_is(h.sockets, 0, "%s: nor holds its parent's socket", name);
	tap_is(h.start_err, 0, "%s: the child starts a guardian", name);
	if (flags & UNREAD) {
		h.guardian = find_guardian(pid);
		tap_ok(h.guardian > 0, "%s: its guardian found by its argv: %d", name, (int)h.guardian);
	} else {
		tap_is(h.open_err, 0, "%s: and hands it its files", name);
	}
	tap_ok(h.guardian > 0 && h.guardian != ours && h.guardian != pid,
	       "%s: its guardian (%d) is its own, not its parent's (%d)", name, (int)h.guardian, (int)ours);
	tap_diag("%s: ffio_guardian_start took %.2f ms", name, h.start_time * 1e3);
	int pidfd = pidfd_of(h.guardian);
	if (flags & SIGNALS) {
		static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM,
					   SIGXCPU, SIGXFSZ, SIGTSTP, SIGTTIN, SIGTTOU, SIGVTALRM, SIGPROF};
		int sent = 0;
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
			sent += kill_one(h.guardian, sigs[i]) == 0;
		tap_is(sent, 15, "%s: SIGTERM, SIGINT, SIGHUP and 12 more sent to its guardian", name);
	}
	if (flags & UNREAD) {
		tap_ok(wait_until(h.guardian, SYS_recvmsg, 0), "%s: its guardian waits in recvmsg (READY sent)", name);
		tap_ok(kill_one(h.guardian, SIGSTOP) == 0 && wait_until(h.guardian, -1, 'T'), "%s: and is stopped", name);
	}
	if (write(go[1], "x", 1) != 1 || waitpid(pid, &status, 0) != pid)
		bail("ending the child");
	if (flags & UNREAD)
		tap_ok(WIFSIGNALED(status) && kill_one(h.guardian, SIGCONT) == 0,
		       "%s: the child handed its files and died; its guardian continues", name);
	close(up[0]);
	close(go[1]);
	return ended(h.guardian, pidfd);
}

/* Scenario "killed": four files and some that are not; d.dat is closed
 * after it is handed (its index returned). */
static int build_killed(struct memory *m, int *fds)
{
	struct guard_page *r;

	mem_init(m, 12);
	/* a.dat, opened for appending: the guardian writes where bytes belong. */
	fds[0] = open_file("a.dat", O_WRONLY | O_APPEND);
	r = mem_page(m, GUARD_PAGE_LIVE, 0, 0, PAGE, 'A');
	mark(r, 10, 20);
	mark(r, 4090, 4096);
	r = mem_page(m, GUARD_PAGE_LIVE, 0, 1, PAGE, 'B');
	mark(r, 0, 4);
	mark(r, 904, 1000);
	mark(r, 2000, 2010);
	r = mem_page(m, GUARD_PAGE_FREE, 0, 0, PAGE, 'Z'); /* free: never written */
	mark(r, 0, PAGE);
	r = mem_page(m, GUARD_PAGE_LIVE, 0, 100, 70, 'C'); /* 70 bytes at 7000 */
	mark(r, 60, 128);                                   /* bits past the page ignored */
	/* an intent of a.dat that is not armed: left alone */
	m->meta->file[0].intent.n_entries = 1;
	m->meta->file[0].intent.entry[0] = (struct guard_intent_entry){
		.page_off = m->meta->pages_off, .lo = 10, .hi = 20, .fresh = 1};

	/* b.dat: a write in flight over bytes 0-99, armed: undone. */
	fds[1] = open_file("b.dat", O_RDWR);
	r = mem_page(m, GUARD_PAGE_LIVE, 1, 0, PAGE, 'n');
	mark(r, 0, 100);
	struct guard_intent *in = &m->meta->file[1].intent;
	in->entry[0] = (struct guard_intent_entry){
		.page_off = offset_of(m, r), .lo = 0, .hi = 50, .fresh = 0, .words_at = 0, .bytes_at = 0};
	in->words[0] = (1ULL << 50) - 1; /* bytes 0-49 were marked before, */
	memset(in->bytes, 'p', 50);      /* and held p */
	in->entry[1] = (struct guard_intent_entry){.page_off = offset_of(m, r), .lo = 50, .hi = 100, .fresh = 1};
	in->n_entries = 2;
	in->armed = 1;

	/* c.dat: a truncation to 1000 in flight. */
	fds[2] = open_file("c.dat", O_RDWR);
	r = mem_page(m, GUARD_PAGE_LIVE, 2, 0, PAGE, 'T');
	mark(r, 900, 1100);
	r = mem_page(m, GUARD_PAGE_LIVE, 2, 1, PAGE, 'U');
	mark(r, 0, 10);
	m->meta->file[2].trunc_len = 1000;
	m->meta->file[2].trunc_armed = 1;

	/* d.dat: handed, then closed; its marks are not written. */
	fds[3] = open_file("d.dat", O_RDWR);
	r = mem_page(m, GUARD_PAGE_LIVE, 3, 0, PAGE, 'X');
	mark(r, 0, 10);

	/* /dev/full: the write fails and is reported. */
	fds[4] = open_file("/dev/full", O_WRONLY);
	r = mem_page(m, GUARD_PAGE_LIVE, 4, 0, PAGE, 'F');
	mark(r, 0, 10);

	/* file 7, never handed: its marks are not written. */
	r = mem_page(m, GUARD_PAGE_LIVE, 7, 0, PAGE, 'S');
	mark(r, 0, PAGE);
	return 3;
}

/* Scenario "corrupt": records and an intent that make no sense. */
static int build_corrupt(struct memory *m, int *fds)
{
	struct guard_page *r, *good;

	mem_init(m, 6);
	fds[0] = open_file("e.dat", O_RDWR);
	good = r = mem_page(m, GUARD_PAGE_LIVE, 0, 0, PAGE, 'E');
	mark(r, 0, 10);
	r = mem_page(m, GUARD_PAGE_LIVE, 0, 0, PAGE, 'D'); /* its bytes past the data */
	mark(r, 20, 30);
	r->data_off = m->data_size;
	r = mem_page(m, GUARD_PAGE_LIVE, 0, 0, PAGE, 'D'); /* a size that ends the walk */
	mark(r, 30, 40);
	r->size = 8;
	r = mem_page(m, GUARD_PAGE_LIVE, 0, 0, PAGE, 'G'); /* after it: never reached */
	mark(r, 40, 50);
	struct guard_intent *in = &m->meta->file[0].intent;
	in->entry[0] = (struct guard_intent_entry){.page_off = 1ULL << 60, .lo = 0, .hi = 10, .fresh = 1};
	in->entry[1] = (struct guard_intent_entry){
		.page_off = offset_of(m, good), .lo = 0, .hi = 10, .words_at = GUARD_INTENT_WORDS};
	in->entry[2] = (struct guard_intent_entry){.page_off = offset_of(m, good), .lo = 5, .hi = PAGE + 1,
						   .fresh = 1};
	in->n_entries = 3;
	in->armed = 1;
	return -1;
}

/* Scenario "exec": the process becomes another program. */
static int build_exec(struct memory *m, int *fds)
{
	mem_init(m, 1);
	fds[0] = open_file("x.dat", O_RDWR);
	mark(mem_page(m, GUARD_PAGE_LIVE, 0, 0, PAGE, 'Q'), 0, 5);
	return -1;
}

/* Scenario "bad header": nothing is written. */
static int build_bad_header(struct memory *m, int *fds)
{
	mem_init(m, 1);
	fds[0] = open_file("h.dat", O_RDWR);
	mark(mem_page(m, GUARD_PAGE_LIVE, 0, 0, PAGE, 'H'), 0, 5);
	m->meta->version = GUARD_VERSION + 1;
	return -1;
}

static void children(pid_t ours)
{
	static unsigned char want[16384];

	prefill("a.dat", '.', 6000);
	prefill("b.dat", 'o', 200);
	prefill("c.dat", 'o', 8192);
	prefill("d.dat", '.', 100);
	tap_ok(run("killed", build_killed, BY_SIGKILL, ours, SIGNALS | UNREAD), "killed: its guardian ends after it");
	memset(want, 0, sizeof want);
	memset(want, '.', 6000);
	memset(want + 10, 'A', 10);
	memset(want + 4090, 'A', 6);
	memset(want + 4096, 'B', 4);
	memset(want + 5000, 'B', 96);
	memset(want + 6000, 0, 96);
	memset(want + 6096, 'B', 10);
	memset(want + 7060, 'C', 10);
	check_file("a.dat", want, 7070);
	memset(want, 'o', 200);
	memset(want, 'p', 50);
	check_file("b.dat", want, 200);
	memset(want, 'o', 900);
	memset(want + 900, 'T', 100);
	check_file("c.dat", want, 1000);
	memset(want, '.', 100);
	check_file("d.dat", want, 100);

	prefill("e.dat", '.', 100);
	tap_ok(run("corrupt", build_corrupt, BY_EXIT, ours, 0), "corrupt: its guardian ends after it");
	memset(want, '.', 100);
	memset(want, 'E', 10);
	check_file("e.dat", want, 100);

	prefill("x.dat", '.', 10);
	tap_ok(run("exec", build_exec, BY_EXEC, ours, 0), "exec: its guardian ends when it execs");
	memcpy(want, "QQQQQ.....", 10);
	check_file("x.dat", want, 10);

	prefill("h.dat", '.', 10);
	tap_ok(run("bad header", build_bad_header, BY_SIGKILL, ours, 0), "bad header: its guardian ends after it");
	memset(want, '.', 10);
	check_file("h.dat", want, 10);
}

/* ---- the test process's own guardian -------------------------------------------- */

static void own_guardian(pid_t g, int leaked_pipe)
{
	char path[64], want[64], link[4096];
	size_t len;

	tap_ok(parent_of(g) != getpid() && parent_of(g) > 0, "the guardian is not our child (its parent: %d)",
	       (int)parent_of(g));
	tap_ok(getsid(g) == g && getsid(g) != getsid(0), "it leads a session of its own");
	/* (a valgrind that follows the guardian, which make check-valgrind's
	 * does not, gives it an argv and environment of its own) */
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)g);
	traced = strcmp(read_all(path, &len), "ffio-guardian") != 0;
	if (traced) {
		tap_skip("under valgrind, the guardian's environment is valgrind's");
		tap_skip("under valgrind, the guardian's argv is valgrind's");
	} else {
		snprintf(path, sizeof path, "/proc/%d/environ", (int)g);
		read_all(path, &len);
		tap_is(len, 0, "its environment is empty (no LD_PRELOAD, no FF_IO_*)");
		snprintf(path, sizeof path, "/proc/%d/cmdline", (int)g);
		const char *cmd = read_all(path, &len);
		snprintf(want, sizeof want, "%d", (int)getpid());
		tap_ok(strcmp(cmd, "ffio-guardian") == 0 && strcmp(cmd + strlen(cmd) + 1, want) == 0,
		       "its argv: ffio-guardian %s SOCKFD", want);
	}
	tap_ok(link_is(g, "cwd", "/"), "its working directory is /");
	tap_ok(link_is(g, "fd/0", "/dev/null") && link_is(g, "fd/1", "/dev/null"), "stdin and stdout: /dev/null");

	/* Its descriptors: 0-2, the socket, meta, data, the log; not our pipe. */
	snprintf(path, sizeof path, "/proc/self/fd/%d", leaked_pipe);
	ssize_t n = readlink(path, link, sizeof link - 1);
	link[n > 0 ? n : 0] = '\0';
	/* (valgrind 3.19, which runs the guardian too, refuses pidfd_open:
	 * there the guardian holds no pidfd.)  It says READY before it reads
	 * HELLO, which brings the memfds and the log: their count is waited
	 * for, WAIT_MS at most. */
	int want_fds = traced ? 7 : 8, fds, pipe_held;
	double end = now() + WAIT_MS / 1e3;
	do {
		fds = pipe_held = 0;
		for (int fd = 0; fd < 1024; fd++) {
			char got[4096];
			snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)g, fd);
			ssize_t k = readlink(path, got, sizeof got - 1);
			if (k < 0)
				continue;
			got[k] = '\0';
			fds++;
			pipe_held |= strcmp(got, link) == 0;
		}
		if (fds < want_fds)
			sched_yield();
	} while (fds < want_fds && now() < end);
	tap_is(fds, want_fds, "it holds %d descriptors: stdio, its socket, the two memfds, the log%s", want_fds,
	       traced ? " (no pidfd under valgrind)" : ", the process's pidfd");
	tap_ok(!pipe_held, "not our pipe (%s), open without close-on-exec when it started", link);

	unsigned long long ign = status_mask(g, "SigIgn:"), want_ign = 0;
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM,
				   SIGXCPU, SIGXFSZ, SIGTSTP, SIGTTIN, SIGTTOU, SIGVTALRM, SIGPROF};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		want_ign |= 1ULL << (sigs[i] - 1);
	tap_ok((ign & want_ign) == want_ign, "it ignores SIGTERM and the 14 others (SigIgn %llx)", ign);
	tap_is(status_mask(g, "SigBlk:"), 0, "and blocks none");
}

int main(int argc, char **argv)
{
	struct memory m;
	struct sigaction sa;
	int leaked[2], fd, err;

	if (argc > 1 && strcmp(argv[1], "--exit") == 0)
		return 0; /* the program a child execs */
	tap_tmpdir(dir, sizeof dir, "guard_client");
	snprintf(log_path, sizeof log_path, "%s/log", dir);
	setenv("FF_IO_LOGFILE", log_path, 1);
	setenv("LD_PRELOAD", "", 1);

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigchld;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGCHLD, &sa, NULL) < 0 || pipe(leaked) < 0)
		bail("setting up");

	mem_init(&m, 1);
	tap_is(ffio_guardian_pid_internal(), 0, "no guardian before one is started");
	double t0 = now();
	err = ffio_guardian_start(m.meta_fd, m.data_fd);
	double took = now() - t0;
	tap_is(err, 0, "ffio_guardian_start");
	tap_diag("ffio_guardian_start took %.2f ms", took * 1e3);
	pid_t g = ffio_guardian_pid_internal();
	tap_ok(g > 0 && ffio_guardian_running(), "the guardian runs: pid %d", (int)g);
	tap_is(ffio_guardian_pid(), g, "ffio_guardian_pid says so too");
	tap_is(ffio_guardian_start(m.meta_fd, m.data_fd), 0, "a second start is the first one");
	tap_is(ffio_guardian_pid_internal(), g, "and the same guardian");
	errno = 0;
	tap_ok(waitpid(-1, NULL, WNOHANG | __WALL) < 0 && errno == ECHILD,
	       "no child is left to wait for (waitpid(-1, __WALL): ECHILD)");
	tap_is(sigchld_seen, 0, "no SIGCHLD came");
	own_guardian(g, leaked[1]);

	children(g);

	tap_ok(kill(g, 0) == 0 && ffio_guardian_running(), "our guardian outlived the children's deaths");
	fd = open_file("d.dat", O_RDWR);
	tap_is(ffio_guardian_open(0, fd), 0, "a file handed to it");
	int pidfd = pidfd_of(g);
	tap_ok(kill_one(g, SIGKILL) == 0 && ended(g, pidfd), "SIGKILL ends it");
	tap_is(ffio_guardian_open(1, fd), -EPIPE, "the next open fails: -EPIPE");
	tap_is(ffio_guardian_running(), 0, "it is known to be gone");
	tap_is(ffio_guardian_pid_internal(), 0, "its pid is 0");
	tap_is(ffio_guardian_open(2, fd), -ENOTCONN, "opens after that: -ENOTCONN");
	ffio_guardian_close(0);
	tap_is(ffio_guardian_start(m.meta_fd, m.data_fd), -ENOTCONN, "and no second guardian starts");
	close(fd);

	const char *log = read_all(log_path, NULL);
	char line[512];
	tap_is(count(log, "has ended: data cached from now on is lost if this process dies"), 1,
	       "its end is said once");
	snprintf(line, sizeof line, "]: /dev/full: writing back 10 bytes after process ");
	tap_is(count(log, line), 1, "the failed write back is said, once: %s...", line);
	tap_is(count(log, "ended failed: No space left on device\n"), 1, "with its error");
	tap_is(count(log, "a corrupt page record at"), 2, "both corrupt records are said");
	tap_is(count(log, "cannot be undone"), 3, "so are the 3 parts of an intent that cannot be undone");
	tap_is(count(log, "has no valid header"), 1, "so is a bad header");
	tap_is(count(log, "ffio-guardian["), 7, "and nothing else from a guardian");
	tap_diag("the log:\n%s", log);
	return tap_done();
}
