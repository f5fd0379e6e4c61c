/* t/diff_kernel.c -- the differential test of ffio's transparency promise,
 * with the kernel as the oracle.
 *
 * ffio promises a program exactly what the kernel alone would give it.  This
 * program is NOT linked with libffio; t/diff_kernel.sh runs it with the
 * library preloaded.  From a seed it draws a random sequence of operations
 * and applies each one, with the same parameters, to two files in the same
 * directory: a managed one (its name ends in ".dat", which FF_IO_OPTS
 * matches) and an unmanaged twin (".twin", which nothing matches).  After
 * every step the two results are compared: return value, errno when -1,
 * bytes read, sizes from fstat/stat/lstat/statx/lseek, F_GETFL.  Parameters
 * that depend on the file's state (its size, a descriptor's flags) are drawn
 * from the twin: the kernel decides.  At the first difference the seed's
 * test point is "not ok", with the step and a trace of the last steps.  At
 * the end of a seed every descriptor is closed and the final contents are
 * compared twice: read back here, and by cmp(1) run without ffio.
 *
 * Operation kinds (-o takes a comma list of them, default all):
 *   open close dup dup2 write read seek hole trunc stat sync fcntl rename
 *   fork mmap closerange stdio spawn peer thread
 * "fork" runs a few read/write/seek/stat/trunc steps in a forked child
 * through the inherited descriptors (the child compares too and reports
 * through a pipe); "spawn" runs cat(1) on both paths with the environment
 * inherited (ffio in it too), "peer" the same without LD_PRELOAD (a process
 * with no ffio), or one in two a shell without ffio that writes a few bytes
 * into both files (its end seen, the next reads show them); "thread" runs two threads doing pwrite+pread on distinct
 * ranges; "hole" is lseek SEEK_DATA/SEEK_HOLE.  1 read or write in 25 has
 * a buffer the kernel refuses (t/bad_buf.h).
 *
 * Usage: diff_kernel [-s SEED] [-n SEEDS] [-k STEPS] [-t SECONDS] [-o KIND,...] [-v]
 * Without -s/-n/-t: a fixed list of seeds (make check).  -t runs seeds from
 * SEED on until SECONDS have passed (soak).  -v prints every step.
 * Run it without any preload and it must pass every seed: that checks the
 * harness itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rng.h"
#include "bad_buf.h"
#include "tap.h"

extern char **environ;

#define PAGE 4096
#define MAXF (256 * 1024) /* offsets and lengths are drawn below this */
#define NSLOT 6           /* descriptors per file */
#define TRACE 20          /* steps shown on a difference */
#define LINE 400

enum kind {
	K_OPEN, K_CLOSE, K_DUP, K_DUP2, K_WRITE, K_READ, K_SEEK, K_HOLE, K_TRUNC,
	K_STAT, K_SYNC, K_FCNTL, K_RENAME, K_FORK, K_MMAP, K_CLOSERANGE, K_STDIO,
	K_SPAWN, K_PEER, K_THREAD, NKIND
};
static const char *const kname[NKIND] = {
	"open", "close", "dup", "dup2", "write", "read", "seek", "hole", "trunc",
	"stat", "sync", "fcntl", "rename", "fork", "mmap", "closerange", "stdio",
	"spawn", "peer", "thread"};
static const int kweight[NKIND] = {6, 4, 3, 2, 22, 16, 6, 2, 3, 6, 2, 3, 1, 2, 2, 1, 2, 1, 1, 1};
static unsigned kmask = (1u << NKIND) - 1;

/* One seed's state (and rng.h's rs).  Side 0 is the managed file, side 1
 * its twin. */
static char dir[PATH_MAX / 2], path[2][PATH_MAX];
static unsigned long long seed;
static int gen;
static int slot[NSLOT][2], used[NSLOT], nslot; /* slot[i][side]: one open, both files */
static char trace[TRACE][LINE];
static long step;
static int sub; /* a forked child's steps: step.sub */
static char msg[8192]; /* the first difference, empty while all agree */
static int verbose, in_child;
static unsigned char wbuf[4 * PAGE + 64], rbuf[2][4 * PAGE + 64];
static char **env_plain; /* environ without LD_PRELOAD */

/* Slots keep their numbers while open, so that a trace reads plainly. */
static int any(void)
{
	int k = (int)rnd(nslot), i;
	for (i = 0; i < NSLOT; i++)
		if (used[i] && k-- == 0)
			break;
	return i;
}

static int add(const int fd[2])
{
	int i;
	for (i = 0; used[i]; i++)
		;
	slot[i][0] = fd[0], slot[i][1] = fd[1], used[i] = 1, nslot++;
	return i;
}

static void drop(int i) { used[i] = 0, nslot--; }

/* ---- trace and comparison ---- */

static char *cur(void) { return trace[(step + sub) % TRACE]; }

