/* advise/run.c -- running the program to advise once, traced: libffio
 * preloaded (ahead of any LD_PRELOAD, with the MPI glue a program linked
 * with MPICH or Open MPI needs, as ffio-run does), every file under
 * event.summary, JSON summaries into one log per process (%p) in a
 * directory of ours.  Under MPI each rank runs its program so, into a
 * shared directory, and leaves a completion marker that rank 0 waits for
 * (with a timeout) before it merges every rank's logs. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "advise.h"

#ifndef FFIO_LIBDIR
#define FFIO_LIBDIR "/usr/local/lib"
#endif

extern char **environ;

/* The program's file, as execvp would find it (for ldd). */
static char *find_program(const char *prog)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/'))
		return strdup(prog);
	if (!path || !*path)
		path = "/bin:/usr/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t dl = colon ? (size_t)(colon - path) : strlen(path);
		size_t n = dl + strlen(prog) + 3;
		char *cand = malloc(n);
		if (!cand)
			return NULL;
		snprintf(cand, n, "%.*s/%s", (int)dl, dl ? path : ".", prog);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		path += dl + (colon ? 1 : 0);
	}
	return NULL;
}

/* Which MPI the program loads: "mpich", "openmpi" or NULL (ldd follows the
 * libraries it loads; a script or a static program is not seen). */
