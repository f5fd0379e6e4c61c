/* advise/log.c -- reading ffio's JSON event logs (FF_IO_LOGFORMAT=json,
 * one event.summary object per file and process) and merging them into
 * one set of statistics per file: requests, bytes, times, the access
 * pattern and size histogram of each direction, and which processes read
 * and wrote it.  Each log file of a directory is one process
 * (FF_IO_LOGFILE with %p) unless its lines carry a "process" member (a log
 * merged by --keep-log); in a log file given alone without such members,
 * every summary counts as a process of its own (the safe side for .sieve).
 * Lines that are ffio's text messages and trace lines are skipped; any
 * other line that is not a summary is an error naming FILE:LINE. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>

#include "advise.h"

#define DIR_DEPTH 4 /* MPI: DIR/rankN/ev.PID.json */

void *adv_xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return realloc(p, n && size ? n * size : 1);
}

/* One summary of one process, before records of the same (path, process)
 * are narrowed to the topmost event layer. */
struct pending {
	char *path; /* resolved */
	char *given;
	int proc, position;
	int from;   /* whose stack it is: the process when named, else the log file */
	char *line; /* for --keep-log: the line, with its process named */
	uint64_t opens;
	struct adv_dir dir[2];
};

struct reader {
	struct adv_log *log;
	const char *cwd;
	const char *name; /* the log file, for messages */
	long line;
	struct pending *p;
	int np, cap;
	char **procs; /* "process" values seen, their index is the process */
	int nprocs_named;
	int file_proc; /* the process of this log file's lines without one */
	int per_record; /* a log file given alone: each summary its own process */
};