static void tr(const char *fmt, ...)
{
	va_list ap;
	int n = in_child ? snprintf(cur(), LINE, "child step %ld.%d ", step, sub)
			 : snprintf(cur(), LINE, "step %ld ", step);
	va_start(ap, fmt);
	vsnprintf(cur() + n, LINE - n, fmt, ap);
	va_end(ap);
}

static void tra(const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(cur());
	va_start(ap, fmt);
	vsnprintf(cur() + n, LINE - n, fmt, ap);
	va_end(ap);
}

static const char *ename(int e)
{
	const char *s = strerrorname_np(e);
	return s ? s : "E?";
}

struct res {
	long long r;          /* return value (-1: failed, errno in e) */
	int e;
	long long x;          /* a second value: a size, a flag word, a count */
	const unsigned char *b; /* bytes read, n of them */
	size_t n;
};

static void fmt_res(char *out, size_t len, const struct res *r)
{
	int n = r->r == -1 ? snprintf(out, len, "-1 %s", ename(r->e))
			   : snprintf(out, len, "%lld", r->r);
	if (r->x)
		snprintf(out + n, len - n, " x=%lld", r->x);
}

/* Compare the two sides' results of one call; note them in the trace.
 * Returns 1 when they agree, else sets msg. */
static int same(const struct res r[2], const char *what)
{
	char a[2][80];
	fmt_res(a[0], sizeof a[0], &r[0]);
	fmt_res(a[1], sizeof a[1], &r[1]);
	tra(" | %s dat=%s twin=%s", what, a[0], a[1]);
	if (msg[0])
		return 0;
	if (r[0].r != r[1].r || (r[0].r == -1 && r[0].e != r[1].e) || r[0].x != r[1].x) {
		snprintf(msg, sizeof msg, "%s: dat %s, twin %s", what, a[0], a[1]);
		return 0;
	}
	if (r[0].b && r[1].b) {
		size_t n = r[0].n < r[1].n ? r[0].n : r[1].n;
		for (size_t i = 0; i < n; i++)
			if (r[0].b[i] != r[1].b[i]) {
				snprintf(msg, sizeof msg,
					 "%s: data differ at byte %zu of %zu: dat 0x%02x, twin 0x%02x",
					 what, i, n, r[0].b[i], r[1].b[i]);
				tra(" DATA DIFFER at %zu", i);
				return 0;
			}
	}
	return 1;
}

/* A result and the errno the call left (read after the call returned). */
static struct res RES(long long ret) { return (struct res){.r = ret, .e = errno}; }

/* ---- drawing parameters (from the kernel's view: the twin) ---- */

static off_t twin_size(void)
{
	struct stat st;
	return stat(path[1], &st) == 0 ? st.st_size : 0;
}

static int twin_fl(int i) { return fcntl(slot[i][1], F_GETFL); }

static off_t rnd_off(void)
{
	off_t size = twin_size(), lim = size + 2 * PAGE < MAXF ? size + 2 * PAGE : MAXF;
	switch (rnd(8)) {
	case 0: return size;
	case 1: return rnd(lim / PAGE + 1) * PAGE;
	default: return rnd(lim + 1);
	}
}

static size_t rnd_len(void)
{
	switch (rnd(10)) {
	case 0: return 0;
	case 1: case 2: case 3: return 1 + rnd(64);
	default: return rnd(3 * PAGE + 1);
	}
}

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(rnd64() | 1); /* never 0: a hole reads differently */
}

static int cut_iov(struct iovec *iov, unsigned char *base, size_t n)
{
	int k = 1 + (int)rnd(4);
	size_t at = 0;
	for (int j = 0; j < k; j++) {
		size_t len = j == k - 1 ? n - at : (size_t)rnd(n - at + 1);
		iov[j] = (struct iovec){base + at, len};
		at += len;
	}
	return k;
}

static const char *flstr(int fl)
{
	static char s[128];
	int acc = fl & O_ACCMODE;
	snprintf(s, sizeof s, "%s%s%s%s%s%s", acc == O_RDONLY ? "RDONLY" : acc == O_WRONLY ? "WRONLY" : "RDWR",
		 fl & O_CREAT ? "|CREAT" : "", fl & O_TRUNC ? "|TRUNC" : "",
		 fl & O_APPEND ? "|APPEND" : "",
		 (fl & O_SYNC) == O_SYNC ? "|SYNC" : fl & O_DSYNC ? "|DSYNC" : "",
		 fl & O_CLOEXEC ? "|CLOEXEC" : "");
	return s;
}

/* ---- the operations ---- */

static void op_close(void);
static void op_dup(void);

