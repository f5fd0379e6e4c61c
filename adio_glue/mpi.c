/* mpi.c -- libffio_mpi.so (MPICH) and libffio_mpi_openmpi.so (Open MPI),
 * one source: what only MPI knows, added to ffio through the
 * MPI profiling interface (PMPI).  ROMIO's UFS driver (and Open MPI's OMPIO) reaches the
 * file through POSIX calls that libffio interposes; this library adds:
 *   - the MPI_Info hint "ffio_opts" on MPI_File_open: the stack for that
 *     file (whether FF_IO_OPTS is set or not);
 *   - FF_IO_OPTS_RANK<n>: extra entries for rank n, consulted before
 *     FF_IO_OPTS for files opened after MPI_Init;
 *   - MPI_File_open by more ranks than one, for writing: the file is
 *     written by several processes at once (FFIO_FILE_SHARED): a cache
 *     takes its small writes in only once they merge, as the bytes
 *     between one rank's writes are most likely another rank's;
 *   - MPI_File_set_atomicity(true): the file becomes write-through (flushed
 *     after every write call; reads drop clean cached data first);
 *   - MPI_File_sync: a flush point on every rank (cached writes to the
 *     kernel, clean data dropped), before MPI's own sync (ROMIO calls
 *     fsync only on ranks that wrote since their last sync);
 *   - MPI_File_set_size, MPI_File_preallocate: every rank drops its idea of
 *     the size (ROMIO truncates on one rank only);
 *   - MPI_File_close: flushes, and keeps the file's layer statistics;
 *   - MPI_Finalize: the statistics of all ranks are reduced (min, mean,
 *     max and which rank) and rank 0 writes one summary to FF_IO_LOGFILE.
 *   - MPI's calls that order ranks (barrier, collectives, sends and
 *     receives, RMA synchronisation) are coherence points: this process's
 *     cached writes reach the kernel before it tells another rank, and its
 *     clean cached data is dropped after it heard from one, so that a read
 *     after MPI_Barrier sees what other ranks wrote before it (ROMIO's UFS
 *     driver without ffio gives that; MPI's shared memory makes no system
 *     call ffio would see).
 * The MPI_File behind each call is found through the inode of the path
 * given to MPI_File_open.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ffio_ext.h"

/* ---- loaded where MPI is not --------------------------------------------- */

/* ffio-run preloads this library with libffio, and LD_PRELOAD passes on
 * to every program the MPI program starts (system(3), popen(3), Open
 * MPI's orted in a singleton's MPI_Init): a shell, a tool, a daemon that
 * has no MPI library.  A reference to MPI that the dynamic loader must
 * resolve when it loads this library (the address of a function, MPI's
 * predefined handles under Open MPI, every function under LD_BIND_NOW)
 * would stop such a program before main ("symbol lookup error").  So
 * every reference to MPI here is weak: where MPI is not, it is null, and
 * nothing calls it, as nothing calls MPI there.  t/mpi_child.sh checks
 * that each glue library loads into a program without MPI. */
#define GLUE_PRAGMA(x) _Pragma(#x)
#define WEAK(sym) GLUE_PRAGMA(weak sym)
WEAK(PMPI_Bcast)
WEAK(PMPI_Comm_rank)
WEAK(PMPI_Comm_size)
WEAK(PMPI_Comm_dup)
WEAK(PMPI_Comm_free)
WEAK(PMPI_Comm_test_inter)
WEAK(PMPI_File_close)
WEAK(PMPI_File_open)
WEAK(PMPI_File_preallocate)
WEAK(PMPI_File_set_atomicity)
WEAK(PMPI_File_set_size)
WEAK(PMPI_File_sync)
WEAK(PMPI_Finalize)
WEAK(PMPI_Gather)
WEAK(PMPI_Gatherv)
WEAK(PMPI_Info_get)
WEAK(PMPI_Init)
WEAK(PMPI_Init_thread)
#ifdef OPEN_MPI /* MPI_COMM_WORLD is &ompi_mpi_comm_world, and so on */
WEAK(ompi_mpi_byte)
WEAK(ompi_mpi_comm_world)
WEAK(ompi_mpi_info_null)
WEAK(ompi_mpi_int)
#endif

/* ---- the MPI files this process has open ---------------------------------- */

struct mfile {
	MPI_File fh;
	char *path; /* as ROMIO opens it (prefix such as "ufs:" removed) */
	dev_t dev;
	ino_t ino;
	int have_inode;
	int atomic;
	struct mfile *next;
};

static struct mfile *mfiles;
static int my_rank = -1;

static struct mfile *mfile_of(MPI_File fh)
{
	for (struct mfile *m = mfiles; m; m = m->next)
		if (m->fh == fh)
			return m;
	return NULL;
}

