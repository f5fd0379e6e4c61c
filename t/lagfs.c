/* t/lagfs.c -- a test file system (FUSE, in memory) whose server tells a
 * file's size late, as a client that caches writes does (GlusterFS's
 * write-behind): a write is stored and acknowledged at once, and reads
 * see it, but getattr answers the size the file had at its last flush,
 * fsync, release or truncate.  The kernel takes a size from getattr for
 * its own, so a plain stat between a write and a read makes the kernel
 * end that read early; a program that makes no stat call never meets
 * it.  t/fuse_lag runs ffio on it: ffio must not ask such sizes for
 * itself.
 *
 * Usage: lagfs [FUSE options] MOUNTPOINT (with -f -s from t/fuse_lag).
 * LAGFS_READY_FD, when set, is a descriptor that gets one byte once the
 * kernel has started the session (init), then is closed.
 * Attributes time out at once (every plain stat asks), entries never
 * within a test (opens do not ask again); the kernel's data invalidation
 * on size changes (auto_inval_data) is off, as GlusterFS has it.  A
 * single directory of at most MAX_FILES regular files. */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILES 16
#define MAX_SIZE ((off_t)64 << 20)

struct lagfile {
	char name[256];
	char *data;
	off_t size; /* the bytes written */
	off_t told; /* the size getattr answers */
	mode_t mode;
	int used;
};

static struct lagfile files[MAX_FILES];

static struct lagfile *lookup(const char *path)
{
	if (path[0] != '/' || strchr(path + 1, '/'))
		return NULL;
	for (int i = 0; i < MAX_FILES; i++)
		if (files[i].used && strcmp(files[i].name, path + 1) == 0)
			return &files[i];
	return NULL;
}

static void *lag_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 3600;
	cfg->negative_timeout = 0;
	const char *ready = getenv("LAGFS_READY_FD");
	if (ready) {
		int fd = atoi(ready);
		if (write(fd, "r", 1) != 1)
			perror("lagfs: ready");
		close(fd);
	}
	return NULL;
}

static int lag_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof *st);
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	struct lagfile *f = lookup(path);
	if (!f)
		return -ENOENT;
	st->st_mode = S_IFREG | f->mode;
	st->st_nlink = 1;
	st->st_size = f->told;
	st->st_blocks = (f->told + 511) / 512;
	return 0;
}

static int lag_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
		       enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	if (strcmp(path, "/") != 0)
		return -ENOTDIR;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (int i = 0; i < MAX_FILES; i++)
		if (files[i].used)
			fill(buf, files[i].name, NULL, 0, 0);
	return 0;
}

static int lag_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)fi;
	if (lookup(path))
		return 0;
	if (path[0] != '/' || strchr(path + 1, '/') || strlen(path + 1) >= sizeof files[0].name)
		return -EINVAL;
	for (int i = 0; i < MAX_FILES; i++)
		if (!files[i].used) {
			files[i] = (struct lagfile){.mode = mode & 07777, .used = 1};
			strcpy(files[i].name, path + 1);
			return 0;
		}
	return -ENOSPC;
}

static int lag_open(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	return lookup(path) ? 0 : -ENOENT;
}

static int lag_read(const char *path, char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	struct lagfile *f = lookup(path);
	if (!f)
		return -ENOENT;
	if (off >= f->size)
		return 0;
	if ((off_t)n > f->size - off)
		n = (size_t)(f->size - off);
	memcpy(buf, f->data + off, n);
	return (int)n;
}

/* The file holds len bytes (new ones zeros). */
static int resize(struct lagfile *f, off_t len)
{
	if (len > MAX_SIZE)
		return -EFBIG;
	if (len > f->size) {
		char *d = realloc(f->data, (size_t)len);
		if (!d)
			return -ENOMEM;
		memset(d + f->size, 0, (size_t)(len - f->size));
		f->data = d;
	}
	f->size = len;
	return 0;
}

static int lag_write(const char *path, const char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	struct lagfile *f = lookup(path);
	if (!f)
		return -ENOENT;
	int err = off + (off_t)n > f->size ? resize(f, off + (off_t)n) : 0;
	if (err)
		return err;
	memcpy(f->data + off, buf, n);
	return (int)n; /* told stays: the size reaches the server later */
}

static int lag_truncate(const char *path, off_t len, struct fuse_file_info *fi)
{
	(void)fi;
	struct lagfile *f = lookup(path);
	if (!f)
		return -ENOENT;
	int err = resize(f, len);
	if (err == 0)
		f->told = len;
	return err;
}

/* What the client held reaches the server: the size is told. */
static int tell(const char *path)
{
	struct lagfile *f = lookup(path);
	if (!f)
		return -ENOENT;
	f->told = f->size;
	return 0;
}

static int lag_flush(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	return tell(path);
}

static int lag_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)datasync, (void)fi;
	return tell(path);
}

static int lag_release(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	return tell(path);
}

static int lag_unlink(const char *path)
{
	struct lagfile *f = lookup(path);
	if (!f)
		return -ENOENT;
	free(f->data);
	*f = (struct lagfile){0};
	return 0;
}

static int lag_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	(void)tv, (void)fi;
	return lookup(path) ? 0 : -ENOENT;
}

static const struct fuse_operations lag_ops = {
	.init = lag_init,
	.getattr = lag_getattr,
	.readdir = lag_readdir,
	.create = lag_create,
	.open = lag_open,
	.read = lag_read,
	.write = lag_write,
	.truncate = lag_truncate,
	.flush = lag_flush,
	.fsync = lag_fsync,
	.release = lag_release,
	.unlink = lag_unlink,
	.utimens = lag_utimens,
};

int main(int argc, char **argv)
{
	return fuse_main(argc, argv, &lag_ops, NULL);
}