static void op_open(int first)
{
	static const int accs[3] = {O_RDONLY, O_WRONLY, O_RDWR};
	int fl = O_RDWR | O_CREAT, fd[2];
	struct res r[2];
	if (nslot >= NSLOT)
		return op_close();
	if (!first) {
		fl = accs[rnd(3)] | (rnd(4) ? O_CREAT : 0);
		if (!rnd(5)) fl |= O_APPEND;
		if ((fl & O_ACCMODE) != O_RDONLY && !rnd(12)) fl |= O_TRUNC;
		if (!rnd(20)) fl |= rnd(2) ? O_SYNC : O_DSYNC;
		if (!rnd(8)) fl |= O_CLOEXEC;
	}
	tr("open %s", flstr(fl));
	for (int s = 0; s < 2; s++) {
		errno = 0;
		fd[s] = open(path[s], fl, 0644);
		r[s] = RES(fd[s] < 0 ? -1 : 0);
	}
	if (same(r, "open") && fd[0] >= 0) {
		tra(" -> slot %d", add(fd));
	} else {
		for (int s = 0; s < 2; s++)
			if (fd[s] >= 0)
				close(fd[s]);
	}
}


static void op_close(void)
{
	struct res r[2];
	int i;
	if (nslot <= 1) /* keep one open: a new one instead, by -o's kinds */
		return kmask >> K_OPEN & 1 || !(kmask >> K_DUP & 1) ? op_open(0) : op_dup();
	i = any();
	tr("close slot %d", i);
	for (int s = 0; s < 2; s++)
		errno = 0, r[s] = RES(close(slot[i][s]));
	same(r, "close");
	drop(i);
}

static void op_dup(void)
{
	struct res r[2];
	int i = any(), fd[2];
	if (nslot >= NSLOT)
		return op_close();
	tr("dup slot %d", i);
	for (int s = 0; s < 2; s++)
		errno = 0, fd[s] = dup(slot[i][s]), r[s] = RES(fd[s] < 0 ? -1 : 0);
	if (same(r, "dup") && fd[0] >= 0) {
		tra(" -> slot %d", add(fd));
	}
}

static void op_dup2(void)
{
	struct res r[2];
	int a = any(), b = any(), three = (int)rnd(2);
	int cloexec = three && rnd(2) ? O_CLOEXEC : 0;
	tr("%s slot %d onto slot %d%s", three ? "dup3" : "dup2", a, b, cloexec ? " CLOEXEC" : "");
	for (int s = 0; s < 2; s++) {
		errno = 0;
		int ret = three ? dup3(slot[a][s], slot[b][s], cloexec) : dup2(slot[a][s], slot[b][s]);
		r[s] = RES(ret == slot[b][s] ? 0 : ret < 0 ? -1 : 1);
	}
	same(r, three ? "dup3" : "dup2");
}

static void op_write(void)
{
	static const char *const how[4] = {"write", "pwrite", "writev", "pwritev"};
	struct iovec iov[4], *vec = iov;
	struct res r[2];
	int i = any(), h = (int)rnd(4), k;
	off_t off = rnd_off();
	size_t n = rnd_len();
	void *buf = wbuf;
	char bad[80];
	fill(wbuf, n);
	k = cut_iov(iov, wbuf, n);
	spoil(&buf, iov, &vec, k, n, 1, bad, sizeof bad);
	if (h & 1)
		tr("%s slot %d off=%lld n=%zu iov=%d%s", how[h], i, (long long)off, n, k, bad);
	else
		tr("%s slot %d n=%zu iov=%d%s", how[h], i, n, k, bad);
	for (int s = 0; s < 2; s++) {
		int fd = slot[i][s];
		errno = 0;
		switch (h) {
		case 0: r[s] = RES(write(fd, buf, n)); break;
		case 1: r[s] = RES(pwrite(fd, buf, n, off)); break;
		case 2: r[s] = RES(writev(fd, vec, k)); break;
		default: r[s] = RES(pwritev(fd, vec, k, off)); break;
		}
	}
	same(r, how[h]);
}

static void op_read(void)
{
	static const char *const how[4] = {"read", "pread", "readv", "preadv"};
	struct iovec iov[2][4], *vec[2];
	struct res r[2];
	int i = any(), h = (int)rnd(4), k = 0, spoilt = 0;
	off_t off = rnd_off();
	size_t n = rnd_len();
	uint64_t save = rs;
	void *buf[2];
	char bad[80];
	for (int s = 0; s < 2; s++) { /* the same cuts, and the same bad buffers, on both sides */
		rs = save;
		k = cut_iov(iov[s], rbuf[s], n);
		memset(rbuf[s], 0xee, n);
		buf[s] = rbuf[s], vec[s] = iov[s];
		spoilt = spoil(&buf[s], iov[s], &vec[s], k, n, 0, bad, sizeof bad);
	}
	if (h & 1)
		tr("%s slot %d off=%lld n=%zu iov=%d%s", how[h], i, (long long)off, n, k, bad);
	else
		tr("%s slot %d n=%zu iov=%d%s", how[h], i, n, k, bad);
	for (int s = 0; s < 2; s++) {
		int fd = slot[i][s];
		errno = 0;
		switch (h) {
		case 0: r[s] = RES(read(fd, buf[s], n)); break;
		case 1: r[s] = RES(pread(fd, buf[s], n, off)); break;
		case 2: r[s] = RES(readv(fd, vec[s], k)); break;
		default: r[s] = RES(preadv(fd, vec[s], k, off)); break;
		}
		/* the bytes only when every buffer was good */
		r[s].b = rbuf[s], r[s].n = r[s].r > 0 && !spoilt ? (size_t)r[s].r : 0;
	}
	same(r, how[h]);
}

