/* t/mpi_order.c -- what one rank wrote before an MPI call that orders
 * ranks is what another rank reads after it, over a cache (libffio_mpi's
 * synchronisation points).  Each rank writes its block of the round
 * (unaligned, so that blocks share cache pages), reads the blocks it will
 * check once before the ordering call (so that stale clean pages are
 * cached), orders the ranks, and reads them again: exact bytes.  Two
 * rounds, the second over the first's cached and written pages.
 *   mpi_order WRITE SYNC FILE [CB]
 * WRITE: at (MPI_File_write_at), at_all (MPI_File_write_at_all, with the
 * hint romio_cb_write=CB), shared (MPI_File_write_shared; the blocks in
 * any order), ordered (MPI_File_write_ordered), posix (pwrite and pread
 * on a descriptor of the file).  SYNC: barrier, ibarrier, allreduce,
 * allgather, alltoall (every rank then reads every other block), send
 * (MPI_Send "done" to the previous rank, MPI_Recv from the next),
 * sendrecv, isend (Isend, Irecv, Waitall; each a ring: rank r reads
 * block r+1), bcast (root 0: the others read rank 0's block), gather
 * (root 0 reads every block), fence (MPI_Win_fence on a window).
 * WRITE master (SYNC ignored): rank 0 writes, one after the other,
 * PIECES adjacent pieces the other ranks send it (MPI_Recv before each,
 * nothing read), as a master that writes what workers send; its cache
 * should keep them for one write at close (t/mpi_order.sh counts the
 * writes below the cache with an event layer).  With MPI_ORDER_WRITE_ONLY=1 in the
 * environment the file starts empty and no rank reads before the ordering
 * call: the reader's cache holds only its own writes, and the writers
 * make the file grow.  Exit status 1 when a byte differs. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 1037 /* bytes per rank and round: blocks straddle pages */
#define ROUNDS 2
#define OLD 0xEE /* the file's bytes before the rounds */

static int rank, nranks, errors;
static MPI_Win win = MPI_WIN_NULL;
static int win_word;
static const char *write_mode, *sync_mode;

static void die(const char *what)
{
	fprintf(stderr, "mpi_order: rank %d: %s failed\n", rank, what);
	MPI_Abort(MPI_COMM_WORLD, 2);
}

