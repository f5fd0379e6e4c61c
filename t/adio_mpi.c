/* t/adio_mpi.c -- the MPI-IO paths of ROMIO exercised over ffio (run under
 * $MPIEXEC with libffio preloaded; t/adio_paths.sh and t/adio_glue.sh):
 *   adio_mpi MODE FILE
 * MODE is one of
 *   contig    Program II with odd sizes: each rank writes its block at an
 *             unaligned offset in odd pieces (independent write_at);
 *   noncontig an interleaved file view, independent I/O (data sieving);
 *   coll      the same view, collective write_all/read_all (two-phase);
 *   nb        iwrite_at / iread_at (POSIX AIO) mixed with cached write_at;
 *   size      get_size with unflushed data, set_size, preallocate;
 *   shared    write_ordered and write_shared (the shared file pointer);
 *   atomic    atomic mode: other ranks' writes are seen without sync;
 *   records   small records, each rank's between the others' (independent
 *             write_at in turn), as PnetCDF's independent tile writes;
 *   sequence  the same records, each rank's in a block of its own, in order;
 *             these two print "kernel MIN MAX" first: how many of its
 *             records the kernel held on the rank holding fewest and most,
 *             read by raw system calls before any sync (kernel_view.h);
 * ADIO_FFIO_OPTS, when set, is passed as the ffio_opts hint (libffio_mpi).
 * Every byte written follows adio_pattern.h.  Each mode reads back what it
 * can and aborts on a difference; at the end rank 0 prints
 * "expect SIZE PATTERN_END" for t/adio_check, which verifies the file from
 * a separate process. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adio_pattern.h"
#include "kernel_view.h"

static int rank, nranks;
static const char *path;

static void fail(const char *what, long at)
{
	fprintf(stderr, "adio_mpi: rank %d: %s (at %ld)\n", rank, what, at);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		char msg[MPI_MAX_ERROR_STRING];
		int len;
		MPI_Error_string(rc, msg, &len);
		fprintf(stderr, "adio_mpi: rank %d: %s: %s\n", rank, what, msg);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		fail("out of memory", (long)n);
	return p;
}

/* Program II layout: rank r's block is odd-sized and follows rank r-1's. */
static long block_len(int r)
{
	return 10001 + 37L * r;
}

static long block_off(int r)
{
	long off = 0;
	for (int i = 0; i < r; i++)
		off += block_len(i);
	return off;
}

static MPI_File open_file(MPI_Info info)
{
	MPI_File fh;
	const char *hint = getenv("ADIO_FFIO_OPTS");
	if (hint) {
		/* The libffio_mpi hint: this file's stack. */
		if (info == MPI_INFO_NULL)
			MPI_Info_create(&info);
		MPI_Info_set(info, "ffio_opts", hint);
	}
	check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
	      "MPI_File_open");
	return fh;
}

/* sync-barrier-sync: after it every rank sees every rank's writes. */
static void sync_barrier_sync(MPI_File fh)
{
	check(MPI_File_sync(fh), "MPI_File_sync");
	MPI_Barrier(MPI_COMM_WORLD);
	check(MPI_File_sync(fh), "MPI_File_sync");
}

/* Read [0, n) in odd pieces with read_at and compare with the pattern. */
static void verify_all(MPI_File fh, long n)
{
	unsigned char *buf = xmalloc((size_t)n);
	for (long at = 0; at < n; at += 777) {
		int len = (int)(n - at < 777 ? n - at : 777);
		MPI_Status st;
		int got;
		check(MPI_File_read_at(fh, at, buf + at, len, MPI_BYTE, &st), "MPI_File_read_at");
		MPI_Get_count(&st, MPI_BYTE, &got);
		if (got != len)
			fail("short read", at);
	}
	long d = adio_diff(buf, (size_t)n, 0);
	if (d >= 0)
		fail("read back differs", d);
	free(buf);
}

static void write_block(MPI_File fh, int piece)
{
	long off = block_off(rank), len = block_len(rank);
	unsigned char *buf = xmalloc((size_t)len);
	adio_fill(buf, (size_t)len, (uint64_t)off);
	for (long at = 0; at < len; at += piece) {
		int n = (int)(len - at < piece ? len - at : piece);
		check(MPI_File_write_at(fh, off + at, buf + at, n, MPI_BYTE, MPI_STATUS_IGNORE),
		      "MPI_File_write_at");
	}
	free(buf);
}

