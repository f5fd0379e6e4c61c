/* bench/mpiio_noncontig.c -- noncontiguous-view MPI-IO benchmark:
 * every rank owns every nranks-th block of B bytes of one file (an
 * interleaved vector file view) and writes, then reads, its K blocks with
 * independent MPI_File_write / MPI_File_read, ITER times.  ROMIO's data
 * sieving is switched with its hints (romio_ds_write, romio_ds_read);
 * run it raw or with libffio preloaded to compare ffio under it.
 *   mpiexec -n 4 bench/mpiio_noncontig [-b B] [-k K] [-i ITER] [-d enable|disable|ceiling] FILE
 * -d ceiling: what no cache could beat, with plain POSIX calls on the
 * same file: every rank copies each of its blocks into its place in one
 * buffer of the whole file, shared by the ranks (MPI shared memory, touched
 * before the timing); rank 0 writes it in 512 KiB calls and syncs it (the
 * ranks meet in barriers that sleep between polls, mpi_quiet.h).
 * Reading, every rank reads the file in 1 MiB calls into a touched buffer
 * of its own and copies its blocks out, as a cache in each rank would.
 * The file's bytes in the fewest, largest calls, each block copied once:
 * ROMIO's collective buffering at its best when writing, which a cache
 * under independent I/O can only approach.  Each phase also runs a second
 * way, a pwrite (pread) of each block straight from (into) the program's
 * buffer with no MPI-IO (and a sync), since a rank that needs a quarter of
 * the file's bytes may get them faster so; reading, a third way makes no
 * I/O at all and copies every block back from the memory it was written
 * to, as a cache that kept the rank's own writes reads them back (ffio's
 * does).  The ceiling of each phase is the fastest way (each way's time
 * being its slowest rank's).
 * Prints one line: label, sizes, seconds for the writes and the reads
 * (the slowest rank), and MiB/s. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mpi_quiet.h"

#define PAUSE_NS 20000 /* the ceiling's waits sleep between polls (mpi_quiet.h) */

