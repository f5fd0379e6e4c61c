/* bench/progio.c -- Program I and Program II of the ADIO paper, in three
 * versions chosen with -v: posix (explicit lseek before every write/read,
 * as the paper's PFS/PIOFS versions; run directly or with libffio
 * preloaded), ffapi (the same calls written to ffopen/ffseek/ffwrite/ffread;
 * built as progio-ffapi, linked with libffio) and mpiio
 * (MPI_File_write_at/read_at with offsets, no seeks; ROMIO raw, or over
 * ffio when preloaded).  A fourth, ceiling, is what no cache could beat:
 * each request is copied into a buffer of the process's SIZE bytes
 * (touched before the timing), which goes to the file in 512 KiB writes
 * (as ffio's bottom layers write; libffio/real.c says why) and comes back
 * in 1 MiB reads, each request then copied out; requests of a piece or
 * more go straight, in pieces, with no copy (--piece P: calls of P bytes
 * both ways; over the simulated file system, where every request costs a
 * latency, the harness gives SIZE: one call each way); the opens, fsyncs
 * and closes are the POSIX version's.
 *
 * Program I: each process its own file.  Program II: one common file, the
 * data of the processes in rank order; with --interleave, their requests
 * interleaved instead (request k of rank r at (k * PROCS + r) * REQ: ranks
 * writing strided records into one file at once; not with -v ceiling).  Each process writes SIZE bytes (in
 * requests of REQ bytes) and reads them back, ITERS times, and checks every
 * byte it read against a pattern depending on rank, iteration and offset.
 *
 * Every iteration reaches the file.  With --flush close the
 * file is opened for the write phase and closed (a flush point for every
 * ffio stack), then opened again for the read phase (so reads start with
 * empty ffio caches and come from the file) and closed; --fsync adds a
 * kernel fsync before the close of each write phase.  With --flush sync (the
 * default) the
 * file is opened once, and each iteration writes, calls fsync (for ffio a
 * flush, the kernel's sync, and dropping the clean cached pages) and reads
 * back; it is closed after the last iteration.  Opens, syncs and closes
 * are inside the timed I/O phases; filling and checking buffers are not.
 * Rank 0 prints one line:
 *   RESULT prog=1 version=posix procs=4 size=... iters=... req=... io=SECONDS ...
 * where io is the maximum over ranks of each rank's total I/O time.  The
 * exit status is non-zero if any byte read back was wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include "bench_util.h"
#include "mpi_quiet.h"

#ifdef PROGIO_FFAPI
#include "ffio.h"
#endif

enum version { V_POSIX, V_FFAPI, V_MPIIO, V_CEIL };
static const char *const version_name[] = { "posix", "ffapi", "mpiio", "ceiling" };
#define NVERSION 4

struct options {
	int prog;          /* 1 or 2 */
	enum version version;
	size_t size;       /* bytes per process per iteration */
	size_t req;        /* request size */
	int iters;
	const char *dir;
	const char *spec;  /* ffapi: the stack given to ffopen (NULL: FF_IO_OPTS) */
	const char *label; /* echoed in the RESULT line */
	enum { FLUSH_CLOSE, FLUSH_SYNC } flush;
	int fsync;         /* FLUSH_CLOSE: also fsync before each close */
	int keep;
	int interleave;    /* Program II: the ranks' requests interleaved */
	int corrupt;       /* test only: write one wrong byte */
	size_t wpiece, rpiece; /* ceiling: call sizes */
};

static int rank, nprocs;

static void die(const char *what, int err)
{
	fprintf(stderr, "progio: rank %d: %s: %s\n", rank, what, strerror(err));
	MPI_Abort(MPI_COMM_WORLD, 2);
	exit(2);
}