static long mode_contig(void)
{
	MPI_File fh = open_file(MPI_INFO_NULL);
	long total = block_off(nranks);
	write_block(fh, 333);
	sync_barrier_sync(fh);
	verify_all(fh, total);
	check(MPI_File_close(&fh), "MPI_File_close");
	return total;
}

/* The interleaved view: blocks of B bytes, rank r owns every nranks-th. */
enum { VIEW_B = 211, VIEW_K = 40 };

static void set_view(MPI_File fh)
{
	MPI_Datatype ft;
	check(MPI_Type_vector(VIEW_K, VIEW_B, VIEW_B * nranks, MPI_BYTE, &ft), "MPI_Type_vector");
	check(MPI_Type_commit(&ft), "MPI_Type_commit");
	check(MPI_File_set_view(fh, (MPI_Offset)rank * VIEW_B, MPI_BYTE, ft, "native", MPI_INFO_NULL),
	      "MPI_File_set_view");
	MPI_Type_free(&ft);
}

static void view_fill(unsigned char *buf)
{
	for (int k = 0; k < VIEW_K; k++)
		adio_fill(buf + (size_t)k * VIEW_B, VIEW_B, (uint64_t)(k * nranks + rank) * VIEW_B);
}

static void view_compare(const unsigned char *buf)
{
	unsigned char *want = xmalloc((size_t)VIEW_B * VIEW_K);
	view_fill(want);
	for (long i = 0; i < (long)VIEW_B * VIEW_K; i++)
		if (buf[i] != want[i])
			fail("view read back differs", i);
	free(want);
}

