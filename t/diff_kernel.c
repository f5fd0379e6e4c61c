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
 *   fork mmap closerange stdio spawn peer thread rdonly rawfd
 * "fork" runs a few read/write/seek/stat/trunc steps in a forked child
 * through the inherited descriptors (the child compares too and reports
 * through a pipe); "spawn" runs cat(1) on both paths with the environment
 * inherited (ffio in it too), "peer" the same without LD_PRELOAD (a process
 * with no ffio), or one in two a shell without ffio that writes a few bytes
 * into both files (its end seen, the next reads show them); "thread" runs two threads doing pwrite+pread on distinct
 * ranges; "hole" is lseek SEEK_DATA/SEEK_HOLE; "rdonly" closes every
 * descriptor, opens the file read only, reads it, makes one call by path
 * (truncate, an open that writes, O_TRUNC, utimensat, a file renamed over
 * it, unlink and a new one, a hard link written through, fopen, a child
 * that writes it) and reads again through the reader; "rawfd" closes, dups,
 * reads, writes and cuts with syscall(2) (a closed number then gives
 * EBADF).  1 read or write in 25 has a buffer the kernel refuses
 * (t/bad_buf.h).
 *
 * Usage: diff_kernel [-s SEED] [-n SEEDS] [-k STEPS] [-t SECONDS] [-o KIND,...] [-v]
 * Without -s/-n/-t: a fixed list of seeds (make check).  -t runs seeds from
 * SEED on until SECONDS have passed (soak).  -v prints every step.
 * Run it without any preload and it must pass every seed: that checks the
 * harness itself.
 *
 * This file is the harness (one seed's state, the trace, the comparison,
 * parameters, the forked child, the seeds); t/diff_kernel_ops.c holds the
 * operations, t/diff_kernel.h what the two share. */
#include "diff_kernel.h"
#include "tap.h"

uint64_t rs; /* rng.h's generator, shared with t/diff_kernel_ops.c */

static const char *const kname[NKIND] = {
	"open", "close", "dup", "dup2", "write", "read", "seek", "hole", "trunc",
	"stat", "sync", "fcntl", "rename", "fork", "mmap", "closerange", "stdio",
	"spawn", "peer", "thread", "rdonly", "rawfd"};
static const int kweight[NKIND] = {6, 4, 3, 2, 22, 16, 6, 2, 3, 6, 2, 3, 1, 2, 2, 1, 2, 1, 1, 1, 2, 2};
unsigned kmask = (1u << NKIND) - 1;

/* One seed's state (and rng.h's rs).  Side 0 is the managed file, side 1
 * its twin. */
char dir[PATH_MAX / 2], path[2][PATH_MAX];
unsigned long long seed;
int gen;
int slot[NSLOT][2], used[NSLOT], nslot; /* slot[i][side]: one open, both files */
char trace[TRACE][LINE];
long step;
int sub; /* a forked child's steps: step.sub */
char msg[8192]; /* the first difference, empty while all agree */
int verbose, in_child;
unsigned char wbuf[4 * PAGE + 64], rbuf[2][4 * PAGE + 64];
char **env_plain; /* environ without LD_PRELOAD */

/* Slots keep their numbers while open, so that a trace reads plainly. */
int any(void)
{
	int k = (int)rnd(nslot), i;
	for (i = 0; i < NSLOT; i++)
		if (used[i] && k-- == 0)
			break;
	return i;
}

int add(const int fd[2])
{
	int i;
	for (i = 0; used[i]; i++)
		;
	slot[i][0] = fd[0], slot[i][1] = fd[1], used[i] = 1, nslot++;
	return i;
}

void drop(int i) { used[i] = 0, nslot--; }

/* ---- trace and comparison ---- */

static char *cur(void) { return trace[(step + sub) % TRACE]; }

void tr(const char *fmt, ...)
{
	va_list ap;
	int n = in_child ? snprintf(cur(), LINE, "child step %ld.%d ", step, sub)
			 : snprintf(cur(), LINE, "step %ld ", step);
	va_start(ap, fmt);
	vsnprintf(cur() + n, LINE - n, fmt, ap);
	va_end(ap);
}

void tra(const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(cur());
	va_start(ap, fmt);
	vsnprintf(cur() + n, LINE - n, fmt, ap);
	va_end(ap);
}

const char *ename(int e)
{
	const char *s = strerrorname_np(e);
	return s ? s : "E?";
}

static void fmt_res(char *out, size_t len, const struct res *r)
{
	int n = r->r == -1 ? snprintf(out, len, "-1 %s", ename(r->e))
			   : snprintf(out, len, "%lld", r->r);
	if (r->x)
		snprintf(out + n, len - n, " x=%lld", r->x);
}

/* Compare the two sides' results of one call; note them in the trace.
 * Returns 1 when they agree, else sets msg. */
int same(const struct res r[2], const char *what)
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

/* ---- drawing parameters (from the kernel's view: the twin) ---- */

off_t twin_size(void)
{
	struct stat st;
	return stat(path[1], &st) == 0 ? st.st_size : 0;
}

int twin_fl(int i) { return fcntl(slot[i][1], F_GETFL); }

off_t rnd_off(void)
{
	off_t size = twin_size(), lim = size + 2 * PAGE < MAXF ? size + 2 * PAGE : MAXF;
	switch (rnd(8)) {
	case 0: return size;
	case 1: return rnd(lim / PAGE + 1) * PAGE;
	default: return rnd(lim + 1);
	}
}

size_t rnd_len(void)
{
	switch (rnd(10)) {
	case 0: return 0;
	case 1: case 2: case 3: return 1 + rnd(64);
	default: return rnd(3 * PAGE + 1);
	}
}

void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(rnd64() | 1); /* never 0: a hole reads differently */
}

int cut_iov(struct iovec *iov, unsigned char *base, size_t n)
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

const char *flstr(int fl)
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
	case K_THREAD: op_thread(); break;
	case K_RDONLY: op_rdonly(); break;
	default: op_rawfd(); break;
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