static void op_seek(int hole)
{
	static const char *const wn[5] = {"SET", "CUR", "END", "DATA", "HOLE"};
	struct res r[2];
	int i = any(), w;
	off_t size = twin_size(), off;
	if (hole) {
		w = rnd(2) ? SEEK_DATA : SEEK_HOLE;
		off = rnd(size + PAGE + 1);
	} else {
		w = (int)rnd(3);
		off = w == SEEK_SET ? (rnd(20) ? rnd_off() : -1)
		    : w == SEEK_CUR ? rnd(4 * PAGE + 1) - 2 * PAGE
				    : rnd(size + 3 * PAGE + 1) - size - PAGE;
	}
	tr("lseek slot %d %lld SEEK_%s", i, (long long)off, wn[w]);
	for (int s = 0; s < 2; s++)
		errno = 0, r[s] = RES(lseek(slot[i][s], off, w));
	same(r, "lseek");
}

static void op_trunc(void)
{
	struct res r[2];
	int i = any(), bypath = (int)rnd(2);
	off_t size = twin_size(), len;
	switch (rnd(6)) {
	case 0: len = 0; break;
	case 1: len = rnd(20) ? rnd(MAXF / PAGE) * PAGE : -1; break;
	case 2: len = size + rnd(2 * PAGE) ; break;
	default: len = rnd(size + 1); break;
	}
	if (bypath)
		tr("truncate path %lld", (long long)len);
	else
		tr("ftruncate slot %d %lld", i, (long long)len);
	for (int s = 0; s < 2; s++)
		errno = 0, r[s] = RES(bypath ? truncate(path[s], len) : ftruncate(slot[i][s], len));
	same(r, bypath ? "truncate" : "ftruncate");
}

static void op_stat(void)
{
	static const char *const how[6] = {"fstat", "stat", "lstat", "fstatat", "statx path",
					   "statx fd"};
	struct res r[2];
	int i = any(), h = (int)rnd(6);
	tr("%s slot %d", how[h], i);
	for (int s = 0; s < 2; s++) {
		struct stat st = {0};
		struct statx sx = {0};
		int ret;
		errno = 0;
		switch (h) {
		case 0: ret = fstat(slot[i][s], &st); break;
		case 1: ret = stat(path[s], &st); break;
		case 2: ret = lstat(path[s], &st); break;
		case 3: ret = fstatat(AT_FDCWD, path[s], &st, 0); break;
		case 4: ret = statx(AT_FDCWD, path[s], 0, STATX_SIZE, &sx); break;
		default: ret = statx(slot[i][s], "", AT_EMPTY_PATH, STATX_SIZE, &sx); break;
		}
		r[s] = RES(ret);
		r[s].x = h >= 4 ? (long long)sx.stx_size : (long long)st.st_size;
	}
	same(r, how[h]);
}

static void op_sync(void)
{
	struct res r[2];
	int i = any(), data = (int)rnd(2);
	tr("%s slot %d", data ? "fdatasync" : "fsync", i);
	for (int s = 0; s < 2; s++)
		errno = 0, r[s] = RES(data ? fdatasync(slot[i][s]) : fsync(slot[i][s]));
	same(r, data ? "fdatasync" : "fsync");
}

static void op_fcntl(void)
{
	struct res r[2];
	int i = any(), set = (int)rnd(2), app = (int)rnd(2);
	if (!set) {
		tr("fcntl slot %d F_GETFL", i);
		for (int s = 0; s < 2; s++)
			errno = 0, r[s] = RES(fcntl(slot[i][s], F_GETFL));
		same(r, "F_GETFL");
		return;
	}
	tr("fcntl slot %d F_SETFL %s O_APPEND", i, app ? "set" : "clear");
	for (int s = 0; s < 2; s++) { /* as a program would: its own F_GETFL, one bit changed */
		int fl = fcntl(slot[i][s], F_GETFL);
		errno = 0;
		r[s] = RES(fcntl(slot[i][s], F_SETFL, app ? fl | O_APPEND : fl & ~O_APPEND));
	}
	same(r, "F_SETFL");
}