static void mfile_remove(struct mfile *m)
{
	for (struct mfile **pp = &mfiles; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			free(m->path);
			free(m);
			return;
		}
	}
}

/* The path ROMIO passes to open(2): a file system prefix ("ufs:") is
 * removed, as ROMIO does. */
static const char *romio_path(const char *filename)
{
	const char *colon = strchr(filename, ':');

	if (colon && colon - filename > 1)
		return colon + 1;
	return filename;
}

/* The ffio file behind m on this rank, held (ffio_file_put), or NULL (not
 * managed, or ROMIO has not opened it here). */
static struct ffio_file *ffio_of(struct mfile *m)
{
	if (!m || !m->have_inode)
		return NULL;
	return ffio_file_find_inode(m->dev, m->ino);
}

static int io_error(int err)
{
	ffio_log("mpi: %s", strerror(err));
	return MPI_ERR_IO;
}

/* ---- statistics kept from closed files ---------------------------------- */

enum {
	V_COUNT = 0,
	V_BYTES = V_COUNT + FFIO_STAT_NOPS,
	V_NSEC = V_BYTES + FFIO_STAT_NOPS,
	V_HITS = V_NSEC + FFIO_STAT_NOPS,
	V_MISSES, V_RA_USED, V_RA_WASTED, V_EVICTIONS,
	NV
};

struct rec {
	char path[240];
	char layer[16];
	int32_t position;
	int32_t pad;
	uint64_t v[NV];
};

static struct rec *recs;
static int nrecs, caprecs;

/* Copy src into dst[size], truncated, always terminated. */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static struct rec *rec_get(const char *path, const char *layer, int position)
{
	for (int i = 0; i < nrecs; i++)
		if (recs[i].position == position && strcmp(recs[i].layer, layer) == 0 &&
		    strcmp(recs[i].path, path) == 0)
			return &recs[i];
	if (nrecs == caprecs) {
		int cap = caprecs ? 2 * caprecs : 16;
		struct rec *r = realloc(recs, (size_t)cap * sizeof(*r));
		if (!r)
			return NULL;
		recs = r;
		caprecs = cap;
	}
	struct rec *r = &recs[nrecs++];
	memset(r, 0, sizeof(*r));
	copy_str(r->path, sizeof(r->path), path);
	copy_str(r->layer, sizeof(r->layer), layer);
	r->position = position;
	return r;
}

static void keep_stats(struct mfile *m, struct ffio_file *f)
{
	struct ffio_stats st[FFIO_MAX_LAYERS];
	int n = ffio_file_stats(f, st, FFIO_MAX_LAYERS);

	for (int i = 0; i < n; i++) {
		struct rec *r = rec_get(m->path, st[i].layer, st[i].position);
		if (!r)
			return;
		for (int op = 0; op < FFIO_STAT_NOPS; op++) {
			r->v[V_COUNT + op] += st[i].count[op];
			r->v[V_BYTES + op] += st[i].bytes[op];
			r->v[V_NSEC + op] += st[i].nsec[op];
		}
		r->v[V_HITS] += st[i].hits;
		r->v[V_MISSES] += st[i].misses;
		r->v[V_RA_USED] += st[i].readahead_used;
		r->v[V_RA_WASTED] += st[i].readahead_wasted;
		r->v[V_EVICTIONS] += st[i].evictions;
	}
}

/* ---- MPI_Init: per-rank specs --------------------------------------------- */

/* The glue's own communicator, for its collectives at MPI_Finalize: made
 * in MPI_Init (where every rank is), so that they can never be matched
 * with the application's on MPI_COMM_WORLD.  In a program whose ranks
 * part in MPI_COMM_WORLD's collectives (PnetCDF's nc_test at 4 ranks:
 * three go to MPI_Finalize while one is in a collective open), they met
 * the application's and aborted it (MPI_ERR_TRUNCATE) where it hangs
 * without ffio. */
static MPI_Comm glue_comm;
static int have_glue_comm;

static void after_init(void)
{
	char name[40], err[512];
	const char *text;

	have_glue_comm = PMPI_Comm_dup(MPI_COMM_WORLD, &glue_comm) == MPI_SUCCESS;
	PMPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
	snprintf(name, sizeof(name), "FF_IO_OPTS_RANK%d", my_rank);
	text = secure_getenv(name);
	if (text && ffio_rank_spec_set(text, name, err, sizeof(err)) < 0)
		ffio_log("%s", err);
}

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);

	if (rc == MPI_SUCCESS)
		after_init();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		after_init();
	return rc;
}