#define CHECK_MPI(call)                   \
	do {                              \
		if ((call) != MPI_SUCCESS) \
			die(#call);       \
	} while (0)

static unsigned char byte_of(int writer, int round, size_t i)
{
	return (unsigned char)(1 + writer * 37 + round * 101 + (i * 7) % 211);
}

static void fill(unsigned char *buf, int writer, int round)
{
	for (size_t i = 0; i < BLOCK; i++)
		buf[i] = byte_of(writer, round, i);
}

static int matches(const unsigned char *buf, int writer, int round)
{
	for (size_t i = 0; i < BLOCK; i++)
		if (buf[i] != byte_of(writer, round, i))
			return 0;
	return 1;
}

static int is(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* Does the reader, after the ordering call, see what writer wrote? */
static int sees(int reader, int writer)
{
	if (reader == writer)
		return 0;
	if (is(sync_mode, "send") || is(sync_mode, "sendrecv") || is(sync_mode, "isend"))
		return writer == (reader + 1) % nranks;
	if (is(sync_mode, "bcast"))
		return writer == 0;
	if (is(sync_mode, "gather"))
		return reader == 0;
	return 1;
}

/* The ordering call: every rank tells, and hears from those it sees. */
static void order(void)
{
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
	int out = rank, in = -1, *all = malloc((size_t)nranks * sizeof *all);
	int *outs = malloc((size_t)nranks * sizeof *outs);
	MPI_Request reqs[2];
	MPI_Status statuses[2];

	if (!all || !outs)
		die("malloc");
	for (int r = 0; r < nranks; r++)
		outs[r] = rank;
	if (is(sync_mode, "barrier")) {
		CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	} else if (is(sync_mode, "ibarrier")) {
		CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[0]));
		CHECK_MPI(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
	} else if (is(sync_mode, "allreduce")) {
		CHECK_MPI(MPI_Allreduce(&out, &in, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	} else if (is(sync_mode, "allgather")) {
		CHECK_MPI(MPI_Allgather(&out, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
	} else if (is(sync_mode, "alltoall")) {
		CHECK_MPI(MPI_Alltoall(outs, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
	} else if (is(sync_mode, "send")) {
		/* Even ranks send first, odd ones receive first: no cycle of
		 * blocking sends. */
		if (rank % 2 == 0)
			CHECK_MPI(MPI_Send(&out, 1, MPI_INT, prev, 7, MPI_COMM_WORLD));
		CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, next, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		if (rank % 2 != 0)
			CHECK_MPI(MPI_Send(&out, 1, MPI_INT, prev, 7, MPI_COMM_WORLD));
	} else if (is(sync_mode, "sendrecv")) {
		CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, prev, 7, &in, 1, MPI_INT, next, 7, MPI_COMM_WORLD,
				       MPI_STATUS_IGNORE));
	} else if (is(sync_mode, "isend")) {
		CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &reqs[0]));
		CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &reqs[1]));
		CHECK_MPI(MPI_Waitall(2, reqs, statuses));
	} else if (is(sync_mode, "bcast")) {
		CHECK_MPI(MPI_Bcast(&out, 1, MPI_INT, 0, MPI_COMM_WORLD));
	} else if (is(sync_mode, "fence")) {
		CHECK_MPI(MPI_Win_fence(0, win));
	} else if (is(sync_mode, "gather")) {
		CHECK_MPI(MPI_Gather(&out, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD));
	} else {
		die("the ordering call's name");
	}
	free(all);
	free(outs);
}

/* The file, through MPI-IO or a descriptor. */
static MPI_File fh;
static int fd = -1;

static void read_at(unsigned char *buf, size_t n, MPI_Offset off)
{
	memset(buf, 0, n);
	if (fd >= 0) {
		ssize_t got = pread(fd, buf, n, (off_t)off);
		if (got < 0)
			die("pread");
		return; /* short: the zeros left compare unequal */
	}
	CHECK_MPI(MPI_File_read_at(fh, off, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
}

static void write_block(const unsigned char *buf, MPI_Offset off)
{
	if (fd >= 0) {
		if (pwrite(fd, buf, BLOCK, (off_t)off) != BLOCK)
			die("pwrite");
	} else if (is(write_mode, "at")) {
		CHECK_MPI(MPI_File_write_at(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
	} else if (is(write_mode, "at_all")) {
		CHECK_MPI(MPI_File_write_at_all(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
	} else if (is(write_mode, "shared")) {
		CHECK_MPI(MPI_File_write_shared(fh, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
	} else if (is(write_mode, "ordered")) {
		CHECK_MPI(MPI_File_write_ordered(fh, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
	} else {
		die("the write's name");
	}
}

/* After the ordering call: the blocks of round g this rank sees. */
static void check_round(int g, unsigned char *region)
{
	MPI_Offset base = (MPI_Offset)g * nranks * BLOCK;

	if (is(write_mode, "shared")) {
		/* Every rank's block once, in some order. */
		read_at(region, (size_t)nranks * BLOCK, base);
		for (int w = 0; w < nranks; w++) {
			if (!sees(rank, w))
				continue;
			int found = 0;
			for (int b = 0; b < nranks; b++)
				found += matches(region + (size_t)b * BLOCK, w, g);
			if (found != 1) {
				printf("# rank %d, round %d: rank %d's block found %d times\n", rank, g, w, found);
				errors++;
			}
		}
		return;
	}
	for (int w = 0; w < nranks; w++) {
		if (!sees(rank, w))
			continue;
		read_at(region, BLOCK, base + (MPI_Offset)w * BLOCK);
		for (size_t i = 0; i < BLOCK; i++) {
			if (region[i] != byte_of(w, g, i)) {
				printf("# rank %d, round %d: byte %zu of rank %d's block is 0x%02x, not 0x%02x\n",
				       rank, g, i, w, region[i], byte_of(w, g, i));
				errors++;
				break;
			}
		}
	}
}

/* WRITE master: see the top. */
#define PIECES 32
#define PIECE 100
static void master(const char *path)
{
	unsigned char piece[PIECE];

	if (rank == 0) {
		int mfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (mfd < 0)
			die("open");
		for (int k = 0; k < PIECES; k++) {
			CHECK_MPI(MPI_Recv(piece, PIECE, MPI_BYTE, 1 + k % (nranks - 1), 7, MPI_COMM_WORLD,
					   MPI_STATUS_IGNORE));
			if (pwrite(mfd, piece, PIECE, (off_t)k * PIECE) != PIECE)
				die("pwrite");
		}
		if (close(mfd) < 0)
			die("close");
		return;
	}
	for (int k = 0; k < PIECES; k++) {
		if (1 + k % (nranks - 1) != rank)
			continue;
		memset(piece, 'a' + k % 26, PIECE);
		CHECK_MPI(MPI_Send(piece, PIECE, MPI_BYTE, 0, 7, MPI_COMM_WORLD));
	}
}

int main(int argc, char **argv)
{
	MPI_Info info = MPI_INFO_NULL;

	CHECK_MPI(MPI_Init(&argc, &argv));
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc < 4) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_order WRITE SYNC FILE [CB]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	write_mode = argv[1];
	sync_mode = argv[2];
	const char *path = argv[3];
	const char *wo = getenv("MPI_ORDER_WRITE_ONLY");
	int write_only = wo && strcmp(wo, "1") == 0;
	size_t size = (size_t)ROUNDS * nranks * BLOCK;
	unsigned char *region = malloc(size), *mine = malloc(BLOCK);
	if (!region || !mine)
		die("malloc");

	if (is(write_mode, "master")) {
		if (nranks < 2)
			die("master with one rank");
		master(path);
		free(region);
		free(mine);
		MPI_Finalize();
		return 0;
	}
	/* The file as the rounds find it; the last close writes it back. */
	if (rank == 0) {
		size_t initial = write_only ? 0 : size;
		memset(region, OLD, size);
		int cfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (cfd < 0 || write(cfd, region, initial) != (ssize_t)initial || close(cfd) < 0)
			die("creating the file");
	}
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (is(write_mode, "posix")) {
		if ((fd = open(path, O_RDWR)) < 0)
			die("open");
	} else {
		if (argc > 4) {
			CHECK_MPI(MPI_Info_create(&info));
			CHECK_MPI(MPI_Info_set(info, "romio_cb_write", argv[4]));
		}
		CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh));
	}
	if (is(sync_mode, "fence"))
		CHECK_MPI(MPI_Win_create(&win_word, sizeof win_word, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	/* Cache the file's old bytes. */
	if (!write_only)
		read_at(region, size, 0);

	for (int g = 0; g < ROUNDS; g++) {
		MPI_Offset base = (MPI_Offset)g * nranks * BLOCK;
		fill(mine, rank, g);
		write_block(mine, base + (MPI_Offset)rank * BLOCK);
		/* Before the ordering call: the blocks to check, as cached. */
		if (!write_only)
			read_at(region, (size_t)nranks * BLOCK, base);
		order();
		check_round(g, region);
		/* Nobody writes the next round while a rank still reads. */
		CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	}

	if (fd >= 0 && close(fd) < 0)
		die("close");
	if (fd < 0)
		CHECK_MPI(MPI_File_close(&fh));
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	if (win != MPI_WIN_NULL)
		CHECK_MPI(MPI_Win_free(&win));
	int total = 0;
	CHECK_MPI(MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
	free(region);
	free(mine);
	MPI_Finalize();
	return errors ? 1 : 0;
}