/* Every byte read back is this rank's. */
static void check(const char *buf, long n, int rank)
{
	for (long i = 0; i < n; i++)
		if (buf[i] != 'a' + rank % 26) {
			fprintf(stderr, "mpiio_noncontig: rank %d read back a wrong byte at %ld\n", rank, i);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
}

int main(int argc, char **argv)
{
	int rank, nranks, opt;
	long b = 1000, k = 1000, iter = 3;
	const char *ds = "enable";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((opt = getopt(argc, argv, "b:k:i:d:")) != -1) {
		switch (opt) {
		case 'b': b = atol(optarg); break;
		case 'k': k = atol(optarg); break;
		case 'i': iter = atol(optarg); break;
		case 'd': ds = optarg; break;
		default:
			if (rank == 0)
				fprintf(stderr, "usage: mpiio_noncontig [-b B] [-k K] [-i ITER] "
					"[-d enable|disable|ceiling] FILE\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (optind != argc - 1 || b <= 0 || k <= 0 || iter <= 0 || b * k > (1L << 30)) {
		if (rank == 0)
			fprintf(stderr, "mpiio_noncontig: bad arguments\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	const char *path = argv[optind];
	int ceiling = strcmp(ds, "ceiling") == 0;
	size_t nb = (size_t)b * (size_t)k;
	char *buf = malloc(nb);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(buf, 'a' + rank % 26, nb);
	double tw = 0, tr = 0;

	if (ceiling) {
		/* writing: one buffer of the whole file, shared by the ranks */
		size_t span = (size_t)(b * k * nranks), rpiece = (size_t)1 << 20, wpiece = (size_t)512 << 10;
		char *all, *mine = malloc(span);
		double way[5] = {0, 0, 0, 0, 0}, wmax[5]; /* write (a), (b), read (a), (b), (c) */
		MPI_Win win;
		MPI_Aint wsize;
		int disp, fd = -1;
		if (!mine)
			MPI_Abort(MPI_COMM_WORLD, 1);
		MPI_Win_allocate_shared(rank == 0 ? (MPI_Aint)span : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &all, &win);
		MPI_Win_shared_query(win, 0, &wsize, &disp, &all);
		MPI_Win_lock_all(MPI_MODE_NOCHECK, win); /* for MPI_Win_sync */
		if (rank == 0 && (fd = open(path, O_RDWR | O_CREAT, 0644)) < 0) {
			fprintf(stderr, "mpiio_noncontig: cannot open %s\n", path);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		for (long it = 0; it < iter; it++) {
			MPI_Barrier(MPI_COMM_WORLD); /* every rank done with the last read (c) */
			if (rank == 0)
				memset(all, 0, span); /* touched now, not in the timing */
			memset(mine, 0, span);
			MPI_Win_sync(win);
			MPI_Barrier(MPI_COMM_WORLD);
			MPI_Win_sync(win);
			double t0 = MPI_Wtime();
			for (long j = 0; j < k; j++)
				memcpy(all + (j * nranks + rank) * b, buf + j * b, (size_t)b);
			MPI_Win_sync(win);
			quiet_barrier(PAUSE_NS);
			MPI_Win_sync(win);
			if (rank == 0) {
				for (size_t at = 0; at < span; at += wpiece) {
					size_t n = span - at < wpiece ? span - at : wpiece;
					if (pwrite(fd, all + at, n, (off_t)at) != (ssize_t)n)
						MPI_Abort(MPI_COMM_WORLD, 1);
				}
				if (fsync(fd) < 0)
					MPI_Abort(MPI_COMM_WORLD, 1);
			}
			quiet_barrier(PAUSE_NS);
			double t1 = MPI_Wtime();
			/* writing, way (b): every block with a pwrite of its own,
			 * straight from the program's buffer, and a sync */
			int rfd = open(path, O_RDWR);
			if (rfd < 0)
				MPI_Abort(MPI_COMM_WORLD, 1);
			quiet_barrier(PAUSE_NS);
			double t2 = MPI_Wtime();
			for (long j = 0; j < k; j++)
				if (pwrite(rfd, buf + j * b, (size_t)b, (off_t)((j * nranks + rank) * b)) != (ssize_t)b)
					MPI_Abort(MPI_COMM_WORLD, 1);
			if (fsync(rfd) < 0)
				MPI_Abort(MPI_COMM_WORLD, 1);
			quiet_barrier(PAUSE_NS);
			double t3 = MPI_Wtime();
			/* reading, way (a): every rank reads the file in 1 MiB calls
			 * into a buffer of its own, each call when the first of its
			 * blocks in it is wanted, and copies its blocks out */
			size_t done = 0;
			for (long j = 0; j < k; j++) {
				size_t at = (size_t)((j * nranks + rank) * b);
				while (done < at + (size_t)b) {
					size_t n = span - done < rpiece ? span - done : rpiece;
					if (pread(rfd, mine + done, n, (off_t)done) != (ssize_t)n)
						MPI_Abort(MPI_COMM_WORLD, 1);
					done += n;
				}
				memcpy(buf + j * b, mine + at, (size_t)b);
			}
			double t4 = MPI_Wtime();
			check(buf, b * k, rank);
			memset(buf, 0, nb); /* (b) must read every byte again */
			double t4b = MPI_Wtime();
			/* reading, way (b): every block with a pread of its own */
			for (long j = 0; j < k; j++)
				if (pread(rfd, buf + j * b, (size_t)b, (off_t)((j * nranks + rank) * b)) != (ssize_t)b)
					MPI_Abort(MPI_COMM_WORLD, 1);
			double t5 = MPI_Wtime();
			check(buf, b * k, rank);
			memset(buf, 0, nb);
			/* reading, way (c): no I/O at all, every block copied back
			 * from the memory it was written to (as a cache that kept
			 * the rank's own writes reads them back) */
			double t5c = MPI_Wtime();
			for (long j = 0; j < k; j++)
				memcpy(buf + j * b, all + (j * nranks + rank) * b, (size_t)b);
			double t6 = MPI_Wtime();
			close(rfd);
			way[0] += t1 - t0;
			way[1] += t3 - t2;
			way[2] += t4 - t3;
			way[3] += t5 - t4b;
			way[4] += t6 - t5c;
			check(buf, b * k, rank);
		}
		if (rank == 0)
			close(fd);
		MPI_Win_unlock_all(win);
		MPI_Win_free(&win);
		free(mine);
		/* each way's time is its slowest rank's; the ceiling the faster way */
		MPI_Allreduce(way, wmax, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		tw = wmax[0] < wmax[1] ? wmax[0] : wmax[1];
		tr = wmax[2] < wmax[3] ? wmax[2] : wmax[3];
		if (wmax[4] < tr)
			tr = wmax[4];
		if (rank == 0)
			printf("# ceiling ways: write (a) shared buffer %.4f s, (b) a pwrite per block %.4f s; "
			       "read (a) file in 1 MiB reads %.4f s, (b) a pread per block %.4f s, "
			       "(c) copies from memory %.4f s\n",
			       wmax[0], wmax[1], wmax[2], wmax[3], wmax[4]);
	} else {
		MPI_Info info;
		MPI_Info_create(&info);
		MPI_Info_set(info, "romio_ds_write", ds);
		MPI_Info_set(info, "romio_ds_read", ds);
		MPI_File fh;
		if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh) !=
		    MPI_SUCCESS) {
			fprintf(stderr, "mpiio_noncontig: cannot open %s\n", path);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		MPI_Info_free(&info);
		MPI_Datatype ft;
		MPI_Type_vector((int)k, (int)b, (int)(b * nranks), MPI_BYTE, &ft);
		MPI_Type_commit(&ft);
		MPI_File_set_view(fh, (MPI_Offset)rank * b, MPI_BYTE, ft, "native", MPI_INFO_NULL);
		/* The barriers sleep between polls (mpi_quiet.h): a rank done
		 * with its reads, spinning in the next iteration's barrier,
		 * took the core from a rank still reading, and the read time
		 * measured the scheduler (4 ranks on 2 cores: 2.5 to 49 ms for
		 * the same reads of 3 x 0.5 MB, data sieving on). */
		for (long it = 0; it < iter; it++) {
			quiet_barrier(PAUSE_NS);
			double t0 = MPI_Wtime();
			MPI_File_seek(fh, 0, MPI_SEEK_SET);
			MPI_File_write(fh, buf, (int)(b * k), MPI_BYTE, MPI_STATUS_IGNORE);
			MPI_File_sync(fh);
			quiet_barrier(PAUSE_NS);
			MPI_File_sync(fh);
			double t1 = MPI_Wtime();
			MPI_File_seek(fh, 0, MPI_SEEK_SET);
			MPI_File_read(fh, buf, (int)(b * k), MPI_BYTE, MPI_STATUS_IGNORE);
			double t2 = MPI_Wtime();
			tw += t1 - t0;
			tr += t2 - t1;
			check(buf, b * k, rank);
		}
		MPI_Type_free(&ft);
		MPI_File_close(&fh);
	}
	double w, r;
	MPI_Reduce(&tw, &w, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&tr, &r, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		const char *label = getenv("BENCH_LABEL");
		double mib = (double)b * k * nranks * iter / (1 << 20);
		printf("%-28s ranks=%d B=%ld K=%ld iter=%ld ds=%-7s write %.4f s (%.1f MiB/s) "
		       "read %.4f s (%.1f MiB/s)\n", label ? label : "mpiio_noncontig", nranks, b, k,
		       iter, ds, w, mib / w, r, mib / r);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