__attribute__((format(printf, 2, 3))) static int bad(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s:%ld: ", ADV_NAME, r->name, r->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

/* ---- one line ---------------------------------------------------------- */

static int get_u64(struct reader *r, const struct adv_json *obj, const char *key, uint64_t *out)
{
	const struct adv_json *v = adv_json_get(obj, key);
	if (!v)
		return bad(r, "not an ffio event summary: no \"%s\" count", key);
	if (v->type != ADV_JNUM || !v->is_uint)
		return bad(r, "not an ffio event summary: \"%s\" is no count", key);
	*out = v->u;
	return 0;
}

/* The bucket of a size histogram key: the bucket's lower bound, 0 or a
 * power of two. */
static int bucket_of_key(const char *key, int *b)
{
	char *end;
	unsigned long long low;

	errno = 0;
	low = strtoull(key, &end, 10);
	if (errno || end == key || *end)
		return -EINVAL;
	if (low == 0) {
		*b = 0;
		return 0;
	}
	if (low & (low - 1))
		return -EINVAL;
	*b = 1;
	while (low > 1) {
		low >>= 1;
		(*b)++;
	}
	return *b < ADV_BUCKETS ? 0 : -EINVAL;
}

static void stride_add(struct adv_dir *d, int64_t stride, uint64_t weight)
{
	int i, least = 0;

	if (!weight)
		return;
	for (i = 0; i < ADV_STRIDES; i++)
		if (d->stride[i].weight && d->stride[i].stride == stride) {
			d->stride[i].weight += weight;
			return;
		}
	for (i = 0; i < ADV_STRIDES; i++) {
		if (!d->stride[i].weight) {
			least = i;
			break;
		}
		if (d->stride[i].weight < d->stride[least].weight)
			least = i;
	}
	if (d->stride[least].weight < weight) {
		d->stride[least].stride = stride;
		d->stride[least].weight = weight;
	}
}

/* The "ops" member: calls, errors, bytes, seconds of reads and writes. */
static int read_ops(struct reader *r, const struct adv_json *ops, struct pending *p)
{
	static const char *const names[] = { "read", "aread", "write", "awrite" };

	if (!ops || ops->type != ADV_JOBJ)
		return bad(r, "not an ffio event summary: %s", "no \"ops\" object");
	for (int i = 0; i < ops->n; i++) {
		const struct adv_json *op = &ops->kid[i];
		uint64_t calls, errors, bytes;
		const struct adv_json *sec;
		int rc;

		if (op->type != ADV_JOBJ)
			return bad(r, "not an ffio event summary: \"ops\".\"%s\" is no object", ops->keys[i]);
		if ((rc = get_u64(r, op, "calls", &calls)) || (rc = get_u64(r, op, "errors", &errors)) ||
		    (rc = get_u64(r, op, "bytes", &bytes)))
			return rc;
		sec = adv_json_get(op, "seconds");
		if (!sec || sec->type != ADV_JNUM || sec->num < 0)
			return bad(r, "not an ffio event summary: \"%s\" has no seconds", ops->keys[i]);
		if (strcmp(ops->keys[i], "open") == 0)
			p->opens += calls;
		for (int k = 0; k < 4; k++) {
			if (strcmp(ops->keys[i], names[k]) != 0)
				continue;
			struct adv_dir *d = &p->dir[k / 2];
			d->calls += calls;
			d->errors += errors;
			d->bytes += bytes;
			d->seconds += sec->num;
		}
	}
	return 0;
}

/* The "read" and "write" members: pattern, stride and sizes. */
static int read_pattern(struct reader *r, const struct adv_json *o, const char *name, struct adv_dir *d)
{
	const struct adv_json *st, *sizes;
	uint64_t seq, strided, rnd;
	int rc;

	if (!o)
		return 0;
	if (o->type != ADV_JOBJ)
		return bad(r, "not an ffio event summary: \"%s\" is no object", name);
	if ((rc = get_u64(r, o, "sequential", &seq)) || (rc = get_u64(r, o, "strided", &strided)) ||
	    (rc = get_u64(r, o, "random", &rnd)))
		return rc;
	st = adv_json_get(o, "stride");
	if (!st || st->type != ADV_JNUM || st->num != (double)(int64_t)st->num)
		return bad(r, "not an ffio event summary: \"%s\" has no whole stride", name);
	sizes = adv_json_get(o, "sizes");
	if (!sizes || sizes->type != ADV_JOBJ)
		return bad(r, "not an ffio event summary: \"%s\" has no \"sizes\" object", name);
	for (int i = 0; i < sizes->n; i++) {
		int b;
		if (bucket_of_key(sizes->keys[i], &b) || sizes->kid[i].type != ADV_JNUM || !sizes->kid[i].is_uint)
			return bad(r, "not an ffio event summary: size bucket \"%s\" is not a power of two with a count",
				   sizes->keys[i]);
		d->hist[b] += sizes->kid[i].u;
	}
	d->sequential += seq;
	d->strided += strided;
	d->random += rnd;
	stride_add(d, (int64_t)st->num, strided);
	return 0;
}

/* path as the program passed it, made absolute against cwd; realpath(3)
 * when the file exists, so that "./x" and "x" are one file. */
static char *resolve(const char *given, const char *cwd)
{
	char *joined, *real;
	size_t n;

	while (given[0] == '.' && given[1] == '/')
		given += 2;
	if (given[0] == '/' || !cwd) {
		joined = strdup(given);
	} else {
		n = strlen(cwd) + strlen(given) + 2;
		joined = malloc(n);
		if (joined)
			snprintf(joined, n, "%s/%s", cwd, given);
	}
	if (!joined)
		return NULL;
	real = realpath(joined, NULL);
	if (real) {
		free(joined);
		return real;
	}
	return joined;
}

static int proc_named(struct reader *r, const struct adv_json *v, int *proc)
{
	char buf[64];
	const char *name;

	if (v->type == ADV_JSTR) {
		name = v->str;
	} else if (v->type == ADV_JNUM && v->is_uint) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->u);
		name = buf;
	} else {
		return bad(r, "\"process\" is %s", "neither a string nor a count");
	}
	for (int i = 0; i < r->nprocs_named; i++)
		if (strcmp(r->procs[i], name) == 0) {
			*proc = -2 - i;
			return 0;
		}
	char **np = adv_xrealloc(r->procs, (size_t)r->nprocs_named + 1, sizeof *np);
	if (!np)
		return -ENOMEM;
	r->procs = np;
	if (!(np[r->nprocs_named] = strdup(name)))
		return -ENOMEM;
	*proc = -2 - r->nprocs_named++;
	return 0;
}

