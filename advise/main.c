/* advise/main.c -- ffio-advise: run a program once with ffio's event layer
 * tracing it (or read an existing event log) and recommend an FF_IO_OPTS
 * spec, with the reasons.  This file holds the options and the flow:
 * run (run.c), read and merge the logs (log.c), advise (rules.c).
 * See ffio-advise(1). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advise.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ffio-advise [OPTIONS] [--] PROGRAM [ARGS...]\n"
		"       ffio-advise [OPTIONS] --from LOG_OR_DIR\n"
		"\n"
		"Run PROGRAM once with every file it opens traced by ffio's event layer\n"
		"(event.summary), then print what it saw per group of files and the spec\n"
		"advised, with a reason for each choice.  The last line of standard output\n"
		"is FF_IO_OPTS='...'.  The exit status is PROGRAM's.\n"
		"\n"
		"  -f, --from LOG_OR_DIR  advise from an existing JSON event log (a file, or a\n"
		"                         directory of them: one per process)\n"
		"  -C, --cwd DIR          resolve the log's relative paths against DIR\n"
		"                         (default: the current directory)\n"
		"  -k, --keep-log PATH    keep the merged log in PATH (for --from later)\n"
		"  -p, --partial          advise even when PROGRAM failed (the trace is partial)\n"
		"  -l, --latency US       mean request latency from which uring is advised\n"
		"                         (default 100 microseconds)\n"
		"  -q, --quiet            print only the FF_IO_OPTS line (and messages)\n"
		"  -m, --mpi-dir DIR      under MPI: the shared directory of the ranks' logs\n"
		"                         (default ./ffio-advise.mpi)\n"
		"  -w, --wait SECONDS     under MPI: how long rank 0 waits for the other ranks\n"
		"                         after its own program ended (default 120)\n"
		"      --no-mpi           ignore the MPI launcher's variables\n"
		"  -h, --help             this text\n"
		"Under MPI: mpiexec -n 4 ffio-advise -- ./prog   (rank 0 prints the advice)\n"
		"Environment: FFIO_LIB, the library to preload (default %s/libffio.so).\n",
		FFIO_LIBDIR);
}

static int parse_double(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || *v < 0 ? -EINVAL : 0;
}

/* Remove logdir/ev.*.json and logdir itself (our temporary directory). */
static void remove_logs(const char *logdir)
{
	DIR *d = opendir(logdir);
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (strncmp(e->d_name, "ev.", 3) != 0 || l < 8 || strcmp(e->d_name + l - 5, ".json") != 0)
			continue;
		if (snprintf(path, sizeof path, "%s/%s", logdir, e->d_name) < (int)sizeof path)
			unlink(path);
	}
	closedir(d);
	rmdir(logdir);
}

/* Under MPI, rank 0 removes every rank's logs and markers once merged. */
static void remove_mpi(const struct adv_mpi *m)
{
	char path[sizeof m->dir + 64];

	for (int r = 0; r < m->size; r++) {
		snprintf(path, sizeof path, "%s/rank%d", m->dir, r);
		remove_logs(path);
		snprintf(path, sizeof path, "%s/rank%d.done", m->dir, r);
		unlink(path);
	}
	rmdir(m->dir);
}