/* ---- open, close, sync, atomicity ------------------------------------------ */

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
	char stack[MPI_MAX_INFO_VAL + 1], err[512];
	const char *path = romio_path(filename);
	int flag = 0, pushed = 0;

	if (info != MPI_INFO_NULL)
		PMPI_Info_get(info, "ffio_opts", MPI_MAX_INFO_VAL, stack, &flag);
	if (flag) {
		int ret = ffio_override_push(path, stack, err, sizeof(err));
		if (ret < 0)
			ffio_log("%s", ret == -EINVAL ? err : strerror(-ret));
		else
			pushed = 1;
	}
	int rc = PMPI_File_open(comm, filename, amode, info, fh);
	if (pushed)
		ffio_override_pop(path);
	if (rc != MPI_SUCCESS)
		return rc;

	struct mfile *m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		free(m);
		ffio_log("mpi: out of memory; %s is not followed", path);
		return rc;
	}
	m->fh = *fh;
	if (ffio_path_inode(path, &m->dev, &m->ino) == 0)
		m->have_inode = 1;
	m->next = mfiles;
	mfiles = m;
	int nranks = 1;
	if ((amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)) && PMPI_Comm_size(comm, &nranks) == MPI_SUCCESS && nranks > 1) {
		struct ffio_file *f = ffio_of(m);
		if (f) {
			ffio_file_set_flag(f, FFIO_FILE_SHARED, 1);
			ffio_file_put(f);
		}
	}
	return rc;
}

int MPI_File_close(MPI_File *fh)
{
	struct mfile *m = mfile_of(*fh);
	struct ffio_file *f = ffio_of(m);
	int ret = 0;

	if (f) {
		ret = ffio_file_flush(f);
		keep_stats(m, f);
		ffio_file_set_flag(f, FFIO_FILE_WRITETHROUGH, 0);
		ffio_file_set_flag(f, FFIO_FILE_SHARED, 0);
	}
	if (m)
		mfile_remove(m);
	int rc = PMPI_File_close(fh);
	ffio_file_put(f);
	if (rc == MPI_SUCCESS && ret < 0)
		return io_error(-ret);
	return rc;
}

/* The kernel's fsync is MPI's own to make (ROMIO: on the ranks that wrote
 * since their last sync), through the fsync ffio interposes: an fsync of
 * ffio's on every rank at every sync cost up to 2.3 ms where nothing was
 * left to write (the second sync of sync-barrier-sync). */
int MPI_File_sync(MPI_File fh)
{
	struct ffio_file *f = ffio_of(mfile_of(fh));
	int ret = f ? ffio_file_invalidate(f) : 0;
	int rc = PMPI_File_sync(fh);

	ffio_file_put(f);

	if (rc == MPI_SUCCESS && ret < 0)
		return io_error(-ret);
	return rc;
}

int MPI_File_set_atomicity(MPI_File fh, int flag)
{
	struct mfile *m = mfile_of(fh);
	struct ffio_file *f = ffio_of(m);
	int ret = 0;

	if (f && flag)
		ret = ffio_file_flush(f);
	int rc = PMPI_File_set_atomicity(fh, flag);
	if (rc != MPI_SUCCESS) {
		ffio_file_put(f);
		return rc;
	}
	if (m)
		m->atomic = flag != 0;
	if (f && ret == 0)
		ffio_file_set_flag(f, FFIO_FILE_WRITETHROUGH, flag != 0);
	ffio_file_put(f);
	if (ret < 0)
		return io_error(-ret);
	return rc;
}

/* ROMIO changes the size on one rank only (ftruncate, or preallocate's
 * writes of zeros on the first process, then a barrier); every other rank
 * must drop what it knew of the size.  While ROMIO works, the file is
 * write-through on every rank, so that the one rank's writes reach the file
 * before ROMIO's barrier and the others see them after it. */
static int resize(MPI_File fh, MPI_Offset size, int (*call)(MPI_File, MPI_Offset))
{
	struct mfile *m = mfile_of(fh);
	struct ffio_file *f = ffio_of(m);
	int ret = 0;

	if (f) {
		ret = ffio_file_flush(f);
		ffio_file_set_flag(f, FFIO_FILE_WRITETHROUGH, 1);
	}
	int rc = call(fh, size);
	if (!f)
		return rc;
	ffio_file_set_flag(f, FFIO_FILE_WRITETHROUGH, m->atomic);
	int e = rc == MPI_SUCCESS ? ffio_file_invalidate(f) : 0;
	ffio_file_put(f);
	if (rc != MPI_SUCCESS)
		return rc;
	if (ret == 0)
		ret = e;
	return ret < 0 ? io_error(-ret) : rc;
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	return resize(fh, size, PMPI_File_set_size);
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	return resize(fh, size, PMPI_File_preallocate);
}