static void set_paths(void)
{
	snprintf(path[0], sizeof path[0], "%s/s%llu-%d.dat", dir, seed, gen);
	snprintf(path[1], sizeof path[1], "%s/s%llu-%d.twin", dir, seed, gen);
}

static void op_rename(void)
{
	char old[2][PATH_MAX];
	struct res r[2];
	memcpy(old, path, sizeof old);
	gen++;
	set_paths();
	tr("rename to generation %d", gen);
	for (int s = 0; s < 2; s++)
		errno = 0, r[s] = RES(rename(old[s], path[s]));
	if (!same(r, "rename") || r[1].r != 0)
		memcpy(path, old, sizeof old);
}

static sigjmp_buf bus_jmp;
static void on_bus(int sig) { siglongjmp(bus_jmp, sig); }

static void op_mmap(void)
{
	struct res r[2];
	int i = any();
	off_t size = twin_size(), off;
	size_t len;
	if (size == 0) {
		tr("mmap: skipped, file empty");
		return;
	}
	off = rnd(size) / PAGE * PAGE;
	len = 1 + rnd(size - off < 3 * PAGE ? size - off : 3 * PAGE);
	tr("mmap MAP_SHARED slot %d off=%lld len=%zu", i, (long long)off, len);
	for (int s = 0; s < 2; s++) {
		errno = 0;
		void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, slot[i][s], off);
		r[s] = RES(p == MAP_FAILED ? -1 : (long long)len);
		if (p == MAP_FAILED)
			continue;
		if (sigsetjmp(bus_jmp, 1) == 0)
			memcpy(rbuf[s], p, len);
		else
			r[s].r = -2, tra(" SIGBUS on %s", s ? "twin" : "dat");
		munmap(p, len);
		r[s].b = rbuf[s], r[s].n = r[s].r > 0 ? len : 0;
	}
	same(r, "mmap+read");
}

static void op_closerange(void)
{
	struct res r[2];
	int i = any();
	if (nslot > 1 && rnd(2)) { /* close one slot with close_range */
		tr("close_range(fd, fd) slot %d", i);
		for (int s = 0; s < 2; s++)
			errno = 0, r[s] = RES(close_range(slot[i][s], slot[i][s], 0));
		same(r, "close_range");
		drop(i);
		return;
	}
	unsigned first = 64 + (unsigned)rnd(900);
	int from = (int)rnd(2);
	tr("%s %u (once, for both files)", from ? "closefrom" : "close_range ~0", first);
	errno = 0;
	if (from)
		closefrom((int)first), r[0] = r[1] = RES(0);
	else
		r[0] = r[1] = RES(close_range(first, ~0u, 0));
	same(r, "close_range");
}

static void op_stdio(void)
{
	struct res r[2];
	int i = any(), fl = twin_fl(i), acc = fl & O_ACCMODE;
	int wr = acc == O_WRONLY || (acc == O_RDWR && rnd(2));
	const char *mode = acc == O_RDONLY ? "r" : acc == O_WRONLY ? (fl & O_APPEND ? "a" : "w")
					   : fl & O_APPEND ? "a+" : "r+";
	size_t n = rnd_len();
	fill(wbuf, n);
	tr("fdopen(dup(slot %d), \"%s\") %s %zu bytes, fclose", i, mode, wr ? "fwrite" : "fread", n);
	for (int s = 0; s < 2; s++) {
		int d = dup(slot[i][s]);
		FILE *f = d < 0 ? NULL : fdopen(d, mode);
		errno = 0;
		if (!f) {
			r[s] = RES(-1);
			if (d >= 0)
				close(d);
			continue;
		}
		if (wr) {
			size_t w = fwrite(wbuf, 1, n / 2, f) + fwrite(wbuf + n / 2, 1, n - n / 2, f);
			r[s] = RES((long long)w);
		} else {
			size_t got = fread(rbuf[s], 1, n, f);
			r[s] = RES((long long)got);
			r[s].b = rbuf[s], r[s].n = got;
		}
		r[s].x = fclose(f) == 0 ? 1 : 2;
	}
	same(r, wr ? "fwrite+fclose" : "fread+fclose");
}

/* Run argv with stdout and stderr into a pipe; the output in *out.  Returns
 * the exit status, 128+signal, or -1 with errno set (posix_spawnp's error). */
/* Everything fd (-1: none) gives until its end, in a buffer grown as needed. */
static unsigned char *read_all(int fd, size_t *len)
{
	unsigned char *b = NULL;
	size_t cap = 0;
	*len = 0;
	for (ssize_t k = 1; fd >= 0 && k > 0; *len += k > 0 ? (size_t)k : 0) {
		if (*len + 65536 > cap && !(b = realloc(b, cap = 2 * cap + 65536)))
			abort();
		k = read(fd, b + *len, cap - *len);
	}
	return b;
}

