/* libffio/env.c -- every environment variable the core reads, in one table.
 * All are read with secure_getenv: a set-user-ID or set-group-ID program
 * sees none of them, so a user cannot make it write a log where it likes
 * or cache its files.  They are read when needed, not once: a program may
 * set FF_IO_LOGFILE before its first managed open.  The glue libraries
 * read their own (FF_IO_OPTS_RANK<n>, FF_IO_NETCDF_CHUNK) the same way. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ffio-internal.h"

static const char *const env_names[FFIO_ENV_COUNT] = {
	[FFIO_ENV_OPTS] = "FF_IO_OPTS",                     /* the spec: ffio(7) */
	[FFIO_ENV_LOGFILE] = "FF_IO_LOGFILE",               /* where messages go */
	[FFIO_ENV_LOGFORMAT] = "FF_IO_LOGFORMAT",           /* "json" for summaries */
	[FFIO_ENV_OPEN_DIAGS] = "FF_IO_OPEN_DIAGS",         /* log each matched open */
	[FFIO_ENV_FLUSH_ON_SIGNAL] = "FF_IO_FLUSH_ON_SIGNAL", /* flush on fatal signals */
	[FFIO_ENV_GUARD] = "FF_IO_GUARD",                   /* 0: no guardian (guard/arena.c) */
	[FFIO_ENV_GUARD_HUGE] = "FF_IO_GUARD_HUGE",         /* 0: guarded memory in memfds (guard/shmfile.c) */
	[FFIO_ENV_URING_DISABLE] = "FF_IO_URING_DISABLE",   /* tests: uring without a ring */
	/* The launcher's rank, for %r in FF_IO_LOGFILE: */
	[FFIO_ENV_PMI_RANK] = "PMI_RANK",
	[FFIO_ENV_PMIX_RANK] = "PMIX_RANK",
	[FFIO_ENV_OMPI_RANK] = "OMPI_COMM_WORLD_RANK",
	[FFIO_ENV_MPI_LOCALRANKID] = "MPI_LOCALRANKID",
	[FFIO_ENV_SLURM_PROCID] = "SLURM_PROCID",
};

const char *ffio_env(enum ffio_env var)
{
	const char *v = secure_getenv(env_names[var]);
	return v && *v ? v : NULL;
}

int ffio_env_flag(enum ffio_env var)
{
	const char *v = ffio_env(var);
	return v && strcmp(v, "0") != 0 && strcmp(v, "no") != 0;
}

int ffio_env_rank(void)
{
	for (int var = FFIO_ENV_PMI_RANK; var <= FFIO_ENV_SLURM_PROCID; var++) {
		const char *v = ffio_env(var);
		if (v)
			return atoi(v);
	}
	return -1;
}