/* ---- atomic mode: write-through and fresh reads ------------------------------ */

static int after_write(MPI_File fh, int rc)
{
	struct mfile *m = mfile_of(fh);
	struct ffio_file *f;

	if (rc != MPI_SUCCESS || !m || !m->atomic || !(f = ffio_of(m)))
		return rc;
	int ret = ffio_file_flush(f);
	ffio_file_put(f);
	return ret < 0 ? io_error(-ret) : rc;
}

static int before_read(MPI_File fh)
{
	struct mfile *m = mfile_of(fh);
	struct ffio_file *f;

	if (!m || !m->atomic || !(f = ffio_of(m)))
		return MPI_SUCCESS;
	int ret = ffio_file_invalidate(f);
	ffio_file_put(f);
	return ret < 0 ? io_error(-ret) : MPI_SUCCESS;
}

#define WRAP_WRITE(name, params, args)                    \
	WEAK(PMPI_File_##name)                            \
	int MPI_File_##name params                        \
	{                                                 \
		return after_write(fh, PMPI_File_##name args); \
	}

#define WRAP_READ(name, params, args)              \
	WEAK(PMPI_File_##name)                     \
	int MPI_File_##name params                 \
	{                                          \
		int rc_ = before_read(fh);         \
		if (rc_ != MPI_SUCCESS)            \
			return rc_;                \
		return PMPI_File_##name args;      \
	}

#define P_BLOCK(T) (MPI_File fh, const void *buf, T count, MPI_Datatype type, MPI_Status *status)
#define P_BLOCK_AT(T) (MPI_File fh, MPI_Offset off, const void *buf, T count, MPI_Datatype type, MPI_Status *status)
#define P_NB(T) (MPI_File fh, const void *buf, T count, MPI_Datatype type, MPI_Request *req)
#define P_NB_AT(T) (MPI_File fh, MPI_Offset off, const void *buf, T count, MPI_Datatype type, MPI_Request *req)
#define A_BLOCK (fh, buf, count, type, status)
#define A_BLOCK_AT (fh, off, buf, count, type, status)
#define A_NB (fh, buf, count, type, req)
#define A_NB_AT (fh, off, buf, count, type, req)

WRAP_WRITE(write, P_BLOCK(int), A_BLOCK)
WRAP_WRITE(write_all, P_BLOCK(int), A_BLOCK)
WRAP_WRITE(write_shared, P_BLOCK(int), A_BLOCK)
WRAP_WRITE(write_ordered, P_BLOCK(int), A_BLOCK)
WRAP_WRITE(write_at, P_BLOCK_AT(int), A_BLOCK_AT)
WRAP_WRITE(write_at_all, P_BLOCK_AT(int), A_BLOCK_AT)
WRAP_WRITE(iwrite, P_NB(int), A_NB)
WRAP_WRITE(iwrite_all, P_NB(int), A_NB)
WRAP_WRITE(iwrite_shared, P_NB(int), A_NB)
WRAP_WRITE(iwrite_at, P_NB_AT(int), A_NB_AT)
WRAP_WRITE(iwrite_at_all, P_NB_AT(int), A_NB_AT)
WRAP_WRITE(write_all_end, (MPI_File fh, const void *buf, MPI_Status *status), (fh, buf, status))
WRAP_WRITE(write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status), (fh, buf, status))
WRAP_WRITE(write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status), (fh, buf, status))

#undef P_BLOCK
#undef P_BLOCK_AT
#undef P_NB
#undef P_NB_AT
#define P_BLOCK(T) (MPI_File fh, void *buf, T count, MPI_Datatype type, MPI_Status *status)
#define P_BLOCK_AT(T) (MPI_File fh, MPI_Offset off, void *buf, T count, MPI_Datatype type, MPI_Status *status)
#define P_NB(T) (MPI_File fh, void *buf, T count, MPI_Datatype type, MPI_Request *req)
#define P_NB_AT(T) (MPI_File fh, MPI_Offset off, void *buf, T count, MPI_Datatype type, MPI_Request *req)

WRAP_READ(read, P_BLOCK(int), A_BLOCK)
WRAP_READ(read_all, P_BLOCK(int), A_BLOCK)
WRAP_READ(read_shared, P_BLOCK(int), A_BLOCK)
WRAP_READ(read_ordered, P_BLOCK(int), A_BLOCK)
WRAP_READ(read_at, P_BLOCK_AT(int), A_BLOCK_AT)
WRAP_READ(read_at_all, P_BLOCK_AT(int), A_BLOCK_AT)
WRAP_READ(iread, P_NB(int), A_NB)
WRAP_READ(iread_all, P_NB(int), A_NB)
WRAP_READ(iread_shared, P_NB(int), A_NB)
WRAP_READ(iread_at, P_NB_AT(int), A_NB_AT)
WRAP_READ(iread_at_all, P_NB_AT(int), A_NB_AT)

/* ---- calls that order ranks: coherence points ----------------------------- */

/* Before a message leaves: every file's writes to the kernel (one load when
 * nothing was written since).  After one came: every file writes back and
 * drops its clean data.  ROMIO's own messages inside MPI_File_* calls do
 * not pass here (MPICH calls its internals directly).  A write-back error
 * stays with its file, which returns it at its next write, sync or close:
 * the MPI call itself succeeds as it would without ffio. */
static void tell(void)
{
	(void)ffio_order_tell();
}

static void heard(void)
{
	(void)ffio_order_heard();
}

/* Is this process the root of a rooted collective on comm? */
static int is_root(int root, MPI_Comm comm)
{
	int inter = 0, me = -1;

	if (root == MPI_ROOT)
		return 1;
	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return 0;
	return PMPI_Comm_rank(comm, &me) == MPI_SUCCESS && me == root;
}

/* X(name, params, args, hears): tell, the call, then heard when it
 * succeeded and hears (an expression of the parameters) is true. */
#define ORDER_CALL(name, params, args, hears)             \
	WEAK(PMPI_##name)                                 \
	int MPI_##name params                             \
	{                                                 \
		tell();                                   \
		int rc_ = PMPI_##name args;               \
		if (rc_ == MPI_SUCCESS && (hears))        \
			heard();                          \
		return rc_;                               \
	}
/* X(name, params, args, hears): the call, then heard as above (receives
 * and completions: nothing leaves). */
#define HEAR_CALL(name, params, args, hears)              \
	WEAK(PMPI_##name)                                 \
	int MPI_##name params                             \
	{                                                 \
		int rc_ = PMPI_##name args;               \
		if (rc_ == MPI_SUCCESS && (hears))        \
			heard();                          \
		return rc_;                               \
	}

#define SEND_P (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
#define ISEND_P (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
#define SEND_A (buf, count, type, dest, tag, comm)
#define ISEND_A (buf, count, type, dest, tag, comm, req)
/* The leading parameters and arguments of a family of calls; the rest
 * (root, communicator, request) given to each. */
#define GATHER_P(...) (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, \
		       MPI_Datatype rtype, __VA_ARGS__)
#define GATHER_A(...) (sbuf, scount, stype, rbuf, rcount, rtype, __VA_ARGS__)
#define GATHERV_P(...) (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], \
			const int displs[], MPI_Datatype rtype, __VA_ARGS__)
#define GATHERV_A(...) (sbuf, scount, stype, rbuf, rcounts, displs, rtype, __VA_ARGS__)
#define SCATTERV_P(...) (const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, \
			 void *rbuf, int rcount, MPI_Datatype rtype, __VA_ARGS__)
