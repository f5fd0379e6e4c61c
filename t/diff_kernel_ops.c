/* t/diff_kernel_ops.c -- the operations of the differential test
 * (t/diff_kernel.c): each draws its parameters, applies one call (or a
 * few) with them to the managed file and to its twin, and compares the two
 * results with same(). */
#include "diff_kernel.h"

void op_open(int first)
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

void op_close(void)
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

void op_dup(void)
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

void op_dup2(void)
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

void op_write(void)
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

void op_read(void)
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

void op_seek(int hole)
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

void op_trunc(void)
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

void op_stat(void)
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

void op_sync(void)
{
	struct res r[2];
	int i = any(), data = (int)rnd(2);
	tr("%s slot %d", data ? "fdatasync" : "fsync", i);
	for (int s = 0; s < 2; s++)
		errno = 0, r[s] = RES(data ? fdatasync(slot[i][s]) : fsync(slot[i][s]));
	same(r, data ? "fdatasync" : "fsync");
}

void op_fcntl(void)
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

void set_paths(void)
{
	snprintf(path[0], sizeof path[0], "%s/s%llu-%d.dat", dir, seed, gen);
	snprintf(path[1], sizeof path[1], "%s/s%llu-%d.twin", dir, seed, gen);
}

void op_rename(void)
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

sigjmp_buf bus_jmp;
void on_bus(int sig) { siglongjmp(bus_jmp, sig); }

void op_mmap(void)
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

void op_closerange(void)
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

void op_stdio(void)
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
unsigned char *read_all(int fd, size_t *len)
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

int spawn_capture(char *const argv[], char **envp, unsigned char **out, size_t *len)
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
void op_spawn(int plain)
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

void op_thread(void)
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

/* ---- the file held only for reading, then a call by path ---- */

/* Bytes [off, off+n) and the size, through slot i (a read-only one), and
 * the size by path: what the call by path left for the reader. */
static void reread(int i, off_t off, size_t n, const char *what)
{
	struct res r[2];
	for (int s = 0; s < 2; s++) {
		struct stat st = {0}, sp = {0};
		errno = 0;
		r[s] = RES(pread(slot[i][s], rbuf[s], n, off));
		r[s].b = rbuf[s], r[s].n = r[s].r > 0 ? (size_t)r[s].r : 0;
		if (fstat(slot[i][s], &st) < 0 || stat(path[s], &sp) < 0)
			st.st_size = sp.st_size = -1;
		r[s].x = (long long)st.st_size * (MAXF * 4) + sp.st_size; /* both sizes */
	}
	same(r, what);
}

/* A new file of n drawn bytes (the same on both sides) at p[side]. */
static void make_file(char *const p[2], size_t n, struct res r[2])
{
	fill(wbuf, n);
	for (int s = 0; s < 2; s++) {
		errno = 0;
		int fd = open(p[s], O_CREAT | O_TRUNC | O_WRONLY, 0644);
		r[s] = RES(fd < 0 ? -1 : write(fd, wbuf, n));
		if (fd >= 0 && close(fd) < 0)
			r[s] = RES(-1);
	}
}

/* One call by path that changes or looks at the file, while this process
 * holds it open only for reading (ffio then has its clean pages, through
 * a descriptor of its own that is read only too). */
