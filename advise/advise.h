/* advise/advise.h -- what the parts of ffio-advise share: the JSON values
 * of an event log line (json.c), the per-file statistics merged from the
 * logs (log.c), the groups of files and the stack chosen for each
 * (rules.c), and running the traced program (run.c).  See ffio-advise(1).
 *
 * Internal functions return 0 or -errno; messages go to standard error,
 * prefixed "ffio-advise:", and say which file and line they are about. */
#ifndef FFIO_ADVISE_H
#define FFIO_ADVISE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define ADV_NAME "ffio-advise"

/* ---- json.c: one JSON value ------------------------------------------- */

enum adv_jtype { ADV_JNULL, ADV_JBOOL, ADV_JNUM, ADV_JSTR, ADV_JOBJ, ADV_JARR };

struct adv_json {
	enum adv_jtype type;
	double num;           /* ADV_JNUM, ADV_JBOOL */
	uint64_t u;           /* ADV_JNUM: the value when it is a whole number >= 0 */
	int is_uint;          /* ... and whether it is one */
	char *str;            /* ADV_JSTR */
	int n;                /* members of an object or an array */
	char **keys;          /* ADV_JOBJ: n keys */
	struct adv_json *kid; /* n values */
};

/* Parse the whole of text (one log line) into *v.  0, or -EINVAL with what
 * was expected and the column in err, or -ENOMEM. */
int adv_json_parse(const char *text, struct adv_json *v, char *err, size_t errlen);
void adv_json_free(struct adv_json *v);
/* The member key of object v, NULL when v is no object or has none. */
const struct adv_json *adv_json_get(const struct adv_json *v, const char *key);

/* ---- log.c: statistics per file ----------------------------------------- */

#define ADV_BUCKETS 66 /* size buckets: 0 holds empty requests, b >= 1 [2^(b-1), 2^b) */
#define ADV_STRIDES 8  /* candidate strides kept per direction */

struct adv_dir {
	uint64_t calls, errors, bytes;
	double seconds;
	uint64_t sequential, strided, random;
	struct {
		int64_t stride;
		uint64_t weight; /* strided requests that had it */
	} stride[ADV_STRIDES];
	uint64_t hist[ADV_BUCKETS];
};

struct adv_file {
	char *path;       /* absolute (resolved against the directory the log is relative to) */
	char *given;      /* as the program passed it (first seen) */
	const char *base; /* last component of path */
	struct adv_dir dir[2]; /* 0 read, 1 write */
	uint64_t opens, records;
	int *writers, nwriters; /* distinct processes that wrote */
	int *readers, nreaders; /* distinct processes that read */
	int64_t size;     /* after the run (stat), -1 when unknown */
	int64_t span;     /* the most one summary moved or strode over (bytes) */
	char fstype[32];  /* "ext4", "nfs", ... or "unknown" */
	int fs_local;     /* 1 local, 0 network/parallel, -1 unknown */
	int pseudo;       /* on /proc, /sys and the like: contents made by the kernel */
	int shared_rw;    /* read by a process that did not write it while another wrote */
};

struct adv_log {
	struct adv_file *file;
	int nfiles, cap;
	int nrecords;     /* event summaries used */
	int nskipped;     /* text messages and trace lines not used */
	int nprocs;       /* processes (log files, or "process" values) */
	FILE *keep;       /* --keep-log: the merged log is written here */
};

/* Read one log file, or every regular file under a directory (each file is
 * one process unless its lines carry a "process" member; a file given
 * alone without them: each summary one process).  Relative paths
 * in the log are resolved against cwd.  0, or -EINVAL after a message
 * naming FILE:LINE for a malformed line, or another -errno. */
int adv_log_read(struct adv_log *log, const char *path, const char *cwd);
/* The size and file system of every file (stat/statfs after the run). */
void adv_log_stat(struct adv_log *log);
void adv_log_free(struct adv_log *log);

/* ---- rules.c: groups and the stack for each ------------------------------ */

struct adv_options {
	int partial;      /* the trace is partial: say so */
	int quiet;        /* only the FF_IO_OPTS line */
	double latency_us; /* uring from this mean latency on */
};

/* Print the analysis of log and, last, FF_IO_OPTS='...' on out.  0 or -errno. */
int adv_advise(const struct adv_log *log, const struct adv_options *o, FILE *out);

/* ---- run.c: the traced run ----------------------------------------------- */

/* Run argv with libffio preloaded (and, for a rank of an MPI job, the MPI
 * glue its program loads) and every file summarised as JSON into
 * logdir/ev.PID.json; *status is its exit status (128 + signal when
 * killed).  0, or -errno when it could not be run. */
int adv_run(char **argv, const char *logdir, int mpi_job, int *status);

#define MARKER_SLACK 5 /* s: without a job id, markers this much older than rank 0's start are stale */

struct adv_mpi {
	int rank, size;
	char dir[2048], rankdir[2100], marker[2100];
	char token[128];        /* the job id, "" when the launcher sets none */
	struct timespec start;  /* CLOCK_REALTIME at this rank's start */
};

/* This process's rank and the job's size from the launcher's variables
 * (MPICH, Open MPI, PMIx, Slurm): 1 when there are several ranks. */
int adv_mpi_rank(int *rank, int *size);
/* Make dir and this rank's dir/rankN/, remove what an earlier run of this
 * rank left there. */
int adv_mpi_begin(struct adv_mpi *m, const char *dir, int rank, int size);
/* This rank is done: dir/rankN.done says so, with the job id and status. */
int adv_mpi_done(const struct adv_mpi *m, int status);
/* Rank 0: wait up to timeout seconds for every rank's marker; the number
 * missing (after a message naming them), the first rank that failed and
 * its status. */
int adv_mpi_wait(const struct adv_mpi *m, double timeout, int *first_bad, int *bad_status);

/* Shared helpers. */
void adv_size_str(char *buf, size_t len, double bytes); /* "4 KiB", "1.5 MiB" */
void *adv_xrealloc(void *p, size_t n, size_t size);    /* NULL on overflow or no memory */

#endif