static int spawn_capture(char *const argv[], char **envp, unsigned char **out, size_t *len)
{
	posix_spawn_file_actions_t fa;
	int p[2], st;
	pid_t pid;
	*out = NULL, *len = 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	*out = read_all(err ? -1 : p[0], len);
	close(p[0]);
	if (err)
		return errno = err, -1;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* cat(1) with ffio or without (plain), or (plain, one in two) a process
 * without ffio that writes a few bytes: seen once it has ended. */
static void op_spawn(int plain)
{
	struct res r[2];
	unsigned char *out[2];
	char bytes[49] = "", at[24];
	int poke = plain && rnd(2);
	for (size_t j = 0, n = poke ? 1 + (size_t)rnd(48) : 0; j < n; j++)
		bytes[j] = (char)('a' + rnd(26));
	snprintf(at, sizeof at, "%lld", (long long)rnd(MAXF));
	tr(poke ? "a process without ffio writes [%s] at %s" : "cat the path, %s",
	   poke ? bytes : plain ? "without ffio (no LD_PRELOAD)" : "environment inherited", at);
	for (int s = 0; s < 2; s++) {
		char *cat[] = {"cat", path[s], NULL}, *dd[] = {"sh", "-c",
			"printf %s \"$1\" | dd of=\"$2\" bs=1 seek=\"$3\" conv=notrunc status=none",
			"sh", bytes, path[s], at, NULL};
		size_t len;
		errno = 0;
		r[s] = RES(spawn_capture(poke ? dd : cat, plain ? env_plain : environ, &out[s], &len));
		r[s].x = (long long)len, r[s].b = out[s], r[s].n = len;
	}
	int ok = same(r, "status, x=bytes out");
	for (int s = 0; ok && s < 2 && !msg[0]; s++)
		if (r[s].r == -1) /* the kernel alone runs it */
			snprintf(msg, sizeof msg, "posix_spawnp for the %s failed: %s",
				 s ? "twin" : "dat", ename(r[s].e));
	for (int s = 0; !ok && s < 2; s++)
		if (r[s].r > 0) { /* the command failed: its message ends the output */
			size_t n = r[s].n < 160 ? r[s].n : 160, m = strlen(msg);
			char tail[161] = "";
			for (const unsigned char *c = out[s] + r[s].n - n; n > 0; n--, c++)
				tail[strlen(tail)] = *c >= ' ' && *c < 127 ? (char)*c : '.';
			snprintf(msg + m, sizeof msg - m, "; %s's output ends \"%s\"", s ? "twin" : "dat", tail);
		}
	free(out[0]), free(out[1]);
}

struct job {
	int fd;
	off_t off;
	size_t n;
	const unsigned char *src;
	unsigned char *dst;
	ssize_t w, r;
	int we, re;
};

static void *job_run(void *arg)
{
	struct job *j = arg;
	errno = 0, j->w = pwrite(j->fd, j->src, j->n, j->off), j->we = errno;
	errno = 0, j->r = pread(j->fd, j->dst, j->n, j->off), j->re = errno;
	return NULL;
}

static void op_thread(void)
{
	struct res r[2];
	int i;
	for (i = 0; i < NSLOT; i++) { /* O_APPEND would order the pwrites by the race */
		int fl = used[i] ? twin_fl(i) : 0;
		if (used[i] && (fl & O_ACCMODE) == O_RDWR && !(fl & O_APPEND))
			break;
	}
	if (i == NSLOT) {
		tr("threads: skipped, no O_RDWR slot without O_APPEND");
		return;
	}
	off_t o1 = rnd_off();
	size_t n1 = 1 + rnd(2 * PAGE), n2 = 1 + rnd(2 * PAGE);
	off_t o2 = o1 + (off_t)n1 + rnd(PAGE);
	fill(wbuf, n1 + n2);
	tr("2 threads pwrite+pread slot %d: %lld+%zu and %lld+%zu", i, (long long)o1, n1,
	   (long long)o2, n2);
	struct res w[2];
	for (int s = 0; s < 2; s++) {
		struct job j[2] = {{slot[i][s], o1, n1, wbuf, rbuf[s], 0, 0, 0, 0},
				   {slot[i][s], o2, n2, wbuf + n1, rbuf[s] + n1, 0, 0, 0, 0}};
		pthread_t t[2];
		int started[2];
		memset(rbuf[s], 0xee, n1 + n2);
		for (int k = 0; k < 2; k++)
			started[k] = pthread_create(&t[k], NULL, job_run, &j[k]) == 0;
		for (int k = 0; k < 2; k++)
			if (started[k])
				pthread_join(t[k], NULL);
			else
				job_run(&j[k]);
		w[s] = (struct res){.r = j[0].w, .e = j[0].we, .x = j[1].w + (j[1].w < 0 ? -j[1].we : 0)};
		r[s] = (struct res){.r = j[0].r, .e = j[0].re, .x = j[1].r + (j[1].r < 0 ? -j[1].re : 0)};
		r[s].b = rbuf[s], r[s].n = n1 + n2;
	}
	if (same(w, "thread pwrites (x=2nd)"))
		same(r, "thread preads (x=2nd)");
}

/* ---- one step, the forked child, a seed ---- */

static void op_fork(void);

static void do_op(int k)
{
	switch (k) {
	case K_OPEN: op_open(0); break;
	case K_CLOSE: op_close(); break;
	case K_DUP: op_dup(); break;
	case K_DUP2: op_dup2(); break;
	case K_WRITE: op_write(); break;
	case K_READ: op_read(); break;
	case K_SEEK: op_seek(0); break;
	case K_HOLE: op_seek(1); break;
	case K_TRUNC: op_trunc(); break;
	case K_STAT: op_stat(); break;
	case K_SYNC: op_sync(); break;
	case K_FCNTL: op_fcntl(); break;
	case K_RENAME: op_rename(); break;
	case K_FORK: op_fork(); break;
	case K_MMAP: op_mmap(); break;
	case K_CLOSERANGE: op_closerange(); break;
	case K_STDIO: op_stdio(); break;
	case K_SPAWN: op_spawn(0); break;
	case K_PEER: op_spawn(1); break;
	default: op_thread(); break;
	}
}

static int pick(unsigned mask)
{
	int sum = 0, k;
	for (k = 0; k < NKIND; k++)
		sum += mask >> k & 1 ? kweight[k] : 0;
	if (!sum)
		return K_READ;
	long long x = rnd(sum);
	for (k = 0; k < NKIND; k++)
		if (mask >> k & 1 && (x -= kweight[k]) < 0)
			break;
	return k;
}

static void show(void) { if (verbose) fprintf(stderr, "# %s\n", cur()); }

/* A child through the inherited descriptors: a few steps of the kinds that
 * leave the descriptor table alone, compared there too; a difference comes
 * back through the pipe and the exit status. */
static void op_fork(void)
{
	const unsigned kids = 1u << K_WRITE | 1u << K_READ | 1u << K_SEEK | 1u << K_STAT |
			      1u << K_TRUNC | 1u << K_SYNC;
	uint64_t cseed = rnd64();
	int nops = 1 + (int)rnd(4), p[2], st;
	char out[sizeof msg];
	size_t len = 0;
	tr("fork: child does %d steps (seed %#llx), _exit", nops, (unsigned long long)cseed);
	fflush(NULL);
	if (pipe(p) < 0) {
		snprintf(msg, sizeof msg, "pipe: %s", strerror(errno));
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		in_child = 1, rs = cseed;
		while (sub < nops && !msg[0]) {
			sub++;
			do_op(pick(kmask & kids ? kmask & kids : kids));
			show();
		}
		if (msg[0]) {
			dprintf(p[1], "in the forked child: %s", msg);
			for (int j = 1; j <= sub; j++)
				dprintf(p[1], "\n#   %s", trace[(step + j) % TRACE]);
		}
		_exit(msg[0] ? 1 : 0);
	}
	close(p[1]);
	for (ssize_t k = 1; k > 0 && len < sizeof out - 1; len += k > 0 ? (size_t)k : 0)
		k = read(p[0], out + len, sizeof out - 1 - len);
	out[len] = 0;
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) < 0) {
		snprintf(msg, sizeof msg, "fork/waitpid: %s", strerror(errno));
		return;
	}
	tra(" | child exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		snprintf(msg, sizeof msg, "%s", len ? out : "forked child died");
}