#define SCATTERV_A(...) (sbuf, scounts, displs, stype, rbuf, rcount, rtype, __VA_ARGS__)
#define ALLTOALLV_P(...) (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, \
			  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, __VA_ARGS__)
#define ALLTOALLV_A(...) (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, __VA_ARGS__)
#define ALLTOALLW_P(...) (const void *sbuf, const int scounts[], const int sdispls[], \
			  const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const int rdispls[], \
			  const MPI_Datatype rtypes[], __VA_ARGS__)
#define ALLTOALLW_A(...) (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, __VA_ARGS__)
#define REDUCE_P(...) (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, __VA_ARGS__)
#define REDUCE_A(...) (sbuf, rbuf, count, type, op, __VA_ARGS__)
#define RSCATTER_P(...) (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op, \
			 __VA_ARGS__)
#define RSCATTER_A(...) (sbuf, rbuf, rcounts, type, op, __VA_ARGS__)
#define RSCATTERB_P(...) (const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op, __VA_ARGS__)
#define RSCATTERB_A(...) (sbuf, rbuf, rcount, type, op, __VA_ARGS__)

/* Collectives: every rank tells; the ranks that receive hear (all of
 * them but for the rooted ones: the root of a gather or reduce, the
 * others of a broadcast or scatter).  Their nonblocking forms tell when
 * they start and hear when a wait or test completes them (below). */
