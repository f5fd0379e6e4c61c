/* t/netcdf_sync.c -- nc_sync is a flush point (libffio_netcdf, relinked):
 * a second process sees the data right after the writer's nc_sync while
 * the writer keeps the file open, both a plain process (ncdump, no ffio)
 * and an NC_SHARE reader that goes through ffio's cache itself (its own
 * nc_sync must drop what it cached and reread the file).
 * The readers are forked before anything is written (fork is itself a
 * flush point) and wait on pipes.
 */
#include <errno.h>
#include <fcntl.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#define SPEC "*.nc(cache:1m:16:0)"
enum { N = 10 };

static char path[256], dump[sizeof path + 4];

static void wait_byte(int fd)
{
	char c;
	if (read(fd, &c, 1) != 1)
		_exit(3);
}

static void send_byte(int fd)
{
	if (write(fd, "x", 1) != 1)
		_exit(3);
}

/* Reader 1: once told, dump variable v with ncdump (no ffio) into dump. */
static pid_t start_dumper(int *go)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		wait_byte(p[0]);
		int out = open(dump, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0 || dup2(out, 1) < 0)
			_exit(4);
		unsetenv("FF_IO_OPTS");
		unsetenv("LD_PRELOAD");
		execlp("ncdump", "ncdump", "-v", "v", path, (char *)NULL);
		_exit(5);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/* Reader 2 (through ffio, NC_SHARE): reads v after each "go", answers with
 * the number of values that matched round r's data. */
static pid_t start_share_reader(int *go, int *answer)
{
	int a[2], b[2];
	pid_t pid;

	if (pipe(a) < 0 || pipe(b) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int ncid = -1, v[N], varid;
		close(a[1]);
		close(b[0]);
		for (int round = 1; round <= 2; round++) {
			unsigned char good = 0;
			wait_byte(a[0]);
			if (round == 1) {
				if (nc_open(path, NC_NOWRITE | NC_SHARE, &ncid) != NC_NOERR)
					_exit(6);
			} else if (nc_sync(ncid) != NC_NOERR) {
				_exit(7);
			}
			if (nc_inq_varid(ncid, "v", &varid) == NC_NOERR &&
			    nc_get_var_int(ncid, varid, v) == NC_NOERR)
				for (int i = 0; i < N; i++)
					good += v[i] == round * 100 + i;
			if (write(b[1], &good, 1) != 1)
				_exit(3);
		}
		nc_close(ncid);
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	*go = a[1];
	*answer = b[0];
	return pid;
}

static int put_round(int ncid, int varid, int round)
{
	int v[N];
	for (int i = 0; i < N; i++)
		v[i] = round * 100 + i;
	return nc_put_var_int(ncid, varid, v);
}

int main(int argc, char **argv)
{
	int ncid, dim, varid, go1 = -1, go2 = -1, answer = -1, status;
	unsigned char good;
	pid_t dumper, reader;
	char text[4096] = "";
	FILE *fp;

	if (!getenv("FF_IO_OPTS")) { /* the spec must be there when ffio starts */
		setenv("FF_IO_OPTS", SPEC, 1);
		execv(tap_self(), argv);
		tap_skip_all("cannot re-execute with FF_IO_OPTS set");
	}
	(void)argc;
	snprintf(path, sizeof path, "%s/ffio-ncsync-%d.nc", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	snprintf(dump, sizeof dump, "%s.cdl", path);
	tap_plan(7);

	dumper = start_dumper(&go1);
	reader = start_share_reader(&go2, &answer);
	tap_ok(dumper > 0 && reader > 0, "readers started");

	tap_is(nc_create(path, NC_CLOBBER, &ncid), NC_NOERR, "nc_create");
	nc_def_dim(ncid, "n", N, &dim);
	nc_def_var(ncid, "v", NC_INT, 1, &dim, &varid);
	nc_enddef(ncid);
	put_round(ncid, varid, 1);
	tap_is(nc_sync(ncid), NC_NOERR, "nc_sync after round 1");

	send_byte(go1);
	waitpid(dumper, &status, 0);
	fp = fopen(dump, "r");
	if (fp) {
		size_t got = fread(text, 1, sizeof text - 1, fp);
		text[got] = 0;
		fclose(fp);
	}
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	       strstr(text, "v = 100, 101, 102, 103, 104, 105, 106, 107, 108, 109 ;") != NULL,
	       "a plain process (ncdump) sees the data after nc_sync, writer still open");

	send_byte(go2);
	tap_ok(read(answer, &good, 1) == 1 && good == N, "NC_SHARE reader through ffio sees round 1");

	put_round(ncid, varid, 2);
	tap_is(nc_sync(ncid), NC_NOERR, "nc_sync after round 2");
	send_byte(go2);
	tap_ok(read(answer, &good, 1) == 1 && good == N,
	       "NC_SHARE reader sees round 2 after both nc_syncs (its cache dropped)");
	waitpid(reader, &status, 0);
	nc_close(ncid);
	unlink(path);
	unlink(dump);
	return tap_done();
}