static unsigned char *slurp(const char *p, size_t *len)
{
	int fd = open(p, O_RDONLY);
	unsigned char *b = read_all(fd, len);
	if (fd >= 0)
		close(fd);
	return b;
}

/* All closed: the contents, read here (through ffio for the .dat) and by
 * cmp(1) run without ffio. */
static void final_check(void)
{
	struct res r[2];
	unsigned char *b[2], *out;
	size_t len[2], olen;
	tr("final: read both files back, then cmp without ffio");
	for (int s = 0; s < 2; s++) {
		struct stat st = {0};
		errno = 0;
		r[s] = RES(stat(path[s], &st));
		r[s].x = st.st_size;
	}
	if (!same(r, "final stat"))
		return;
	for (int s = 0; s < 2; s++) {
		b[s] = slurp(path[s], &len[s]);
		r[s] = (struct res){.r = (long long)len[s], .b = b[s], .n = len[s]};
	}
	int ok = same(r, "final contents read back");
	free(b[0]), free(b[1]);
	if (!ok)
		return;
	char *argv[] = {"cmp", path[0], path[1], NULL};
	errno = 0;
	int st = spawn_capture(argv, env_plain, &out, &olen);
	tra(" | cmp exit %d", st);
	if (st == -1 && errno != ENOENT) /* ENOENT, 127: no cmp here */
		snprintf(msg, sizeof msg, "cmp could not run: %s", ename(errno));
	else if (st != 0 && st != 127 && st != -1)
		snprintf(msg, sizeof msg, "final contents differ for a process without ffio: %.*s",
			 (int)(olen > 300 ? 300 : olen), out ? (char *)out : "");
	free(out);
}