static void path_call(int h, off_t off, size_t n)
{
	static char p2[2][2 * PATH_MAX + 8];
	char *news[2] = {p2[0], p2[1]}, *olds[2] = {path[0], path[1]};
	struct res r[2];
	FILE *fp;
	int fd;
	off_t len = rnd(twin_size() + 2 * PAGE);
	switch (h) {
	case 0:
		tra(", truncate path %lld", (long long)len);
		for (int s = 0; s < 2; s++)
			errno = 0, r[s] = RES(truncate(path[s], len));
		same(r, "truncate");
		break;
	case 1: case 2: /* a writer by path: O_TRUNC, or at an offset */
		fill(wbuf, n);
		tra(", open %s, pwrite %zu at %lld, close", h == 1 ? "WRONLY|TRUNC" : "WRONLY", n, (long long)off);
		for (int s = 0; s < 2; s++) {
			errno = 0;
			fd = open(path[s], O_WRONLY | (h == 1 ? O_TRUNC : 0));
			r[s] = RES(fd < 0 ? -1 : pwrite(fd, wbuf, n, off));
			if (fd >= 0 && close(fd) < 0)
				r[s] = RES(-1);
		}
		same(r, "open, pwrite, close");
		break;
	case 3: /* times set by path */
		tra(", utimensat path, fstat the reader");
		for (int s = 0; s < 2; s++) {
			struct stat st = {0};
			errno = 0;
			r[s] = RES(utimensat(AT_FDCWD, path[s], (struct timespec[2]){{1000, 0}, {2000, 0}}, 0));
			r[s].x = stat(path[s], &st) == 0 ? st.st_mtime : -1;
		}
		same(r, "utimensat, x=mtime");
		break;
	case 4: case 5: /* another file renamed over it; it removed and made again */
		for (int s = 0; s < 2; s++)
			snprintf(p2[s], sizeof p2[s], "%s.new", path[s]);
		tra(h == 4 ? ", a new file of %zu renamed over it" : ", unlinked, made again with %zu", n);
		if (h == 5)
			for (int s = 0; s < 2; s++)
				errno = 0, r[s] = RES(unlink(path[s]));
		if (h == 4 || same(r, "unlink"))
			make_file(h == 4 ? news : olds, n, r);
		if (same(r, "new file") && h == 4) {
			for (int s = 0; s < 2; s++)
				errno = 0, r[s] = RES(rename(p2[s], path[s]));
			same(r, "rename over it");
		}
		break;
	case 6: /* a hard link, written through */
		fill(wbuf, n);
		tra(", link, pwrite %zu at %lld through the link", n, (long long)off);
		for (int s = 0; s < 2; s++) {
			snprintf(p2[s], sizeof p2[s], "%s.lnk", path[s]);
			errno = 0;
			r[s] = RES(link(path[s], p2[s]));
			if (r[s].r == 0) {
				fd = open(p2[s], O_WRONLY);
				r[s] = RES(fd < 0 ? -1 : pwrite(fd, wbuf, n, off));
				if ((fd >= 0 && close(fd) < 0) || unlink(p2[s]) < 0)
					r[s] = RES(-1);
			}
		}
		same(r, "link, pwrite, close");
		break;
	case 7: /* stdio by path */
		fill(wbuf, n);
		for (size_t j = 0; j < n; j++)
			wbuf[j] = (unsigned char)('a' + wbuf[j] % 26);
		tra(", fopen %s, fwrite %zu, fclose", off & 1 ? "r+" : "w", n);
		for (int s = 0; s < 2; s++) {
			errno = 0;
			fp = fopen(path[s], off & 1 ? "r+" : "w");
			r[s] = RES(fp ? (long long)fwrite(wbuf, 1, n, fp) : -1);
			if (fp && fclose(fp) != 0)
				r[s] = RES(-1);
		}
		same(r, "fopen, fwrite, fclose");
		break;
	default: { /* a child program writes it: with ffio or without */
		char bytes[49] = "", at[24];
		int plain = (int)rnd(2);
		for (size_t j = 0, k = 1 + (size_t)rnd(48); j < k; j++)
			bytes[j] = (char)('a' + rnd(26));
		snprintf(at, sizeof at, "%lld", (long long)off);
		tra(", a child%s writes [%s] at %s", plain ? " without ffio" : "", bytes, at);
		for (int s = 0; s < 2; s++) {
			char *dd[] = {"sh", "-c",
				"printf %s \"$1\" | dd of=\"$2\" bs=1 seek=\"$3\" conv=notrunc status=none",
				"sh", bytes, path[s], at, NULL};
			unsigned char *out;
			size_t len;
			errno = 0;
			r[s] = RES(spawn_capture(dd, plain ? env_plain : environ, &out, &len));
			r[s].x = (long long)len;
			free(out);
		}
		same(r, "status, x=bytes out");
		break;
	}
	}
}