static int one_line(struct reader *r, char *line)
{
	struct adv_json v;
	const struct adv_json *ev, *layer, *path, *pos, *proc;
	struct pending p = {0};
	char err[256];
	int rc;

	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line)
		return 0;
	if (strncmp(line, "ffio:", 5) == 0 || strncmp(line, "ffio ", 5) == 0) {
		r->log->nskipped++; /* a text message of the library */
		return 0;
	}
	if (*line != '{')
		return bad(r, "%s", "not a line of an ffio event log (expected a JSON object or an ffio: message)");
	rc = adv_json_parse(line, &v, err, sizeof err);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		return bad(r, "malformed JSON: %s", err);
	if (adv_json_get(&v, "trace")) {
		r->log->nskipped++;
		adv_json_free(&v);
		return 0;
	}
	ev = adv_json_get(&v, "event");
	layer = adv_json_get(&v, "layer");
	path = adv_json_get(&v, "path");
	pos = adv_json_get(&v, "position");
	if (!ev || ev->type != ADV_JSTR || !layer || layer->type != ADV_JSTR || strcmp(layer->str, "event") != 0) {
		rc = bad(r, "not an ffio event summary: %s", "no \"event\" label and \"layer\":\"event\"");
		goto out;
	}
	if (!path || path->type != ADV_JSTR || !*path->str) {
		rc = bad(r, "not an ffio event summary: %s", "no \"path\"");
		goto out;
	}
	if (!pos || pos->type != ADV_JNUM || !pos->is_uint || pos->u > 64) {
		rc = bad(r, "not an ffio event summary: %s", "no \"position\" in the stack");
		goto out;
	}
	p.position = (int)pos->u;
	p.proc = p.from = r->file_proc;
	if ((proc = adv_json_get(&v, "process"))) {
		if ((rc = proc_named(r, proc, &p.proc)))
			goto out;
		p.from = p.proc;
	} else if (r->per_record) {
		/* which process wrote it is unknown: count it as another one,
		 * the safe side for .sieve (after the one the file stands for) */
		if (r->np)
			p.proc = r->log->nprocs++;
	}
	if ((rc = read_ops(r, adv_json_get(&v, "ops"), &p)) ||
	    (rc = read_pattern(r, adv_json_get(&v, "read"), "read", &p.dir[0])) ||
	    (rc = read_pattern(r, adv_json_get(&v, "write"), "write", &p.dir[1])))
		goto out;
	p.given = strdup(path->str);
	p.path = resolve(path->str, r->cwd);
	if (!p.given || !p.path) {
		rc = -ENOMEM;
		goto out;
	}
	if (r->log->keep) {
		size_t n = strlen(line) + strlen(r->name) + 64;
		if (!(p.line = malloc(n))) {
			rc = -ENOMEM;
			goto out;
		}
		if (proc)
			snprintf(p.line, n, "%s", line);
		else
			snprintf(p.line, n, "{\"process\":\"%s#%d\",%s", r->name, p.proc, line + 1);
	}
	if (r->np == r->cap) {
		int nc = r->cap ? r->cap * 2 : 64;
		struct pending *np = adv_xrealloc(r->p, (size_t)nc, sizeof *np);
		if (!np) {
			rc = -ENOMEM;
			goto out;
		}
		r->p = np;
		r->cap = nc;
	}
	r->p[r->np++] = p;
	p.path = p.given = p.line = NULL;
