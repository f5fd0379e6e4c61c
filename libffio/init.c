/* libffio/init.c -- process-wide start-up: read FF_IO_OPTS and friends once
 * (ignored in set-uid/set-gid programs), register the fork handlers, and
 * flush every open file at exit. */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ffio-internal.h"

struct ffio_spec *ffio_global_spec;
int ffio_open_diags;
int ffio_logformat_json;

static void init_once(void)
{
	const char *opts, *fmt;
	char err[1024];
	struct ffio_spec *s = NULL;

	ffio_real_init();
	ffio_in_lib++;
	ffio_pid = getpid();
	ffio_fsize_refresh();
	ffio_fd_top_refresh();
	if (ffio_fdtab_init() < 0)
		ffio_log("cannot allocate the descriptor table; running with plain I/O");
	ffio_open_diags = ffio_env_flag(FFIO_ENV_OPEN_DIAGS);
	fmt = ffio_env(FFIO_ENV_LOGFORMAT);
	ffio_logformat_json = fmt && strcmp(fmt, "json") == 0;
	opts = ffio_env(FFIO_ENV_OPTS);
	if (opts && *opts && ffio_fdtab_size > 0) {
		if (ffio_spec_parse(opts, "FF_IO_OPTS", &s, err, sizeof err) < 0) {
			ffio_log("%s", err);
			ffio_log("FF_IO_OPTS ignored: running with plain I/O");
			s = NULL;
		}
	}
	ffio_global_spec = s;
	/* (always: ffopen(3) and a rank's spec need no FF_IO_OPTS; a few
	 * microseconds here, against the RCU wait later) */
	ffio_fd_table_reserve(); /* (fdtable.c) */
	pthread_atfork(ffio_fork_prepare, ffio_fork_parent, ffio_fork_child); /* fork.c */
	ffio_signal_init();
	ffio_in_lib--;
}

void ffio_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, init_once);
}

__attribute__((constructor(102))) static void init_ctor(void)
{
	ffio_init();
}

/* Runs after the program's atexit handlers (ELF destructors run from
 * _dl_fini, registered before main): flush what is left and print the
 * summaries of files never closed. */
__attribute__((destructor)) static void exit_dtor(void)
{
	ffio_in_lib++;
	ffio_exit_all();
	ffio_leave();
}

uint64_t ffio_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