void op_rdonly(void)
{
	struct res r[2];
	int fd[2], h = (int)rnd(9), keep = (int)rnd(2);
	off_t off = rnd_off();
	size_t n = rnd_len();
	tr("every slot closed, open RDONLY, pread %zu at %lld; then (%d)", n, (long long)off, h);
	for (int i = 0; i < NSLOT; i++)
		if (used[i]) {
			for (int s = 0; s < 2; s++)
				errno = 0, r[s] = RES(close(slot[i][s]));
			drop(i);
			if (!same(r, "close"))
				return;
		}
	for (int s = 0; s < 2; s++) {
		errno = 0;
		fd[s] = open(path[s], O_RDONLY | (rnd(2) ? O_CREAT : 0), 0644);
		r[s] = RES(fd[s] < 0 ? -1 : 0);
	}
	if (!same(r, "open") || fd[0] < 0) {
		for (int s = 0; s < 2; s++)
			if (fd[s] >= 0)
				close(fd[s]);
		return op_open(1);
	}
	int i = add(fd);
	reread(i, off, n, "pread, x=sizes");
	path_call(h, off, n);
	if (!msg[0])
		reread(i, off, n, "then pread, x=sizes");
	if (keep || msg[0])
		return;
	tra(" | reader closed, RDWR opened");
	for (int s = 0; s < 2; s++)
		errno = 0, r[s] = RES(close(slot[i][s]));
	drop(i);
	if (same(r, "close"))
		op_open(1);
}

/* ---- descriptors changed by a raw system call (syscall(2)) ---- */

/* A descriptor closed, duplicated, read, written or cut with syscall(2).
 * (An open made that way is the kernel's alone under ffio, not drawn.) */
void op_rawfd(void)
{
	static const char *const how[9] = {"close", "close_range", "dup", "dup3", "dup3 CLOEXEC",
					   "fcntl F_DUPFD", "pwrite64", "pread64", "ftruncate"};
	struct res r[2];
	int h = (int)rnd(9), i = any(), b = any(), fd[2] = {-1, -1};
	if (h <= 1 && nslot <= 1)
		h = 4;
	else if ((h == 2 || h == 5) && nslot >= NSLOT)
		h = 0;
	off_t off = rnd_off(), len = rnd(twin_size() + PAGE);
	size_t n = rnd_len();
	if (h == 6)
		fill(wbuf, n);
	tr("syscall(SYS_%s) slot %d", how[h], i);
	switch (h) {
	case 3: case 4: tra(" onto slot %d", b); break;
	case 6: case 7: tra(" %zu at %lld", n, (long long)off); break;
	case 8: tra(" %lld", (long long)len); break;
	}
	for (int s = 0; s < 2; s++) {
		int a = slot[i][s];
		long ret;
		errno = 0;
		switch (h) {
		case 0: ret = syscall(SYS_close, a); break;
		case 1: ret = syscall(SYS_close_range, a, a, 0); break;
		case 2: ret = fd[s] = (int)syscall(SYS_dup, a); break;
		case 3: ret = syscall(SYS_dup3, a, slot[b][s], 0); break;
		case 4: ret = syscall(SYS_dup3, a, slot[b][s], O_CLOEXEC); break;
		case 5: ret = fd[s] = (int)syscall(SYS_fcntl, a, F_DUPFD, 0); break;
		case 6: ret = syscall(SYS_pwrite64, a, wbuf, n, off); break;
		case 7: ret = syscall(SYS_pread64, a, rbuf[s], n, off); break;
		default: ret = syscall(SYS_ftruncate, a, len); break;
		}
		r[s] = RES((h == 3 || h == 4) && ret == slot[b][s] ? 0 : h == 2 || h == 5 ? ret < 0 ? -1 : 0 : ret);
		if (h == 7)
			r[s].b = rbuf[s], r[s].n = ret > 0 ? (size_t)ret : 0;
	}
	int ok = same(r, how[h]);
	if (h == 2 || h == 5) {
		if (ok && fd[0] >= 0)
			tra(" -> slot %d", add(fd));
		else
			for (int s = 0; s < 2; s++)
				if (fd[s] >= 0)
					close(fd[s]);
	}
	if (h > 1 || !ok)
		return;
	/* The number is free: a call on it is the kernel's EBADF. */
	int old[2] = {slot[i][0], slot[i][1]};
	drop(i);
	tra(" | write to the closed number");
	for (int s = 0; s < 2; s++)
		errno = 0, r[s] = RES(write(old[s], "x", 1));
	same(r, "write");
}