static void usage(void)
{
	if (rank == 0)
		fprintf(stderr,
			"usage: progio [-p 1|2] [-v posix|ffapi|mpiio|ceiling] [-s SIZE] [-r REQ] [-i ITERS]\n"
			"              [-d DIR] [-S SPEC] [-l LABEL] [--flush close|sync] [--fsync]\n"
			"              [--piece P] [--interleave] [--keep] [--corrupt]\n"
			"  -p  program: 1 = a file per process, 2 = one common file (default 1)\n"
			"  -v  version (default posix; ffapi needs the progio-ffapi build;\n"
			"      ceiling: requests copied into a buffer, large calls)\n"
			"  -s  bytes per process and iteration (default 1m)\n"
			"  -r  request size (default: SIZE, one request)\n"
			"  -i  iterations (default 10)\n"
			"  -d  directory of the files (default .)\n"
			"  -S  ffapi: stack for ffopen (default: the FF_IO_OPTS entry)\n"
			"  --flush close  each iteration: open, write, close; open, read, close\n"
			"  --flush sync   open once; each iteration: write, fsync, read; close at the end (default)\n"
			"  --fsync    with --flush close: fsync before each close of the write phase\n"
			"  --piece P  ceiling: calls of P bytes (default: 512k writes, 1m reads)\n"
			"  --interleave  Program II: request k of rank r at (k * PROCS + r) * REQ\n"
			"  --keep     keep the files\n"
			"  --corrupt  (tests only) write one wrong byte, so the check fails\n");
	MPI_Finalize();
	exit(2);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	*o = (struct options){ .prog = 1, .version = V_POSIX, .flush = FLUSH_SYNC,
			       .size = 1 << 20, .iters = 10, .dir = ".",
			       .wpiece = 512 << 10, .rpiece = 1 << 20 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--fsync")) {
			o->fsync = 1;
		} else if (!strcmp(a, "--flush") && v) {
			i++;
			if (!strcmp(v, "close"))
				o->flush = FLUSH_CLOSE;
			else if (!strcmp(v, "sync"))
				o->flush = FLUSH_SYNC;
			else
				usage();
		} else if (!strcmp(a, "--piece") && v) {
			i++;
			if (bench_size(v, &o->wpiece))
				usage();
			o->rpiece = o->wpiece;
		} else if (!strcmp(a, "--interleave")) {
			o->interleave = 1;
		} else if (!strcmp(a, "--keep")) {
			o->keep = 1;
		} else if (!strcmp(a, "--corrupt")) {
			o->corrupt = 1;
		} else if (a[0] == '-' && a[1] && !a[2] && strchr("pvsridSl", a[1]) && v) {
			i++;
			switch (a[1]) {
			case 'p':
				o->prog = atoi(v);
				if (o->prog != 1 && o->prog != 2)
					usage();
				break;
			case 'v': {
				int k;
				for (k = 0; k < NVERSION && strcmp(v, version_name[k]); k++)
					;
				if (k == NVERSION)
					usage();
				o->version = (enum version)k;
				break;
			}
			case 's': if (bench_size(v, &o->size)) usage(); break;
			case 'r': if (bench_size(v, &o->req)) usage(); break;
			case 'i':
				o->iters = atoi(v);
				if (o->iters < 1)
					usage();
				break;
			case 'd': o->dir = v; break;
			case 'S': o->spec = v; break;
			case 'l': o->label = v; break;
			}
		} else {
			usage();
		}
	}
	if (o->req == 0 || o->req > o->size)
		o->req = o->size;
	if (o->interleave && (o->prog != 2 || o->version == V_CEIL || o->size % o->req))
		usage(); /* (whole requests of Program II; the ceiling's pieces are contiguous) */
#ifndef PROGIO_FFAPI
	if (o->version == V_FFAPI) {
		if (rank == 0)
			fprintf(stderr, "progio: -v ffapi needs the progio-ffapi build\n");
		MPI_Finalize();
		exit(2);
	}
#endif
}

/* ---- the data pattern: a function of (rank, iteration, offset) ---------- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t pattern_seed(int iter)
{
	return ((uint64_t)(unsigned)rank << 40) ^ ((uint64_t)(unsigned)iter << 20) ^ 0x5eedull;
}

/* The 8 bytes at offset 8*k of this rank's data in iteration iter. */
static uint64_t pattern_word(uint64_t seed, size_t k)
{
	return mix64(seed ^ ((uint64_t)k * 0xd1b54a32d192ed03ull));
}

static void pattern_fill(unsigned char *buf, size_t n, int iter)
{
	uint64_t seed = pattern_seed(iter);
	size_t k;
	for (k = 0; (k + 1) * 8 <= n; k++) {
		uint64_t w = pattern_word(seed, k);
		memcpy(buf + 8 * k, &w, 8);
	}
	if (8 * k < n) {
		uint64_t w = pattern_word(seed, k);
		memcpy(buf + 8 * k, &w, n - 8 * k);
	}
}