out:
	free(p.path);
	free(p.given);
	free(p.line);
	adv_json_free(&v);
	return rc;
}

/* ---- merging ----------------------------------------------------------- */

static int add_proc(int **set, int *n, int proc)
{
	for (int i = 0; i < *n; i++)
		if ((*set)[i] == proc)
			return 0;
	int *ns = adv_xrealloc(*set, (size_t)*n + 1, sizeof *ns);
	if (!ns)
		return -ENOMEM;
	*set = ns;
	ns[(*n)++] = proc;
	return 0;
}

static struct adv_file *find_file(struct adv_log *log, const struct pending *p)
{
	for (int i = log->nfiles - 1; i >= 0; i--)
		if (strcmp(log->file[i].path, p->path) == 0)
			return &log->file[i];
	if (log->nfiles == log->cap) {
		int nc = log->cap ? log->cap * 2 : 64;
		struct adv_file *nf = adv_xrealloc(log->file, (size_t)nc, sizeof *nf);
		if (!nf)
			return NULL;
		log->file = nf;
		log->cap = nc;
	}
	struct adv_file *f = &log->file[log->nfiles];
	memset(f, 0, sizeof *f);
	f->path = strdup(p->path);
	f->given = strdup(p->given);
	if (!f->path || !f->given) {
		free(f->path);
		free(f->given);
		return NULL;
	}
	f->base = strrchr(f->path, '/') ? strrchr(f->path, '/') + 1 : f->path;
	f->size = -1;
	snprintf(f->fstype, sizeof f->fstype, "unknown");
	f->fs_local = -1;
	log->nfiles++;
	return f;
}

static int merge(struct adv_log *log, const struct pending *p)
{
	struct adv_file *f = find_file(log, p);
	int rc = 0;

	if (!f)
		return -ENOMEM;
	f->opens += p->opens;
	f->records++;
	for (int d = 0; d < 2; d++) {
		const struct adv_dir *s = &p->dir[d];
		struct adv_dir *t = &f->dir[d];
		t->calls += s->calls;
		t->errors += s->errors;
		t->bytes += s->bytes;
		t->seconds += s->seconds;
		t->sequential += s->sequential;
		t->strided += s->strided;
		t->random += s->random;
		for (int i = 0; i < ADV_STRIDES; i++)
			stride_add(t, s->stride[i].stride, s->stride[i].weight);
		for (int b = 0; b < ADV_BUCKETS; b++)
			t->hist[b] += s->hist[b];
	}
	/* one summary's extent: its bytes, or its strided run's span */
	for (int d = 0; d < 2; d++) {
		const struct adv_dir *s = &p->dir[d];
		double span = (double)s->bytes;
		for (int i = 0; i < ADV_STRIDES; i++)
			if ((double)s->stride[i].weight * fabs((double)s->stride[i].stride) > span)
				span = (double)s->stride[i].weight * fabs((double)s->stride[i].stride);
		if (span > (double)f->span)
			f->span = span > 9e18 ? INT64_MAX : (int64_t)span;
	}
	if (p->dir[1].calls)
		rc = add_proc(&f->writers, &f->nwriters, p->proc);
	if (!rc && p->dir[0].calls)
		rc = add_proc(&f->readers, &f->nreaders, p->proc);
	log->nrecords++;
	return rc;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->position - y->position;
}

/* Keep, of each (path, stack: process or log file), the records of the topmost event layer
 * (what the application asked for), and merge them. */