static void say_failed(const char *prog, int status, const char *who)
{
	if (status > 128 && status < 128 + 65)
		fprintf(stderr, "%s: %s%s was killed by signal %d", ADV_NAME, who, prog, status - 128);
	else
		fprintf(stderr, "%s: %s%s exited with status %d", ADV_NAME, who, prog, status);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"from", required_argument, NULL, 'f'},    {"cwd", required_argument, NULL, 'C'},
		{"keep-log", required_argument, NULL, 'k'}, {"partial", no_argument, NULL, 'p'},
		{"latency", required_argument, NULL, 'l'},  {"quiet", no_argument, NULL, 'q'},
		{"mpi-dir", required_argument, NULL, 'm'},  {"wait", required_argument, NULL, 'w'},
		{"no-mpi", no_argument, NULL, 'N'},         {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct adv_options o = {.latency_us = 100};
	struct adv_log log = {0};
	struct adv_mpi mpi;
	const char *from = NULL, *keep = NULL, *mpidir = "ffio-advise.mpi";
	char cwd[PATH_MAX], *cwd_opt = NULL, tmpdir[PATH_MAX];
	const char *logdir = NULL;
	double wait_s = 120;
	int c, no_mpi = 0, partial_opt = 0, status = 0, rc, in_mpi = 0, rank = 0, size = 1;

	opterr = 0; /* our messages, with our prefix */
	while ((c = getopt_long(argc, argv, "+:f:C:k:pl:qm:w:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': from = optarg; break;
		case 'C': cwd_opt = optarg; break;
		case 'k': keep = optarg; break;
		case 'p': partial_opt = 1; break;
		case 'l':
			if (parse_double(optarg, &o.latency_us)) {
				fprintf(stderr, "%s: --latency wants microseconds, not '%s'\n", ADV_NAME, optarg);
				return 2;
			}
			break;
		case 'q': o.quiet = 1; break;
		case 'm': mpidir = optarg; break;
		case 'w':
			if (parse_double(optarg, &wait_s)) {
				fprintf(stderr, "%s: --wait wants seconds, not '%s'\n", ADV_NAME, optarg);
				return 2;
			}
			break;
		case 'N': no_mpi = 1; break;
		case 'h': usage(stdout); return 0;
		case ':':
		default: {
			char shortopt[3] = {'-', (char)optopt, '\0'};
			const char *opt = c != ':' && optopt ? shortopt : argv[optind - 1];
			fprintf(stderr, "%s: %s %s (see --help)\n", ADV_NAME, opt,
				c == ':' ? "needs a value" : "is no option");
			return 2;
		}
		}
	}
	if (from && optind < argc) {
		fprintf(stderr, "%s: --from and a program to run exclude each other\n", ADV_NAME);
		return 2;
	}
	if (!from && optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (cwd_opt)
		snprintf(cwd, sizeof cwd, "%s", cwd_opt);
	else if (!getcwd(cwd, sizeof cwd)) {
		fprintf(stderr, "%s: getcwd: %s\n", ADV_NAME, strerror(errno));
		return 1;
	}
	if (keep && !(log.keep = fopen(keep, "w"))) {
		fprintf(stderr, "%s: cannot write the log %s: %s\n", ADV_NAME, keep, strerror(errno));
		return 1;
	}

	if (!from) {
		char **prog = &argv[optind];
		in_mpi = !no_mpi && adv_mpi_rank(&rank, &size);
		if (in_mpi) {
			if ((rc = adv_mpi_begin(&mpi, mpidir, rank, size)))
				return 1;
			logdir = mpi.rankdir;
		} else {
			const char *t = getenv("TMPDIR");
			snprintf(tmpdir, sizeof tmpdir, "%s/ffio-advise.XXXXXX", t && *t ? t : "/tmp");
			if (!mkdtemp(tmpdir)) {
				fprintf(stderr, "%s: mkdtemp %s: %s\n", ADV_NAME, tmpdir, strerror(errno));
				return 1;
			}
			logdir = tmpdir;
		}
		rc = adv_run(prog, logdir, in_mpi, &status);
		if (in_mpi) {
			/* a rank that could not run its program says so too */
			if (adv_mpi_done(&mpi, rc ? 127 : status) && !rc)
				rc = -EIO;
			if (rank != 0)
				return rc ? 1 : status;
		}
		if (rc) {
			if (!in_mpi)
				remove_logs(logdir);
			return 1;
		}
		int bad_rank = -1, bad_status = 0, missing = 0;
		if (in_mpi)
			missing = adv_mpi_wait(&mpi, wait_s, &bad_rank, &bad_status);
		if (status || missing || bad_rank >= 0) {
			if (status)
				say_failed(prog[0], status, "");
			else if (bad_rank >= 0) {
				char who[32];
				snprintf(who, sizeof who, "rank %d's ", bad_rank);
				say_failed("program", bad_status, who);
			} else {
				fprintf(stderr, "%s: %d ranks did not finish", ADV_NAME, missing);
			}
			if (!status)
				status = bad_rank >= 0 && bad_status > 0 ? bad_status : 1;
			if (!partial_opt) {
				fprintf(stderr, ": nothing advised from a partial trace (--partial advises anyway)\n");
				if (log.keep)
					fclose(log.keep);
				if (in_mpi)
					fprintf(stderr, "%s: the ranks' logs are kept in %s\n", ADV_NAME, mpi.dir);
				else
					remove_logs(logdir);
				return status;
			}
			fprintf(stderr, ": the trace is partial, advised anyway (--partial)\n");
			o.partial = 1;
		}
		from = in_mpi ? mpi.dir : logdir;
	}

	rc = adv_log_read(&log, from, cwd);
	if (log.keep && (fclose(log.keep) || rc)) {
		if (!rc)
			fprintf(stderr, "%s: writing the log %s failed: %s\n", ADV_NAME, keep, strerror(errno));
		else
			unlink(keep);
		rc = rc ? rc : -EIO;
	}
	log.keep = NULL;
	if (!rc) {
		adv_log_stat(&log);
		rc = adv_advise(&log, &o, stdout);
		if (!rc && (fflush(stdout) || ferror(stdout))) {
			fprintf(stderr, "%s: writing the advice failed: %s\n", ADV_NAME, strerror(errno));
			rc = -EIO;
		}
	}
	adv_log_free(&log);
	if (logdir) {
		if (in_mpi)
			remove_mpi(&mpi);
		else
			remove_logs(logdir);
	}
	if (rc)
		return 1;
	return status;
}