/* Number of wrong bytes in buf; reports the first one. */
static size_t pattern_check(const unsigned char *buf, size_t n, int iter)
{
	uint64_t seed = pattern_seed(iter);
	size_t wrong = 0;
	for (size_t k = 0; 8 * k < n; k++) {
		uint64_t w = pattern_word(seed, k);
		unsigned char want[8];
		size_t len = n - 8 * k < 8 ? n - 8 * k : 8;
		memcpy(want, &w, 8);
		if (memcmp(buf + 8 * k, want, len) == 0)
			continue;
		for (size_t j = 0; j < len; j++) {
			if (buf[8 * k + j] == want[j])
				continue;
			if (wrong == 0)
				fprintf(stderr,
					"progio: rank %d: iteration %d: byte %zu read back 0x%02x, "
					"written 0x%02x\n",
					rank, iter, 8 * k + j, buf[8 * k + j], want[j]);
			wrong++;
		}
	}
	return wrong;
}

/* ---- the I/O of one phase, per version ------------------------------------ */

/* Offset of this rank's data in its file. */
static off_t data_base(const struct options *o)
{
	return o->prog == 2 ? (off_t)rank * (off_t)(o->interleave ? o->req : o->size) : 0;
}

/* Where the byte at off of this rank's data lies, from data_base: with
 * --interleave, each request PROCS requests after the one before. */
static off_t data_at(const struct options *o, off_t off)
{
	if (!o->interleave)
		return off;
	off_t req = (off_t)o->req;
	return off / req * req * nprocs + off % req;
}

static void mpi_check(int rc, const char *what)
{
	if (rc == MPI_SUCCESS)
		return;
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	MPI_Error_string(rc, msg, &len);
	fprintf(stderr, "progio: rank %d: %s: %s\n", rank, what, msg);
	MPI_Abort(MPI_COMM_WORLD, 2);
	exit(2);
}

/* Waits without spinning (mpi_quiet.h): with more processes than cores,
 * MPICH's busy-polling collectives take the CPU from the processes still
 * doing I/O.  Polls every 50 us. */
#define QUIET_PAUSE_NS 50000

/* MPI-IO's open, sync and close on the common file are collective: meet
 * first in a sleeping barrier so that they find every process ready. */
static void before_collective(const struct options *o)
{
	if (o->version == V_MPIIO && o->prog == 2)
		quiet_barrier(QUIET_PAUSE_NS);
}

/* An open file of any version. */
struct handle {
	int fd;
	MPI_File fh;
};

enum open_mode { OPEN_WRITE, OPEN_READ, OPEN_RDWR };

static struct handle h_open(const struct options *o, const char *path, enum open_mode m)
{
	static const int posix_flags[] = { O_WRONLY | O_CREAT, O_RDONLY, O_RDWR | O_CREAT };
	static const int mpi_modes[] = { MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_MODE_RDONLY,
					 MPI_MODE_RDWR | MPI_MODE_CREATE };
	struct handle h = { .fd = -1 };
	switch (o->version) {
	case V_POSIX:
	case V_CEIL:
		h.fd = open(path, posix_flags[m], 0644);
		break;
	case V_FFAPI:
#ifdef PROGIO_FFAPI
		h.fd = ffopen(path, posix_flags[m], 0644, o->spec);
#endif
		break;
	case V_MPIIO:
		before_collective(o);
		mpi_check(MPI_File_open(o->prog == 2 ? MPI_COMM_WORLD : MPI_COMM_SELF, path,
					mpi_modes[m], MPI_INFO_NULL, &h.fh), path);
		return h;
	}
	if (h.fd < 0)
		die(path, errno);
	return h;
}

static void h_sync(const struct options *o, struct handle *h)
{
	switch (o->version) {
	case V_POSIX:
	case V_CEIL:
		if (fsync(h->fd) < 0)
			die("fsync", errno);
		break;
	case V_FFAPI:
#ifdef PROGIO_FFAPI
		if (fffsync(h->fd) < 0)
			die("fffsync", errno);
#endif
		break;
	case V_MPIIO:
		before_collective(o);
		mpi_check(MPI_File_sync(h->fh), "MPI_File_sync");
		break;
	}
}