#define COLLECTIVES(X)                                                                              \
	X(Barrier, (MPI_Comm comm), (comm), 1)                                                      \
	X(Bcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm),                \
	  (buf, count, type, root, comm), !is_root(root, comm))                                     \
	X(Reduce, REDUCE_P(int root, MPI_Comm comm), REDUCE_A(root, comm), is_root(root, comm))  \
	X(Allreduce, REDUCE_P(MPI_Comm comm), REDUCE_A(comm), 1)                                 \
	X(Gather, GATHER_P(int root, MPI_Comm comm), GATHER_A(root, comm), is_root(root, comm))  \
	X(Gatherv, GATHERV_P(int root, MPI_Comm comm), GATHERV_A(root, comm), is_root(root, comm)) \
	X(Allgather, GATHER_P(MPI_Comm comm), GATHER_A(comm), 1)                                 \
	X(Allgatherv, GATHERV_P(MPI_Comm comm), GATHERV_A(comm), 1)                              \
	X(Scatter, GATHER_P(int root, MPI_Comm comm), GATHER_A(root, comm), !is_root(root, comm)) \
	X(Scatterv, SCATTERV_P(int root, MPI_Comm comm), SCATTERV_A(root, comm), !is_root(root, comm)) \
	X(Alltoall, GATHER_P(MPI_Comm comm), GATHER_A(comm), 1)                                  \
	X(Alltoallv, ALLTOALLV_P(MPI_Comm comm), ALLTOALLV_A(comm), 1)                           \
	X(Alltoallw, ALLTOALLW_P(MPI_Comm comm), ALLTOALLW_A(comm), 1)                           \
	X(Reduce_scatter, RSCATTER_P(MPI_Comm comm), RSCATTER_A(comm), 1)                        \
	X(Reduce_scatter_block, RSCATTERB_P(MPI_Comm comm), RSCATTERB_A(comm), 1)                \
	X(Scan, REDUCE_P(MPI_Comm comm), REDUCE_A(comm), 1)                                      \
	X(Exscan, REDUCE_P(MPI_Comm comm), REDUCE_A(comm), 1)                                    \
	X(Win_fence, (int assert, MPI_Win win), (assert, win), 1)
COLLECTIVES(ORDER_CALL)

#define NONBLOCKING_COLLECTIVES(X)                                                                  \
	X(Ibarrier, (MPI_Comm comm, MPI_Request *req), (comm, req), 0)                              \
	X(Ibcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req), \
	  (buf, count, type, root, comm, req), 0)                                                   \
	X(Ireduce, REDUCE_P(int root, MPI_Comm comm, MPI_Request *req), REDUCE_A(root, comm, req), 0) \
	X(Iallreduce, REDUCE_P(MPI_Comm comm, MPI_Request *req), REDUCE_A(comm, req), 0)         \
	X(Igather, GATHER_P(int root, MPI_Comm comm, MPI_Request *req), GATHER_A(root, comm, req), 0) \
	X(Igatherv, GATHERV_P(int root, MPI_Comm comm, MPI_Request *req), GATHERV_A(root, comm, req), 0) \
	X(Iallgather, GATHER_P(MPI_Comm comm, MPI_Request *req), GATHER_A(comm, req), 0)         \
	X(Iallgatherv, GATHERV_P(MPI_Comm comm, MPI_Request *req), GATHERV_A(comm, req), 0)      \
	X(Iscatter, GATHER_P(int root, MPI_Comm comm, MPI_Request *req), GATHER_A(root, comm, req), 0) \
	X(Iscatterv, SCATTERV_P(int root, MPI_Comm comm, MPI_Request *req), SCATTERV_A(root, comm, req), 0) \
	X(Ialltoall, GATHER_P(MPI_Comm comm, MPI_Request *req), GATHER_A(comm, req), 0)          \
	X(Ialltoallv, ALLTOALLV_P(MPI_Comm comm, MPI_Request *req), ALLTOALLV_A(comm, req), 0)   \
	X(Ialltoallw, ALLTOALLW_P(MPI_Comm comm, MPI_Request *req), ALLTOALLW_A(comm, req), 0)   \
	X(Ireduce_scatter, RSCATTER_P(MPI_Comm comm, MPI_Request *req), RSCATTER_A(comm, req), 0) \
	X(Ireduce_scatter_block, RSCATTERB_P(MPI_Comm comm, MPI_Request *req), RSCATTERB_A(comm, req), 0) \
	X(Iscan, REDUCE_P(MPI_Comm comm, MPI_Request *req), REDUCE_A(comm, req), 0)              \
	X(Iexscan, REDUCE_P(MPI_Comm comm, MPI_Request *req), REDUCE_A(comm, req), 0)
NONBLOCKING_COLLECTIVES(ORDER_CALL)

/* Point to point: a send tells; a receive hears when it completes (a
 * blocking one at once, a nonblocking one in a wait or test); a persistent
 * request started may be either, and tells.  RMA: unlock tells (what was
 * put reaches the target), lock hears. */