static const char *mpi_of(const char *prog)
{
	char *file = find_program(prog), buf[4096];
	const char *which = NULL;
	size_t have = 0;
	int fd[2];
	pid_t pid;

	if (!file)
		return NULL;
	if (pipe2(fd, O_CLOEXEC) < 0) {
		free(file);
		return NULL;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(fd[1], 1);
		if (null >= 0)
			dup2(null, 2);
		execlp("ldd", "ldd", file, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	if (pid > 0) {
		/* the lines we look for, anywhere in the output */
		for (;;) {
			ssize_t n = read(fd[0], buf + have, sizeof buf - 1 - have);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			have += (size_t)n;
			buf[have] = '\0';
			if (!which && strstr(buf, "libmpich.so."))
				which = "mpich";
			if (!which && strstr(buf, "libmpi.so.40"))
				which = "openmpi";
			if (have > sizeof buf / 2) { /* keep the tail: a name may straddle */
				memmove(buf, buf + have - 64, 64);
				have = 64;
			}
		}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(fd[0]);
	free(file);
	return which;
}

/* dirname(lib) + "/" + name, or the variable's value when set. */
static char *beside(const char *lib, const char *var, const char *name)
{
	const char *v = getenv(var), *slash = strrchr(lib, '/');
	size_t n;
	char *out;

	if (v && *v)
		return strdup(v);
	n = (slash ? (size_t)(slash - lib) : 1) + strlen(name) + 2;
	if (!(out = malloc(n)))
		return NULL;
	snprintf(out, n, "%.*s/%s", slash ? (int)(slash - lib) : 1, slash ? lib : ".", name);
	return out;
}

/* The value of LD_PRELOAD for the traced program, in *out; the MPI glue
 * only for a rank of a job (mpi_job): a single process needs no coherence
 * between ranks, and ldd costs more than a short program's run. */
static int preload_for(const char *prog, int mpi_job, char **out)
{
	const char *lib = getenv("FFIO_LIB"), *old = getenv("LD_PRELOAD"), *mpi;
	char *glue = NULL, deflib[] = FFIO_LIBDIR "/libffio.so", buildlib[4096];
	size_t n;

	if (!lib || !*lib)
		lib = deflib;
	if (lib == deflib && access(lib, R_OK) < 0) {
		/* not installed yet: the build tree's, beside this program */
		ssize_t k = readlink("/proc/self/exe", buildlib, sizeof buildlib - 32);
		char *slash = k > 0 ? memrchr(buildlib, '/', (size_t)k) : NULL;
		if (slash) {
			strcpy(slash, "/.libs/libffio.so");
			if (access(buildlib, R_OK) == 0)
				lib = buildlib;
		}
	}
	if (access(lib, R_OK) < 0) {
		int rc = -errno;
		fprintf(stderr, "%s: the library %s: %s (set FFIO_LIB)\n", ADV_NAME, lib, strerror(errno));
		return rc;
	}
	mpi = mpi_job ? mpi_of(prog) : NULL;
	if (mpi && strcmp(mpi, "mpich") == 0)
		glue = beside(lib, "FFIO_MPI_LIB", "libffio_mpi.so");
	else if (mpi)
		glue = beside(lib, "FFIO_MPI_OPENMPI_LIB", "libffio_mpi_openmpi.so");
	if (glue && access(glue, R_OK) < 0) {
		free(glue);
		glue = NULL;
	}
	n = strlen(lib) + (glue ? strlen(glue) + 1 : 0) + (old ? strlen(old) + 1 : 0) + 1;
	if (!(*out = malloc(n))) {
		free(glue);
		return -ENOMEM;
	}
	snprintf(*out, n, "%s%s%s%s%s", lib, glue ? " " : "", glue ? glue : "", old && *old ? " " : "",
		 old && *old ? old : "");
	free(glue);
	return 0;
}

/* In the child: the environment of the traced run, then exec. */
static void child(char **argv, const char *preload, const char *logdir)
{
	size_t n = strlen(logdir) + 32;
	char *logfile = malloc(n);

	if (!logfile)
		_exit(127);
	snprintf(logfile, n, "+%s/ev.%%p.json", logdir);
	/* a rank's own spec would be consulted before FF_IO_OPTS */
	for (int again = 1; again;) {
		again = 0;
		for (char **e = environ; *e; e++)
			if (strncmp(*e, "FF_IO_OPTS_RANK", 15) == 0) {
				char name[256];
				size_t k = strcspn(*e, "=");
				if (k >= sizeof name)
					continue;
				memcpy(name, *e, k);
				name[k] = '\0';
				unsetenv(name);
				again = 1;
				break;
			}
	}
	if (setenv("LD_PRELOAD", preload, 1) || setenv("FF_IO_OPTS", "*(event.summary)", 1) ||
	    setenv("FF_IO_LOGFORMAT", "json", 1) || setenv("FF_IO_LOGFILE", logfile, 1)) {
		fprintf(stderr, "%s: setenv: %s\n", ADV_NAME, strerror(errno));
		_exit(127);
	}
	unsetenv("FF_IO_OPEN_DIAGS");
	execvp(argv[0], argv);
	fprintf(stderr, "%s: cannot run %s: %s\n", ADV_NAME, argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

int adv_run(char **argv, const char *logdir, int mpi_job, int *status)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, oint, oquit;
	char *preload = NULL;
	int rc, ws;
	pid_t pid;

	if ((rc = preload_for(argv[0], mpi_job, &preload)))
		return rc;
	fflush(stdout);
	fflush(stderr);
	/* like system(3): ^C and ^\ are the program's, we report what they did */
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		fprintf(stderr, "%s: fork: %s\n", ADV_NAME, strerror(errno));
		goto out;
	}
	if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		child(argv, preload, logdir);
	}
	while (waitpid(pid, &ws, 0) < 0) {
		if (errno != EINTR) {
			rc = -errno;
			fprintf(stderr, "%s: waitpid: %s\n", ADV_NAME, strerror(errno));
			goto out;
		}
	}
	if (WIFEXITED(ws))
		*status = WEXITSTATUS(ws);
	else if (WIFSIGNALED(ws))
		*status = 128 + WTERMSIG(ws);
	else
		*status = 1;
out:
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	free(preload);
	return rc;
}

/* ---- MPI --------------------------------------------------------------------- */

static int env_int(const char *name, int *v)
{
	const char *s = getenv(name);
	char *end;
	long x;

	if (!s || !*s)
		return 0;
	errno = 0;
	x = strtol(s, &end, 10);
	if (errno || *end || x < 0 || x > 1 << 24)
		return 0;
	*v = (int)x;
	return 1;
}

int adv_mpi_rank(int *rank, int *size)
{
	static const char *const vars[][2] = {
		{ "PMI_RANK", "PMI_SIZE" },                          /* MPICH (hydra) */
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },  /* Open MPI */
		{ "PMIX_RANK", "PMIX_SIZE" },
		{ "SLURM_PROCID", "SLURM_NTASKS" },
	};

	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		if (env_int(vars[i][0], rank) && env_int(vars[i][1], size) && *size > 1 && *rank < *size)
			return 1;
	return 0;
}

/* What tells this job's markers from an earlier job's: the job id the
 * launcher sets, "" when there is none (then the markers' times do). */
static void job_token(char *buf, size_t len)
{
	const char *v;

	buf[0] = '\0';
	if ((v = getenv("OMPI_MCA_ess_base_jobid")) || (v = getenv("PMIX_NAMESPACE")) || (v = getenv("PBS_JOBID")) ||
	    (v = getenv("LSB_JOBID")))
		snprintf(buf, len, "%s", v);
	else if ((v = getenv("SLURM_JOB_ID")))
		snprintf(buf, len, "%s.%s", v, getenv("SLURM_STEP_ID") ? getenv("SLURM_STEP_ID") : "");
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == ' ')
			*p = '_';
}

static int mkdir_ok(const char *d)
{
	if (mkdir(d, 0777) == 0 || errno == EEXIST)
		return 0;
	int rc = -errno;
	fprintf(stderr, "%s: cannot make the directory %s: %s\n", ADV_NAME, d, strerror(errno));
	return rc;
}