static int flush_pending(struct reader *r)
{
	int rc = 0;

	if (r->np > 1)
		qsort(r->p, (size_t)r->np, sizeof *r->p, cmp_pending);
	for (int i = 0; i < r->np && !rc; i++) {
		struct pending *q = &r->p[i];
		int j = i;
		/* the first record of the run has the lowest position */
		while (j > 0 && strcmp(r->p[j - 1].path, q->path) == 0 && r->p[j - 1].from == q->from)
			j--;
		if (r->p[j].position != q->position)
			continue;
		rc = merge(r->log, q);
		if (!rc && q->line && fprintf(r->log->keep, "%s\n", q->line) < 0)
			rc = -EIO;
	}
	for (int i = 0; i < r->np; i++) {
		free(r->p[i].path);
		free(r->p[i].given);
		free(r->p[i].line);
	}
	r->np = 0;
	return rc;
}

/* ---- files and directories ------------------------------------------------ */

static int read_file(struct reader *r, const char *name)
{
	FILE *fp = fopen(name, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	if (!fp) {
		rc = -errno;
		fprintf(stderr, "%s: cannot open the log %s: %s\n", ADV_NAME, name, strerror(errno));
		return rc;
	}
	r->name = name;
	r->line = 0;
	r->file_proc = r->log->nprocs++;
	while ((n = getline(&line, &cap, fp)) >= 0) {
		r->line++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if ((size_t)n != strlen(line)) {
			rc = bad(r, "%s", "a NUL byte in the line");
			break;
		}
		if ((rc = one_line(r, line)))
			break;
	}
	if (!rc && ferror(fp)) {
		rc = -EIO;
		fprintf(stderr, "%s: reading the log %s failed\n", ADV_NAME, name);
	}
	free(line);
	fclose(fp);
	if (rc == -ENOMEM)
		fprintf(stderr, "%s: out of memory reading %s\n", ADV_NAME, name);
	if (!rc)
		rc = flush_pending(r);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_any(struct reader *r, const char *path, int depth);

static int read_dir(struct reader *r, const char *path, int depth)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **names = NULL;
	int n = 0, rc = 0;

	if (!d) {
		rc = -errno;
		fprintf(stderr, "%s: cannot read the directory %s: %s\n", ADV_NAME, path, strerror(errno));
		return rc;
	}
	errno = 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || (len > 5 && strcmp(e->d_name + len - 5, ".done") == 0))
			continue; /* hidden, and the MPI ranks' completion markers */
		char **nn = adv_xrealloc(names, (size_t)n + 1, sizeof *nn);
		size_t plen = strlen(path) + len + 2;
		if (!nn || !(nn[n] = malloc(plen))) {
			if (nn)
				names = nn;
			rc = -ENOMEM;
			break;
		}
		names = nn;
		snprintf(names[n++], plen, "%s/%s", path, e->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(names, (size_t)n, sizeof *names, cmp_str);
	for (int i = 0; i < n && !rc; i++)
		rc = read_any(r, names[i], depth + 1);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc == -ENOMEM)
		fprintf(stderr, "%s: out of memory reading %s\n", ADV_NAME, path);
	return rc;
}

static int read_any(struct reader *r, const char *path, int depth)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		int rc = -errno;
		fprintf(stderr, "%s: %s: %s\n", ADV_NAME, path, strerror(errno));
		return rc;
	}
	if (S_ISDIR(st.st_mode)) {
		if (depth > DIR_DEPTH)
			return 0;
		return read_dir(r, path, depth);
	}
	if (!S_ISREG(st.st_mode)) {
		if (depth == 0) {
			fprintf(stderr, "%s: %s is neither a log file nor a directory\n", ADV_NAME, path);
			return -EINVAL;
		}
		return 0;
	}
	r->per_record = depth == 0;
	return read_file(r, path);
}

int adv_log_read(struct adv_log *log, const char *path, const char *cwd)
{
	struct reader r = {.log = log, .cwd = cwd};
	int rc = read_any(&r, path, 0);

	if (r.nprocs_named)
		log->nprocs = r.nprocs_named;
	for (int i = 0; i < r.np; i++) {
		free(r.p[i].path);
		free(r.p[i].given);
		free(r.p[i].line);
	}
	free(r.p);
	for (int i = 0; i < r.nprocs_named; i++)
		free(r.procs[i]);
	free(r.procs);
	return rc;
}