#define SENDS(X)                                                                                    \
	X(Send, SEND_P, SEND_A, 0)                                                                  \
	X(Ssend, SEND_P, SEND_A, 0)                                                                 \
	X(Bsend, SEND_P, SEND_A, 0)                                                                 \
	X(Rsend, SEND_P, SEND_A, 0)                                                                 \
	X(Isend, ISEND_P, ISEND_A, 0)                                                               \
	X(Issend, ISEND_P, ISEND_A, 0)                                                              \
	X(Ibsend, ISEND_P, ISEND_A, 0)                                                              \
	X(Irsend, ISEND_P, ISEND_A, 0)                                                              \
	X(Sendrecv, (const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,  \
		     int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status), \
	  (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status), 1)   \
	X(Sendrecv_replace, (void *buf, int count, MPI_Datatype type, int dest, int stag, int source, \
			     int rtag, MPI_Comm comm, MPI_Status *status),                          \
	  (buf, count, type, dest, stag, source, rtag, comm, status), 1)                           \
	X(Start, (MPI_Request *req), (req), 0)                                                      \
	X(Startall, (int count, MPI_Request reqs[]), (count, reqs), 0)                              \
	X(Win_unlock, (int rank, MPI_Win win), (rank, win), 0)                                      \
	X(Win_unlock_all, (MPI_Win win), (win), 0)
SENDS(ORDER_CALL)

#define RECEIVES(X)                                                                                 \
	X(Recv, (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,       \
		 MPI_Status *status), (buf, count, type, source, tag, comm, status), 1)             \
	X(Mrecv, (void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Status *status),   \
	  (buf, count, type, msg, status), 1)                                                       \
	X(Wait, (MPI_Request *req, MPI_Status *status), (req, status), 1)                           \
	X(Waitall, (int count, MPI_Request reqs[], MPI_Status statuses[]), (count, reqs, statuses), \
	  count > 0)                                                                                \
	X(Waitany, (int count, MPI_Request reqs[], int *index, MPI_Status *status),                 \
	  (count, reqs, index, status), *index != MPI_UNDEFINED)                                    \
	X(Waitsome, (int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]), \
	  (count, reqs, outcount, indices, statuses), *outcount > 0)                                \
	X(Test, (MPI_Request *req, int *flag, MPI_Status *status), (req, flag, status), *flag)      \
	X(Testall, (int count, MPI_Request reqs[], int *flag, MPI_Status statuses[]),               \
	  (count, reqs, flag, statuses), *flag && count > 0)                                        \
	X(Testany, (int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status),     \
	  (count, reqs, index, flag, status), *flag && *index != MPI_UNDEFINED)                     \
	X(Testsome, (int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]), \
	  (count, reqs, outcount, indices, statuses), *outcount > 0 && *outcount != MPI_UNDEFINED)  \
	X(Win_lock, (int type, int rank, int assert, MPI_Win win), (type, rank, assert, win), 1)   \
	X(Win_lock_all, (int assert, MPI_Win win), (assert, win), 1)
RECEIVES(HEAR_CALL)

/* ---- MPI_Finalize: one summary of every rank's statistics ------------------ */

static const char *const op_names[FFIO_STAT_NOPS] = {
	"read", "write", "sync", "truncate", "seek", "open", "close",
};

/* The name of value v, or NULL for values not reported. */
static void value_name(int v, char *buf, size_t len)
{
	if (v < V_BYTES)
		snprintf(buf, len, "%s calls", op_names[v - V_COUNT]);
	else if (v < V_NSEC)
		snprintf(buf, len, "%s bytes", op_names[v - V_BYTES]);
	else if (v < V_HITS)
		snprintf(buf, len, "%s seconds", op_names[v - V_NSEC]);
	else
		snprintf(buf, len, "%s", (const char *[]){ "cache hits", "cache misses",
			 "read-ahead used", "read-ahead wasted", "evictions" }[v - V_HITS]);
}