static void h_close(const struct options *o, struct handle *h)
{
	switch (o->version) {
	case V_POSIX:
	case V_CEIL:
		if (close(h->fd) < 0)
			die("close", errno);
		break;
	case V_FFAPI:
#ifdef PROGIO_FFAPI
		if (ffclose(h->fd) < 0)
			die("ffclose", errno);
#endif
		break;
	case V_MPIIO:
		before_collective(o);
		mpi_check(MPI_File_close(&h->fh), "MPI_File_close");
		break;
	}
}

/* One request at off (from this rank's base) of n bytes; POSIX and ffio API
 * versions seek explicitly first, MPI-IO passes the offset. */
static void h_request(const struct options *o, struct handle *h, int writing,
		      unsigned char *p, size_t n, off_t off)
{
	off_t at = data_base(o) + data_at(o, off);
	if (o->version == V_MPIIO) {
		MPI_Status st;
		int count = -1;
		if (n > INT_MAX)
			die("request larger than INT_MAX", EINVAL);
		if (writing)
			mpi_check(MPI_File_write_at(h->fh, (MPI_Offset)at, p, (int)n, MPI_BYTE, &st),
				  "MPI_File_write_at");
		else
			mpi_check(MPI_File_read_at(h->fh, (MPI_Offset)at, p, (int)n, MPI_BYTE, &st),
				  "MPI_File_read_at");
		mpi_check(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count");
		if (count != (int)n)
			die(writing ? "MPI_File_write_at: short" : "MPI_File_read_at: short", EIO);
		return;
	}
#ifdef PROGIO_FFAPI
	if (o->version == V_FFAPI) {
		if (ffseek(h->fd, at, SEEK_SET) < 0)
			die("ffseek", errno);
		for (size_t done = 0; done < n;) {
			ssize_t r = writing ? ffwrite(h->fd, p + done, n - done)
					    : ffread(h->fd, p + done, n - done);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				die(writing ? "ffwrite" : "ffread", errno);
			if (r == 0)
				die("ffread: unexpected end of file", EIO);
			done += (size_t)r;
		}
		return;
	}
#endif
	if (lseek(h->fd, at, SEEK_SET) < 0)
		die("lseek", errno);
	for (size_t done = 0; done < n;) {
		ssize_t r = writing ? write(h->fd, p + done, n - done) : read(h->fd, p + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die(writing ? "write" : "read", errno);
		if (r == 0)
			die("read: unexpected end of file", EIO);
		done += (size_t)r;
	}
}

/* The ceiling's buffer: this rank's SIZE bytes (touched before each
 * iteration's timing). */
static unsigned char *stage;

/* The ceiling's bytes [*done, upto) of this rank's data to or from the file
 * in calls of the piece size (upto rounded up to a piece, or SIZE). */
static void stage_io(const struct options *o, struct handle *h, int writing, size_t *done, size_t upto)
{
	size_t piece = writing ? o->wpiece : o->rpiece;
	while (*done < upto) {
		size_t n = o->size - *done < piece ? o->size - *done : piece;
		off_t at = data_base(o) + (off_t)*done;
		ssize_t r = writing ? pwrite(h->fd, stage + *done, n, at) : pread(h->fd, stage + *done, n, at);
		if (r < 0)
			die(writing ? "pwrite" : "pread", errno);
		if (r != (ssize_t)n)
			die(writing ? "pwrite: short" : "pread: short", EIO);
		*done += n;
	}
}

/* The ceiling version of a phase: every request copied into (out of) the
 * buffer; each piece written as soon as the requests have passed it, read
 * when the first request in it is wanted.  Requests of a piece or more go
 * straight between the program's buffer and the file, in pieces, with no
 * copy (as a cache writes large aligned requests around itself). */
static void ceiling_transfer(const struct options *o, struct handle *h, int writing, unsigned char *buf)
{
	size_t done = 0;
	if (o->req >= (writing ? o->wpiece : o->rpiece)) {
		unsigned char *keep = stage;
		stage = buf; /* the pieces from (into) the program's own buffer */
		stage_io(o, h, writing, &done, o->size);
		stage = keep;
		return;
	}
	for (size_t off = 0; off < o->size; off += o->req) {
		size_t n = o->size - off < o->req ? o->size - off : o->req;
		if (writing) {
			memcpy(stage + off, buf + off, n);
			stage_io(o, h, 1, &done, (off + n) / o->wpiece * o->wpiece);
		} else {
			stage_io(o, h, 0, &done, off + n);
			memcpy(buf + off, stage + off, n);
		}
	}
	if (writing)
		stage_io(o, h, 1, &done, o->size);
}

/* This rank's SIZE bytes in requests of REQ bytes. */
static void h_transfer(const struct options *o, struct handle *h, int writing,
		       unsigned char *buf)
{
	if (o->version == V_CEIL) {
		ceiling_transfer(o, h, writing, buf);
		return;
	}
	for (size_t off = 0; off < o->size; off += o->req) {
		size_t n = o->size - off < o->req ? o->size - off : o->req;
		h_request(o, h, writing, buf + off, n, (off_t)off);
	}
}

int main(int argc, char **argv)
{
	struct options o;
	char path[PATH_MAX];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	parse_options(argc, argv, &o);

	if (o.prog == 1)
		snprintf(path, sizeof path, "%s/progio1.%d.dat", o.dir, rank);
	else
		snprintf(path, sizeof path, "%s/progio2.dat", o.dir);

	unsigned char *wbuf = malloc(o.size), *rbuf = malloc(o.size);
	if (!wbuf || !rbuf)
		die("malloc", ENOMEM);
	if (o.version == V_CEIL && !(stage = malloc(o.size)))
		die("malloc", ENOMEM);

	/* A fresh file: the first iteration must not read an old run's data. */
	if (o.prog == 1 || rank == 0) {
		if (unlink(path) < 0 && errno != ENOENT)
			die(path, errno);
	}
	quiet_barrier(QUIET_PAUSE_NS);

	double t_write = 0, t_read = 0;
	size_t wrong = 0;
	struct handle h = { .fd = -1 };
	for (int it = 0; it < o.iters; it++) {
		pattern_fill(wbuf, o.size, it);
		if (o.corrupt && rank == nprocs - 1 && it == o.iters - 1)
			wbuf[o.size / 2] ^= 0x40;
		memset(rbuf, 0xa5, o.size);
		if (stage)
			memset(stage, 0, o.size); /* touched now, not in the timing */

		double t0 = MPI_Wtime();
		if (o.flush == FLUSH_CLOSE) {
			h = h_open(&o, path, OPEN_WRITE);
			h_transfer(&o, &h, 1, wbuf);
			if (o.fsync)
				h_sync(&o, &h);
			h_close(&o, &h);
		} else {
			if (it == 0)
				h = h_open(&o, path, OPEN_RDWR);
			h_transfer(&o, &h, 1, wbuf);
			h_sync(&o, &h);
		}
		double t1 = MPI_Wtime();
		if (o.flush == FLUSH_CLOSE) {
			h = h_open(&o, path, OPEN_READ);
			h_transfer(&o, &h, 0, rbuf);
			h_close(&o, &h);
		} else {
			h_transfer(&o, &h, 0, rbuf);
			if (it == o.iters - 1)
				h_close(&o, &h);
		}
		double t2 = MPI_Wtime();
		t_write += t1 - t0;
		t_read += t2 - t1;

		wrong += pattern_check(rbuf, o.size, it);
	}

	quiet_barrier(QUIET_PAUSE_NS); /* ranks done early must not spin while others work */
	double mine[3] = { t_write + t_read, t_write, t_read }, maxv[3], minv;
	unsigned long long wrong_all = 0, wrong_mine = wrong;
	MPI_Reduce(mine, maxv, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&mine[0], &minv, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
	MPI_Allreduce(&wrong_mine, &wrong_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
		      MPI_COMM_WORLD);

	if (!o.keep) {
		MPI_Barrier(MPI_COMM_WORLD);
		if ((o.prog == 1 || rank == 0) && unlink(path) < 0)
			die(path, errno);
	}
	if (rank == 0) {
		printf("RESULT prog=%d version=%s procs=%d size=%zu iters=%d req=%zu flush=%s fsync=%d "
		       "io=%.6f write=%.6f read=%.6f io_min=%.6f wrong=%llu verify=%s label=%s\n",
		       o.prog, version_name[o.version], nprocs, o.size, o.iters, o.req,
		       o.flush == FLUSH_SYNC ? "sync" : "close", o.fsync,
		       maxv[0], maxv[1], maxv[2], minv, wrong_all, wrong_all ? "FAILED" : "ok",
		       o.label ? o.label : "-");
		fflush(stdout);
	}
	free(wbuf);
	free(rbuf);
	free(stage);
	MPI_Finalize();
	return wrong_all ? 1 : 0;
}