/* ---- after the run: sizes and file systems --------------------------------- */

static const struct {
	unsigned long magic;
	const char *name;
	int local;
} fs_types[] = {
	{0xEF53, "ext4", 1},          {0x58465342, "xfs", 1},      {0x9123683E, "btrfs", 1},
	{0x01021994, "tmpfs", 1},     {0x794c7630, "overlayfs", 1}, {0x2FC12FC1, "zfs", 1},
	{0xF2F52010, "f2fs", 1},      {0x4d44, "vfat", 1},         {0x5346544e, "ntfs", 1},
	{0x858458f6, "ramfs", 1},     {0x6969, "nfs", 0},          {0x0BD00BD0, "lustre", 0},
	{0x47504653, "gpfs", 0},      {0xFF534D42, "cifs", 0},     {0xFE534D42, "smb2", 0},
	{0x65735546, "fuse", 0},      {0x19830326, "beegfs", 0},   {0x00C36400, "ceph", 0},
	{0x20030528, "pvfs2", 0},     {0x01021997, "9p", 0},       {0x013111A8, "ibrix", 0},
	{0x6B414653, "afs", 0},       {0x5346414F, "openafs", 0},  {0xaad7aaea, "panfs", 0},
	/* made by the kernel: never cached (local 2) */
	{0x9fa0, "proc", 2},          {0x62656572, "sysfs", 2},    {0x27e0eb, "cgroup", 2},
	{0x63677270, "cgroup2", 2},   {0x64626720, "debugfs", 2},  {0x1cd1, "devpts", 2},
	{0x73636673, "securityfs", 2}, {0xcafe4a11, "bpf", 2},     {0x74726163, "tracefs", 2},
};

void adv_log_stat(struct adv_log *log)
{
	for (int i = 0; i < log->nfiles; i++) {
		struct adv_file *f = &log->file[i];
		struct stat st;
		struct statfs sf;
		int have;

		/* the writers and the other readers of one file */
		for (int r = 0; r < f->nreaders && !f->shared_rw; r++) {
			int wrote = 0;
			for (int w = 0; w < f->nwriters; w++)
				wrote |= f->writers[w] == f->readers[r];
			f->shared_rw = !wrote && f->nwriters > 0;
		}
		if (strncmp(f->path, "/proc/", 6) == 0 || strncmp(f->path, "/sys/", 5) == 0)
			f->pseudo = 1;
		if (stat(f->path, &st) == 0 && S_ISREG(st.st_mode))
			f->size = (int64_t)st.st_size;
		have = statfs(f->path, &sf) == 0;
		if (!have) {
			char *dir = strdup(f->path), *slash = dir ? strrchr(dir, '/') : NULL;
			if (slash) {
				*(slash == dir ? slash + 1 : slash) = '\0';
				have = statfs(dir, &sf) == 0;
			}
			free(dir);
		}
		if (!have)
			continue;
		snprintf(f->fstype, sizeof f->fstype, "0x%lx", (unsigned long)sf.f_type);
		f->fs_local = -1;
		for (size_t k = 0; k < sizeof fs_types / sizeof fs_types[0]; k++)
			if ((unsigned long)sf.f_type == fs_types[k].magic) {
				snprintf(f->fstype, sizeof f->fstype, "%s", fs_types[k].name);
				f->fs_local = fs_types[k].local == 2 ? 1 : fs_types[k].local;
				f->pseudo |= fs_types[k].local == 2;
			}
	}
}

void adv_log_free(struct adv_log *log)
{
	for (int i = 0; i < log->nfiles; i++) {
		free(log->file[i].path);
		free(log->file[i].given);
		free(log->file[i].writers);
		free(log->file[i].readers);
	}
	free(log->file);
	log->file = NULL;
	log->nfiles = log->cap = 0;
}