static void emit(char **out, size_t *len, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void emit(char **out, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	char line[512];

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (*len + (size_t)n + 1 > *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		while (c < *len + (size_t)n + 1)
			c *= 2;
		char *p = realloc(*out, c);
		if (!p)
			return;
		*out = p;
		*cap = c;
	}
	memcpy(*out + *len, line, (size_t)n);
	*len += (size_t)n;
	(*out)[*len] = '\0';
}

static void format_value(char *buf, size_t len, int v, double x)
{
	if (v >= V_NSEC && v < V_HITS)
		snprintf(buf, len, "%.6f", x / 1e9);
	else
		snprintf(buf, len, "%.0f", x);
}

/* Rank 0: reduce the records of every rank (all[rank][i], counts n[rank])
 * and write the summary. */
static void summarise(struct rec *all, const int *n, const int *displ, int nranks)
{
	char *out = NULL;
	size_t len = 0, cap = 0;
	int total = 0;

	for (int r = 0; r < nranks; r++)
		total += n[r];
	emit(&out, &len, &cap, "ffio: MPI summary over %d ranks (min, mean, max and the rank "
	     "that had them)\n", nranks);

	/* Each distinct (path, layer, position), in the order first seen. */
	for (int k = 0; k < total; k++) {
		struct rec *key = &all[k];
		int first = 1;
		for (int j = 0; j < k && first; j++)
			if (all[j].position == key->position && strcmp(all[j].layer, key->layer) == 0 &&
			    strcmp(all[j].path, key->path) == 0)
				first = 0;
		if (!first)
			continue;
		emit(&out, &len, &cap, "ffio: %s, layer %d (%s)\n", key->path, key->position, key->layer);
		emit(&out, &len, &cap, "ffio:   %-20s %14s %5s %16s %14s %5s %16s\n", "value", "min",
		     "rank", "mean", "max", "rank", "total");
		for (int v = 0; v < NV; v++) {
			double sum = 0, mn = 0, mx = 0;
			int rmin = -1, rmax = -1;
			for (int r = 0; r < nranks; r++) {
				double x = 0;
				for (int i = displ[r]; i < displ[r] + n[r]; i++)
					if (all[i].position == key->position &&
					    strcmp(all[i].layer, key->layer) == 0 &&
					    strcmp(all[i].path, key->path) == 0)
						x += (double)all[i].v[v];
				sum += x;
				if (rmin < 0 || x < mn) {
					mn = x;
					rmin = r;
				}
				if (rmax < 0 || x > mx) {
					mx = x;
					rmax = r;
				}
			}
			if (sum == 0)
				continue;
			char name[32], smin[32], smean[32], smax[32], stot[32];
			value_name(v, name, sizeof(name));
			format_value(smin, sizeof(smin), v, mn);
			format_value(smean, sizeof(smean), v, sum / nranks);
			format_value(smax, sizeof(smax), v, mx);
			format_value(stot, sizeof(stot), v, sum);
			if (v < V_NSEC || v >= V_HITS) /* means of counts keep one decimal */
				snprintf(smean, sizeof(smean), "%.1f", sum / nranks);
			emit(&out, &len, &cap, "ffio:   %-20s %14s %5d %16s %14s %5d %16s\n", name, smin,
			     rmin, smean, smax, rmax, stot);
		}
	}
	if (out)
		ffio_log_raw(out, len);
	free(out);
}

static void finalize_summary(void)
{
	int nranks, rank;
	int *n = NULL, *displ = NULL, *bytes = NULL, *bdispl = NULL;
	struct rec *all = NULL;

	if (!have_glue_comm)
		return;
	MPI_Comm comm = glue_comm;
	PMPI_Comm_size(comm, &nranks);
	PMPI_Comm_rank(comm, &rank);
	if (rank == 0) {
		n = calloc((size_t)nranks, sizeof(int));
		displ = calloc((size_t)nranks, sizeof(int));
		bytes = calloc((size_t)nranks, sizeof(int));
		bdispl = calloc((size_t)nranks, sizeof(int));
	}
	/* Every rank takes part in both collectives even when rank 0 is short
	 * of memory; rank 0 then just prints nothing. */
	PMPI_Gather(&nrecs, 1, MPI_INT, n, 1, MPI_INT, 0, comm);
	int total = 0;
	if (rank == 0 && n && displ && bytes && bdispl) {
		for (int r = 0; r < nranks; r++) {
			displ[r] = total;
			bdispl[r] = total * (int)sizeof(struct rec);
			bytes[r] = n[r] * (int)sizeof(struct rec);
			total += n[r];
		}
		all = calloc(total ? (size_t)total : 1, sizeof(struct rec));
	}
	/* Rank 0 says whether it can receive; nobody sends otherwise. */
	int ok = rank != 0 || all != NULL;
	PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
	if (ok)
		PMPI_Gatherv(recs, nrecs * (int)sizeof(struct rec), MPI_BYTE, all, bytes, bdispl,
			     MPI_BYTE, 0, comm);
	if (rank == 0 && ok && total > 0)
		summarise(all, n, displ, nranks);
	else if (rank == 0 && !ok)
		ffio_log("mpi: out of memory for the summary");
	free(all);
	free(n);
	free(displ);
	free(bytes);
	free(bdispl);
	PMPI_Comm_free(&glue_comm);
	have_glue_comm = 0;
}

int MPI_Finalize(void)
{
	finalize_summary();
	free(recs);
	recs = NULL;
	nrecs = caprecs = 0;
	return PMPI_Finalize();
}
