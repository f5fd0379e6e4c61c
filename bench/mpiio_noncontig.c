/* bench/mpiio_noncontig.c -- noncontiguous-view MPI-IO benchmark:
 * every rank owns every nranks-th block of B bytes of one file (an
 * interleaved vector file view) and writes, then reads, its K blocks with
 * independent MPI_File_write / MPI_File_read, ITER times.  ROMIO's data
 * sieving is switched with its hints (romio_ds_write, romio_ds_read);
 * run it raw or with libffio preloaded to compare ffio under it.
 *   mpiexec -n 4 bench/mpiio_noncontig [-b B] [-k K] [-i ITER] [-d enable|disable] FILE
 * Prints one line: label, sizes, seconds for the writes and the reads
 * (the slowest rank), and MiB/s. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
					"[-d enable|disable] FILE\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (optind != argc - 1 || b <= 0 || k <= 0 || iter <= 0 || b * k > (1L << 30)) {
		if (rank == 0)
			fprintf(stderr, "mpiio_noncontig: bad arguments\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	const char *path = argv[optind];

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

	char *buf = malloc((size_t)(b * k));
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(buf, 'a' + rank % 26, (size_t)(b * k));
	double tw = 0, tr = 0;
	for (long it = 0; it < iter; it++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		MPI_File_seek(fh, 0, MPI_SEEK_SET);
		MPI_File_write(fh, buf, (int)(b * k), MPI_BYTE, MPI_STATUS_IGNORE);
		MPI_File_sync(fh);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_File_sync(fh);
		double t1 = MPI_Wtime();
		MPI_File_seek(fh, 0, MPI_SEEK_SET);
		MPI_File_read(fh, buf, (int)(b * k), MPI_BYTE, MPI_STATUS_IGNORE);
		double t2 = MPI_Wtime();
		tw += t1 - t0;
		tr += t2 - t1;
		for (long i = 0; i < b * k; i++)
			if (buf[i] != 'a' + rank % 26) {
				fprintf(stderr, "mpiio_noncontig: rank %d read back a wrong byte at %ld\n",
					rank, i);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
	}
	double w, r;
	MPI_Reduce(&tw, &w, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&tr, &r, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		const char *label = getenv("BENCH_LABEL");
		double mib = (double)b * k * nranks * iter / (1 << 20);
		printf("%-28s ranks=%d B=%ld K=%ld iter=%ld ds=%-7s write %.3f s (%.1f MiB/s) "
		       "read %.3f s (%.1f MiB/s)\n", label ? label : "mpiio_noncontig", nranks, b, k,
		       iter, ds, w, mib / w, r, mib / r);
	}
	free(buf);
	MPI_Type_free(&ft);
	MPI_File_close(&fh);
	MPI_Finalize();
	return 0;
}