static long mode_view(int collective)
{
	MPI_Info info;
	MPI_Info_create(&info);
	if (collective) {
		MPI_Info_set(info, "romio_cb_write", "enable");
		MPI_Info_set(info, "romio_cb_read", "enable");
	} else {
		MPI_Info_set(info, "romio_ds_write", "enable");
		MPI_Info_set(info, "romio_ds_read", "enable");
	}
	MPI_File fh = open_file(info);
	MPI_Info_free(&info);
	set_view(fh);
	size_t n = (size_t)VIEW_B * VIEW_K;
	unsigned char *buf = xmalloc(n);
	view_fill(buf);
	/* Two halves, so that sieving sees a partly written file. */
	int half = (int)(n / 2 / VIEW_B) * VIEW_B;
	if (collective) {
		check(MPI_File_write_all(fh, buf, half, MPI_BYTE, MPI_STATUS_IGNORE), "write_all");
		check(MPI_File_write_all(fh, buf + half, (int)n - half, MPI_BYTE, MPI_STATUS_IGNORE),
		      "write_all");
	} else {
		check(MPI_File_write(fh, buf, half, MPI_BYTE, MPI_STATUS_IGNORE), "MPI_File_write");
		check(MPI_File_write(fh, buf + half, (int)n - half, MPI_BYTE, MPI_STATUS_IGNORE),
		      "MPI_File_write");
	}
	sync_barrier_sync(fh);
	memset(buf, 0, n);
	check(MPI_File_seek(fh, 0, MPI_SEEK_SET), "MPI_File_seek");
	if (collective)
		check(MPI_File_read_all(fh, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "read_all");
	else
		check(MPI_File_read(fh, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "MPI_File_read");
	view_compare(buf);
	free(buf);
	/* And the whole file, contiguously. */
	check(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");
	long total = (long)VIEW_B * VIEW_K * nranks;
	verify_all(fh, total);
	check(MPI_File_close(&fh), "MPI_File_close");
	return total;
}

static long mode_nb(void)
{
	MPI_File fh = open_file(MPI_INFO_NULL);
	long off = block_off(rank), len = block_len(rank), total = block_off(nranks);
	unsigned char *buf = xmalloc((size_t)len), *back = xmalloc((size_t)len);
	adio_fill(buf, (size_t)len, (uint64_t)off);

	/* First third: cached write_at, then iread_at must see it. */
	long third = len / 3;
	check(MPI_File_write_at(fh, off, buf, (int)third, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
	MPI_Request rq;
	check(MPI_File_iread_at(fh, off, back, (int)third, MPI_BYTE, &rq), "iread_at");
	check(MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_Wait");
	long d = adio_diff(back, (size_t)third, (uint64_t)off);
	if (d >= 0)
		fail("iread_at after write_at differs", d);

	/* The rest: several iwrite_at outstanding at once, odd pieces. */
	MPI_Request rqs[64];
	MPI_Status sts[64];
	int nrq = 0;
	for (long at = third; at < len; at += 701) {
		int n = (int)(len - at < 701 ? len - at : 701);
		check(MPI_File_iwrite_at(fh, off + at, buf + at, n, MPI_BYTE, &rqs[nrq++]), "iwrite_at");
	}
	check(MPI_Waitall(nrq, rqs, sts), "MPI_Waitall");
	/* read_at (through the cache) sees the AIO writes. */
	memset(back, 0, (size_t)len);
	check(MPI_File_read_at(fh, off, back, (int)len, MPI_BYTE, MPI_STATUS_IGNORE), "read_at");
	d = adio_diff(back, (size_t)len, (uint64_t)off);
	if (d >= 0)
		fail("read_at after iwrite_at differs", d);

	/* After sync-barrier-sync, iread_at of the next rank's block. */
	sync_barrier_sync(fh);
	int next = (rank + 1) % nranks;
	long noff = block_off(next), nlen = block_len(next);
	unsigned char *nb = xmalloc((size_t)nlen);
	check(MPI_File_iread_at(fh, noff, nb, (int)nlen, MPI_BYTE, &rq), "iread_at");
	check(MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_Wait");
	d = adio_diff(nb, (size_t)nlen, (uint64_t)noff);
	if (d >= 0)
		fail("iread_at of the next rank's block differs", d);
	free(nb);
	free(buf);
	free(back);
	check(MPI_File_close(&fh), "MPI_File_close");
	return total;
}

static void expect_size(MPI_File fh, MPI_Offset want, const char *when)
{
	MPI_Offset got;
	check(MPI_File_get_size(fh, &got), "MPI_File_get_size");
	if (got != want) {
		fprintf(stderr, "adio_mpi: rank %d: size %lld %s, expected %lld\n", rank,
			(long long)got, when, (long long)want);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

static long mode_size(long *pattern_end)
{
	MPI_File fh = open_file(MPI_INFO_NULL);
	enum { W = 5000 };
	if (rank == 0) {
		unsigned char buf[W];
		adio_fill(buf, W, 0);
		check(MPI_File_write_at(fh, 0, buf, W, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
		/* Unflushed, and already part of the size. */
		expect_size(fh, W, "after a cached write");
	}
	MPI_Barrier(MPI_COMM_WORLD);
	check(MPI_File_set_size(fh, 8192), "MPI_File_set_size");
	expect_size(fh, 8192, "after set_size(8192)");
	check(MPI_File_preallocate(fh, 20000), "MPI_File_preallocate");
	expect_size(fh, 20000, "after preallocate(20000)");
	check(MPI_File_set_size(fh, 12345), "MPI_File_set_size");
	expect_size(fh, 12345, "after set_size(12345)");
	sync_barrier_sync(fh);
	/* Every rank sees rank 0's bytes and the zeros after them. */
	unsigned char *buf = xmalloc(12345);
	check(MPI_File_read_at(fh, 0, buf, 12345, MPI_BYTE, MPI_STATUS_IGNORE), "read_at");
	long d = adio_diff(buf, W, 0);
	if (d >= 0)
		fail("size: data differs", d);
	for (long i = W; i < 12345; i++)
		if (buf[i] != 0)
			fail("size: not zero past the data", i);
	free(buf);
	check(MPI_File_close(&fh), "MPI_File_close");
	*pattern_end = W;
	return 12345;
}

static long mode_shared(void)
{
	MPI_File fh = open_file(MPI_INFO_NULL);
	long len = block_len(rank), total = block_off(nranks);
	unsigned char *buf = xmalloc((size_t)len);

	/* Ordered: the blocks land in rank order, as in Program II. */
	adio_fill(buf, (size_t)len, (uint64_t)block_off(rank));
	check(MPI_File_write_ordered(fh, buf, (int)len, MPI_BYTE, MPI_STATUS_IGNORE),
	      "write_ordered");
	/* Then each rank in turn appends a block with write_shared: every
	 * rank must see the pointer the previous one left. */
	for (int r = 0; r < nranks; r++) {
		if (r == rank) {
			MPI_Offset pos;
			check(MPI_File_get_position_shared(fh, &pos), "get_position_shared");
			if (pos != total + block_off(rank))
				fail("shared pointer", (long)pos);
			adio_fill(buf, (size_t)len, (uint64_t)pos);
			check(MPI_File_write_shared(fh, buf, (int)len, MPI_BYTE, MPI_STATUS_IGNORE),
			      "write_shared");
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	free(buf);
	sync_barrier_sync(fh);
	verify_all(fh, 2 * total);
	check(MPI_File_close(&fh), "MPI_File_close");
	return 2 * total;
}

static void verify_fill(MPI_File fh, long n, unsigned char value)
{
	unsigned char *buf = xmalloc((size_t)n);
	check(MPI_File_read_at(fh, 0, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "read_at");
	for (long i = 0; i < n; i++)
		if (buf[i] != value)
			fail("atomic: stale or wrong byte", i);
	free(buf);
}

static long mode_atomic(void)
{
	MPI_File fh = open_file(MPI_INFO_NULL);
	long total = block_off(nranks);
	check(MPI_File_set_atomicity(fh, 1), "MPI_File_set_atomicity");
	if (rank == 0) {
		unsigned char *buf = xmalloc((size_t)total);
		memset(buf, 0xEE, (size_t)total);
		check(MPI_File_write_at(fh, 0, buf, (int)total, MPI_BYTE, MPI_STATUS_IGNORE),
		      "write_at");
		free(buf);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	/* No sync: atomic mode makes rank 0's write visible; this also
	 * leaves the old bytes in every rank's cache. */
	verify_fill(fh, total, 0xEE);
	MPI_Barrier(MPI_COMM_WORLD);
	write_block(fh, 999);
	MPI_Barrier(MPI_COMM_WORLD);
	verify_all(fh, total);
	check(MPI_File_close(&fh), "MPI_File_close");
	return total;
}

/* Records of REC_B bytes, REC_K per rank: record k of rank r at
 * (k * nranks + r) * REC_B (records), or at (r * REC_K + k) * REC_B
 * (sequence).  How many of its records the kernel holds is counted before
 * any sync, then the file is synced and read back. */
enum { REC_B = 64, REC_K = 256 };

static long rec_off(int interleaved, int k)
{
	return interleaved ? ((long)k * nranks + rank) * REC_B : ((long)rank * REC_K + k) * REC_B;
}

static long mode_records(int interleaved)
{
	MPI_File fh = open_file(MPI_INFO_NULL);
	long total = (long)REC_K * nranks * REC_B;
	unsigned char rec[REC_B], got[REC_B];
	for (int k = 0; k < REC_K; k++) {
		adio_fill(rec, REC_B, (uint64_t)rec_off(interleaved, k));
		check(MPI_File_write_at(fh, rec_off(interleaved, k), rec, REC_B, MPI_BYTE, MPI_STATUS_IGNORE),
		      "write_at");
	}
	int held = 0;
	for (int k = 0; k < REC_K; k++)
		held += kernel_pread(path, got, REC_B, rec_off(interleaved, k)) == REC_B &&
			adio_diff(got, REC_B, (uint64_t)rec_off(interleaved, k)) < 0;
	int lo, hi;
	MPI_Reduce(&held, &lo, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
	MPI_Reduce(&held, &hi, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("kernel %d %d\n", lo, hi);
	sync_barrier_sync(fh);
	verify_all(fh, total);
	check(MPI_File_close(&fh), "MPI_File_close");
	return total;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc != 3) {
		if (rank == 0)
			fprintf(stderr, "usage: adio_mpi MODE FILE\n");
		MPI_Finalize();
		return 2;
	}
	const char *mode = argv[1];
	path = argv[2];
	long size, end = -1;
	if (strcmp(mode, "contig") == 0)
		size = mode_contig();
	else if (strcmp(mode, "noncontig") == 0)
		size = mode_view(0);
	else if (strcmp(mode, "coll") == 0)
		size = mode_view(1);
	else if (strcmp(mode, "nb") == 0)
		size = mode_nb();
	else if (strcmp(mode, "size") == 0)
		size = mode_size(&end);
	else if (strcmp(mode, "shared") == 0)
		size = mode_shared();
	else if (strcmp(mode, "atomic") == 0)
		size = mode_atomic();
	else if (strcmp(mode, "records") == 0)
		size = mode_records(1);
	else if (strcmp(mode, "sequence") == 0)
		size = mode_records(0);
	else {
		if (rank == 0)
			fprintf(stderr, "adio_mpi: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0)
		printf("expect %ld %ld\n", size, end < 0 ? size : end);
	MPI_Finalize();
	return 0;
}