static int run_seed(unsigned long long sd, long steps)
{
	seed = sd, rs = sd * 0x2545f4914f6cdd1dULL + 1, gen = 0, nslot = 0, msg[0] = 0;
	memset(trace, 0, sizeof trace);
	set_paths();
	unlink(path[0]), unlink(path[1]);
	step = 0;
	op_open(1);
	show();
	while (step < steps && !msg[0]) {
		step++;
		do_op(pick(kmask));
		show();
	}
	for (int i = NSLOT - 1; !msg[0] && i >= 0; i--) {
		struct res r[2];
		if (!used[i])
			continue;
		step++;
		tr("close slot %d (end)", i);
		for (int s = 0; s < 2; s++)
			errno = 0, r[s] = RES(close(slot[i][s]));
		same(r, "close");
		drop(i);
		show();
	}
	if (!msg[0])
		step++, final_check(), show();
	for (int i = 0; i < NSLOT; i++) /* after a difference */
		if (used[i])
			close(slot[i][0]), close(slot[i][1]), drop(i);
	if (!tap_ok(!msg[0], "seed %llu: %ld steps%s", sd, steps,
		    msg[0] ? "" : ", every result and the final contents agree")) {
		tap_diag("seed %llu, step %ld: %s", sd, step, msg);
		tap_diag("last steps:");
		long from = step - TRACE + 1 < 0 ? 0 : step - TRACE + 1;
		for (long j = from; j <= step; j++)
			if (trace[j % TRACE][0])
				tap_diag("  %s", trace[j % TRACE]);
	}
	unlink(path[0]), unlink(path[1]);
	return !msg[0];
}

static unsigned parse_kinds(const char *list)
{
	unsigned m = 0;
	char *copy = strdup(list), *save = NULL;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int k;
		if (strcmp(w, "all") == 0) {
			m = (1u << NKIND) - 1;
			continue;
		}
		for (k = 0; k < NKIND && strcmp(w, kname[k]) != 0; k++)
			;
		if (k == NKIND) {
			fprintf(stderr, "diff_kernel: unknown kind '%s'; kinds:", w);
			for (k = 0; k < NKIND; k++)
				fprintf(stderr, " %s", kname[k]);
			fprintf(stderr, "\n");
			exit(2);
		}
		m |= 1u << k;
	}
	free(copy);
	return m;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long s0 = 1;
	long nseeds = -1, steps = 300, secs = 0;
	int c, given = 0, ne = 0;
	while ((c = getopt(argc, argv, "s:n:k:t:o:v")) != -1)
		switch (c) {
		case 's': s0 = strtoull(optarg, NULL, 0), given = 1; break;
		case 'n': nseeds = atol(optarg), given = 1; break;
		case 'k': steps = atol(optarg); break;
		case 't': secs = atol(optarg), given = 1; break;
		case 'o': kmask = parse_kinds(optarg); break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: diff_kernel [-s SEED] [-n SEEDS] [-k STEPS] "
					"[-t SECONDS] [-o KIND,...] [-v]\n");
			return 2;
		}
	for (char **e = environ; *e; e++)
		ne++;
	env_plain = calloc(ne + 1, sizeof *env_plain);
	ne = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
			env_plain[ne++] = *e;
	struct sigaction sa = {.sa_handler = on_bus};
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/ffio-diff-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP mkdtemp %s: %s\n", dir, strerror(errno));
		return 0;
	}
	const char *opts = getenv("FF_IO_OPTS"), *pre = getenv("LD_PRELOAD");
	tap_diag("FF_IO_OPTS='%s' LD_PRELOAD=%s, %ld steps a seed, in %s", opts ? opts : "",
		 pre && *pre ? pre : "(none)", steps, dir);
	if (!given) {
		for (unsigned long long sd = 1; sd <= 16; sd++) /* the fixed seeds */
			run_seed(sd, steps);
	} else {
		double end = now() + (double)secs;
		if (nseeds < 0)
			nseeds = secs ? LONG_MAX : 1;
		for (long i = 0; i < nseeds && (!secs || now() < end); i++)
			run_seed(s0 + (unsigned long long)i, steps);
	}
	rmdir(dir);
	return tap_done();
}