/* Remove what an earlier run left in this rank's own directory. */
static int clean_rank_dir(const char *d)
{
	char cmdpath[4096];
	int rc = 0;
	DIR *dir = opendir(d);
	if (!dir)
		return -errno;
	struct dirent *e;
	while ((e = readdir(dir))) {
		size_t l = strlen(e->d_name);
		if (strncmp(e->d_name, "ev.", 3) != 0 || l < 8 || strcmp(e->d_name + l - 5, ".json") != 0)
			continue;
		snprintf(cmdpath, sizeof cmdpath, "%s/%s", d, e->d_name);
		if (unlink(cmdpath) < 0 && errno != ENOENT) {
			rc = -errno;
			fprintf(stderr, "%s: cannot remove the old log %s: %s\n", ADV_NAME, cmdpath, strerror(errno));
			break;
		}
	}
	closedir(dir);
	return rc;
}

int adv_mpi_begin(struct adv_mpi *m, const char *dir, int rank, int size)
{
	int rc;

	memset(m, 0, sizeof *m);
	m->rank = rank;
	m->size = size;
	snprintf(m->dir, sizeof m->dir, "%s", dir);
	job_token(m->token, sizeof m->token);
	clock_gettime(CLOCK_REALTIME, &m->start);
	if (snprintf(m->rankdir, sizeof m->rankdir, "%s/rank%d", dir, rank) >= (int)sizeof m->rankdir) {
		fprintf(stderr, "%s: the directory name %s is too long\n", ADV_NAME, dir);
		return -ENAMETOOLONG;
	}
	snprintf(m->marker, sizeof m->marker, "%s/rank%d.done", dir, rank);
	if ((rc = mkdir_ok(dir)) || (rc = mkdir_ok(m->rankdir)))
		return rc;
	if (unlink(m->marker) < 0 && errno != ENOENT) {
		rc = -errno;
		fprintf(stderr, "%s: cannot remove the old marker %s: %s\n", ADV_NAME, m->marker, strerror(errno));
		return rc;
	}
	if ((rc = clean_rank_dir(m->rankdir))) {
		if (rc != -ENOMEM)
			fprintf(stderr, "%s: cannot clean %s: %s\n", ADV_NAME, m->rankdir, strerror(-rc));
		return rc;
	}
	return 0;
}

int adv_mpi_done(const struct adv_mpi *m, int status)
{
	char tmp[sizeof m->marker + 32];
	FILE *f;

	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", m->marker, (long)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		int rc = -errno;
		fprintf(stderr, "%s: cannot write the marker %s: %s\n", ADV_NAME, tmp, strerror(errno));
		return rc;
	}
	fprintf(f, "%s\n%d\n", m->token, status);
	if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, m->marker)) {
		int rc = -errno;
		fprintf(stderr, "%s: cannot write the marker %s: %s\n", ADV_NAME, m->marker, strerror(errno));
		unlink(tmp);
		return rc;
	}
	return 0;
}

/* Rank r's marker, when it is this job's: 1 and its status, else 0. */
static int marker_of(const struct adv_mpi *m, int r, int *status)
{
	char path[sizeof m->dir + 32], tok[sizeof m->token + 2] = "";
	struct stat st;
	FILE *f;
	int ok = 0;

	snprintf(path, sizeof path, "%s/rank%d.done", m->dir, r);
	if (!(f = fopen(path, "r")))
		return 0;
	if (fstat(fileno(f), &st) == 0 && fgets(tok, sizeof tok, f) && fscanf(f, "%d", status) == 1) {
		tok[strcspn(tok, "\n")] = '\0';
		if (m->token[0])
			ok = strcmp(tok, m->token) == 0;
		else /* no job id: the marker must not predate this job by much */
			ok = st.st_mtim.tv_sec + MARKER_SLACK >= m->start.tv_sec;
	}
	fclose(f);
	return ok;
}

int adv_mpi_wait(const struct adv_mpi *m, double timeout, int *first_bad, int *bad_status)
{
	struct timespec t0, now, nap = {0, 20 * 1000 * 1000};
	int missing = 0;

	*first_bad = -1;
	*bad_status = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int r = 0; r < m->size; r++) {
		int st;
		for (;;) {
			if (marker_of(m, r, &st))
				break;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 > timeout) {
				if (!missing)
					fprintf(stderr, "%s: waited %.0f s for the ranks' markers in %s; missing:", ADV_NAME,
						timeout, m->dir);
				fprintf(stderr, " rank%d.done", r);
				missing++;
				st = -1;
				break;
			}
			nanosleep(&nap, NULL); /* polling a marker, with a deadline */
		}
		if (st != 0 && *first_bad < 0) {
			*first_bad = r;
			*bad_status = st;
		}
	}
	if (missing)
		fprintf(stderr, " (%d of %d ranks; see --wait)\n", missing, m->size);
	return missing;
}
