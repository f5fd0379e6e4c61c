/* libffio/file.c -- the life of open files, after the kernel's three levels
 * (ffio-internal.h): one ffio_file per file (device, inode) in the process,
 * holding the stack of layers and ffio's own descriptor of the file; one
 * ffio_ofd per open file description, shared by dup'ed descriptors; the
 * descriptor table.  Opening (a second open of a file joins its stack),
 * closing (the last descriptor of a file flushes and closes the stack),
 * descriptors closed behind ffio's back, files that pass through to the
 * kernel, and the process events: fork, exec, exit.
 *
 * Locks: files_lock guards the list of files, the counts, the descriptions'
 * lists and the descriptor table; f->lock guards a file's stack, its
 * descriptions' positions and flags.  files_lock is taken first. */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ffio-internal.h"

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ffio_file *files; /* every open file (files_lock) */
static int fd_high;              /* highest descriptor ever attached */
pid_t ffio_pid;

/* Files the process reaches behind ffio (a mapping, a stdio stream): never
 * managed while held; a mapping holds for good (files_lock). */
static struct kernel_hold {
	dev_t dev;
	ino_t ino;
	int holds; /* INT_MAX: for good */
} *held;
static int nheld, held_cap;

int ffio_in_vfork_child(void)
{
	return ffio_pid != 0 && getpid() != ffio_pid;
}

/* ---- files ------------------------------------------------------------- */

/* The file lost its stack: no description hits.  A file passes through
 * only with its stack gone (close_stack, private_lost), so this is the
 * one place that clears them. */
static void no_hits(struct ffio_file *f)
{
	for (struct ffio_ofd *o = f->ofds; o; o = o->next)
		ffio_ofd_hits(o);
}

static void free_layers(struct ffio_file *f)
{
	struct ffio_layer *l = f->top, *next;

	for (; l; l = next) {
		next = l->below;
		free(l);
	}
	f->top = NULL;
	no_hits(f);
}

/* ffio's descriptor kept for the program's locks (close_stack) forgotten:
 * closed with the file, or its number the program's now. */
static void kept_forget(struct ffio_file *f)
{
	if (ffio_fd_get(f->kept_fd) == &f->priv)
		ffio_fd_detach(f->kept_fd);
	ffio_fd_disown(f->kept_fd);
	f->kept_fd = -1;
}

static void file_free(struct ffio_file *f)
{
	if (f->kept_fd >= 0) { /* the program closed the file: its locks are gone */
		int fd = f->kept_fd;
		kept_forget(f);
		(void)ffio_real.close(fd);
	}
	free_layers(f);
	pthread_mutex_destroy(&f->lock);
	free(f->path);
	free(f);
}

static void put_locked(struct ffio_file *f)
{
	if (--f->refs == 0)
		file_free(f);
}

void ffio_file_get(struct ffio_file *f)
{
	pthread_mutex_lock(&files_lock);
	f->refs++;
	pthread_mutex_unlock(&files_lock);
}

void ffio_file_put(struct ffio_file *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&files_lock);
	put_locked(f);
	pthread_mutex_unlock(&files_lock);
}

void ffio_file_note_lock(struct ffio_file *f, const struct flock *fl, int posix)
{
	off_t lo = fl->l_start, hi = fl->l_len ? lo + fl->l_len : (off_t)INT64_MAX;
	if (fl->l_len < 0) { /* [start + len, start) */
		hi = lo;
		lo += fl->l_len;
	}
	if (posix && fl->l_type != F_UNLCK)
		__atomic_store_n(&f->posix_locked, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&f->lock);
	if (fl->l_type != F_UNLCK) {
		f->app_lock_lo = lo;
		f->app_lock_hi = hi;
	} else if (lo < f->app_lock_hi && f->app_lock_lo < hi) { /* any of it: none */
		f->app_lock_lo = f->app_lock_hi = 0;
	}
	pthread_mutex_unlock(&f->lock);
}

static int build_stack(struct ffio_file *f, struct ffio_entry *e)
{
	struct ffio_layer **link = &f->top;

	ffio_signal_file_opened();
	for (int i = 0; i < e->nlayers; i++) {
		const struct ffio_layer_ops *ops = e->layer[i].ops;
		size_t size = ops->instance_size < sizeof(struct ffio_layer) ? sizeof(struct ffio_layer) : ops->instance_size;
		struct ffio_layer *l = calloc(1, size);
		if (!l)
			return -ENOMEM;
		l->ops = ops;
		l->spec = &e->layer[i];
		l->file = f;
		l->index = i;
		*link = l;
		link = &l->below;
	}
	return f->top ? 0 : -EINVAL;
}

static struct kernel_hold *hold_of(dev_t dev, ino_t ino)
{
	for (int i = 0; i < nheld; i++)
		if (held[i].dev == dev && held[i].ino == ino)
			return &held[i];
	return NULL;
}

static int is_raw(dev_t dev, ino_t ino)
{
	return nheld > 0 && hold_of(dev, ino) != NULL;
}

/* One more hold of (dev, ino) (files_lock). */
static void hold_locked(dev_t dev, ino_t ino, int forever)
{
	struct kernel_hold *h = hold_of(dev, ino);
	if (!h) {
		if (nheld == held_cap) {
			int cap = held_cap ? 2 * held_cap : 16;
			void *p = realloc(held, (size_t)cap * sizeof *held);
			if (!p)
				return; /* only later opens are at stake: they will be cached */
			held = p;
			held_cap = cap;
		}
		h = &held[nheld++];
		*h = (struct kernel_hold){.dev = dev, .ino = ino};
	}
	if (forever || h->holds == INT_MAX - 1)
		h->holds = INT_MAX;
	else if (h->holds != INT_MAX)
		h->holds++;
}

/* The open file on (dev, ino) whose stack is in use, or NULL (files_lock). */
static struct ffio_file *find_locked(dev_t dev, ino_t ino)
{
	for (struct ffio_file *f = files; f; f = f->next)
		if (f->users > 0 && f->dev == dev && f->ino == ino)
			return f;
	return NULL;
}

struct ffio_file *ffio_file_find_inode(dev_t dev, ino_t ino)
{
	struct ffio_file *f;

	if (!files)
		return NULL;
	pthread_mutex_lock(&files_lock);
	f = find_locked(dev, ino);
	if (f)
		f->refs++;
	pthread_mutex_unlock(&files_lock);
	return f;
}

int ffio_path_inode(const char *path, dev_t *dev, ino_t *ino)
{
	struct stat st;

	ffio_real_init();
	int err = ffio_kernel_stat_at(AT_FDCWD, path, 0, &st);
	if (err < 0)
		return err;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

static void unlink_file(struct ffio_file *f)
{
	if (f->prev)
		f->prev->next = f->next;
	else if (files == f)
		files = f->next;
	if (f->next)
		f->next->prev = f->prev;
	f->next = f->prev = NULL;
}

/* Close f's stack (files_lock and f->lock held): the table forgets ffio's
 * descriptor before the kernel can give its number to anybody else. */
static void close_stack(struct ffio_file *f)
{
	if (!f->top)
		return;
	if (f->fd >= 0 && f->posix_locked && f->users > 0) {
		/* Passing through with the file open: closing ffio's descriptor
		 * would drop the program's record locks.  Kept till the file's
		 * end, where the program's close has dropped them. */
		f->kept_fd = f->fd;
		f->fd = -1;
		ffio_fd_own_record(f->kept_fd);
	} else if (f->fd >= 0 && ffio_fd_get(f->fd) == &f->priv) {
		ffio_fd_detach(f->fd);
	}
	ffio_in_lib++;
	int err = ffio_layer_close(f->top);
	ffio_in_lib--;
	ffio_file_set_error(f, err);
	free_layers(f);
	f->fd = -1;
}

int ffio_file_give_offsets(struct ffio_file *f)
{
	int first = 0;
	for (struct ffio_ofd *o = f->ofds; o; o = o->next)
		if (ffio_real.lseek(o->kfd, o->pos, SEEK_SET) < 0 && errno != ESPIPE && !first)
			first = -errno;
	return first;
}

static int pass_through_locked(struct ffio_file *f, int forever)
{
	int err = 0;

	if (forever)
		hold_locked(f->dev, f->ino, 1);
	if (f->through)
		return 0;
	ffio_in_lib++;
	err = ffio_layer_flush(f->top);
	ffio_in_lib--;
	ffio_file_set_error(f, err);
	int e2 = ffio_file_give_offsets(f);
	close_stack(f);
	f->through = 1;
	return err < 0 ? err : e2;
}

int ffio_kernel_hold(dev_t dev, ino_t ino, int forever)
{
	int err = 0;

	pthread_mutex_lock(&files_lock);
	hold_locked(dev, ino, forever);
	struct ffio_file *f = find_locked(dev, ino);
	if (f) {
		pthread_mutex_lock(&f->lock);
		err = pass_through_locked(f, 0);
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_unlock(&files_lock);
	return err;
}

void ffio_kernel_release(dev_t dev, ino_t ino)
{
	pthread_mutex_lock(&files_lock);
	struct kernel_hold *h = hold_of(dev, ino);
	if (h && h->holds != INT_MAX && --h->holds == 0)
		*h = held[--nheld];
	pthread_mutex_unlock(&files_lock);
}

int ffio_file_pass_through(struct ffio_file *f, int forever)
{
	pthread_mutex_lock(&files_lock);
	pthread_mutex_lock(&f->lock);
	int err = pass_through_locked(f, forever);
	pthread_mutex_unlock(&f->lock);
	pthread_mutex_unlock(&files_lock);
	return err;
}

/* ffio's own descriptor of the file the application opened as appfd: the
 * same file reopened through /proc (it may have been renamed or unlinked
 * since, or be an O_TMPFILE), by its path where /proc is missing; read and
 * write when the application may write (a cache reads what it fills gaps
 * with), else read only.  Never O_DIRECT, even when the application opened
 * so: the stack serves every description of the file, plain ones too, and
 * a layer's .direct says what goes below; an O_DIRECT description's
 * unaligned calls are the kernel's (ofd.c's direct_odd). */
static int open_private(struct ffio_file *f, int appfd, int dirfd, const char *path, int flags,
			const struct stat *st)
{
	char proc[40];
	int acc = flags & O_ACCMODE, modes[2] = {acc == O_RDONLY ? O_RDONLY : O_RDWR, acc}, err = -EINVAL;
	int base = O_CLOEXEC;
	struct stat pst;

	snprintf(proc, sizeof proc, "/proc/self/fd/%d", appfd);
	for (int i = 0; i < 2; i++) {
		if (i == 1 && modes[1] == modes[0])
			break;
		err = ffio_layer_open(f->top, AT_FDCWD, proc, base | modes[i], 0);
		if (err == -ENOENT)
			err = ffio_layer_open(f->top, dirfd, path, base | modes[i], 0);
		if (err == 0 && f->fd < 0)
			err = -EBADF; /* a stack without a bottom that opens the file */
		if (err == 0) {
			f->oflags = base | modes[i];
			break;
		}
		if (err != -EACCES && err != -EPERM && err != -EROFS && err != -ETXTBSY)
			break;
	}
	if (err < 0)
		return err;
	if (ffio_kernel_stat(f->fd, &pst) < 0 || pst.st_dev != st->st_dev || pst.st_ino != st->st_ino) {
		close_stack(f); /* the path names another file now */
		return -ESTALE;
	}
	return 0;
}

static int release_locked(int fd, int kclose);

static struct ffio_file *file_create(struct ffio_entry *e, int appfd, int dirfd, const char *path,
				     int flags, const struct stat *st, int fs, int *errp)
{
	struct ffio_file *f = calloc(1, sizeof *f);
	int err;

	if (!f) {
		*errp = -ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	f->fd = -1;
	f->kept_fd = -1;
	f->entry = e;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->priv.file = f;
	f->priv.is_private = 1;
	f->path = strdup(path);
	err = f->path ? build_stack(f, e) : -ENOMEM;
	if (err == 0) {
		ffio_in_lib++;
		pthread_mutex_lock(&f->lock);
		err = open_private(f, appfd, dirfd, path, flags, st);
		pthread_mutex_unlock(&f->lock);
		ffio_in_lib--;
	}
	if (err < 0) {
		*errp = err;
		file_free(f);
		return NULL;
	}
	f->max_pos = ffio_kernel_max_pos(f->fd, f->dev);
	f->write_whole = (fs & FFIO_FS_WRITE_WHOLE) != 0;
	f->wmax_pos = f->max_pos < ffio_fsize_limit ? f->max_pos : ffio_fsize_limit;
	/* The table knows ffio's own descriptor: the program never closes it. */
	if (ffio_fd_get(f->fd))
		(void)release_locked(f->fd, 0);
	if (f->fd < ffio_fdtab_size)
		ffio_fdtab[f->fd] = &f->priv; /* not under fd_high: no scan looks for it */
	f->next = files;
	if (files)
		files->prev = f;
	files = f;
	return f;
}

/* ---- descriptors ------------------------------------------------------- */

/* Another descriptor of o still attached, other than fd, or -1. */
static int other_fd(struct ffio_ofd *o, int fd)
{
	for (int i = 0; i <= fd_high && i < ffio_fdtab_size; i++)
		if (i != fd && ffio_fdtab[i] == o)
			return i;
	return -1;
}

/* Descriptors 0, 1 and 2 are stdio's standard streams too, which write
 * with the C library's internal calls: a file given one of them passes
 * through to the kernel (files_lock held). */
static void attach_locked(int fd, struct ffio_ofd *o)
{
	if (ffio_fd_attach(fd, o) == 0 && fd > fd_high)
		fd_high = fd;
	if (fd <= STDERR_FILENO && !o->file->through) {
		pthread_mutex_lock(&o->file->lock);
		(void)pass_through_locked(o->file, 0);
		pthread_mutex_unlock(&o->file->lock);
	}
}

/* The file lost ffio's own descriptor behind ffio's back (a raw close, a
 * dup2 onto it): what the stack still holds cannot be written. */
static void private_lost(struct ffio_file *f)
{
	pthread_mutex_lock(&f->lock);
	ffio_log("%s: ffio's own descriptor %d was closed by the program; unwritten data is lost",
		 f->path, f->fd);
	ffio_fd_detach(f->fd);
	ffio_file_set_error(f, -EIO);
	f->fd = -1; /* every call of the stack now fails with EBADF */
	if (f->top) {
		ffio_in_lib++;
		(void)ffio_layer_close(f->top);
		ffio_in_lib--;
		free_layers(f);
	}
	f->through = 1;
	pthread_mutex_unlock(&f->lock);
}

/* Drop descriptor fd from the table (files_lock held); kclose: close it in
 * the kernel too. */
static int release_locked(int fd, int kclose)
{
	struct ffio_ofd *o = ffio_fd_get(fd);
	int err = 0;

	if (!o)
		return kclose && ffio_real.close(fd) < 0 ? -errno : 0;
	if (o->is_private) {
		if (kclose)
			return -EBADF; /* not the program's to close */
		if (o->file->kept_fd == fd) { /* kept only for the locks */
			kept_forget(o->file);
			return 0;
		}
		private_lost(o->file);
		return 0;
	}
	struct ffio_file *f = o->file;
	ffio_fd_detach(fd);
	o->refs--;
	if (o->refs > 0 && o->kfd == fd)
		o->kfd = other_fd(o, fd);
	int last_ofd = o->refs == 0;
	if (last_ofd) {
		struct ffio_ofd **p = &f->ofds;
		while (*p && *p != o)
			p = &(*p)->next;
		if (*p)
			*p = o->next;
		f->users--;
	}
	pthread_mutex_lock(&f->lock);
	if (f->users == 0) {
		/* The last one: flush and close the stack, then the descriptor. */
		unlink_file(f);
		close_stack(f);
	} else if (kclose && f->posix_locked && f->top) {
		/* Closing any descriptor releases the process's record locks:
		 * what they guarded goes to the file first. */
		f->app_lock_lo = f->app_lock_hi = 0;
		ffio_in_lib++;
		ffio_file_set_error(f, ffio_layer_flush(f->top));
		ffio_in_lib--;
	}
	if (kclose && ffio_real.close(fd) < 0 && errno != EINTR)
		err = -errno;
	if (err == 0)
		err = ffio_file_take_error(f);
	pthread_mutex_unlock(&f->lock);
	if (last_ofd) {
		free(o);
		put_locked(f);
	}
	return err;
}

int ffio_fd_close(int fd, int kclose)
{
	pthread_mutex_lock(&files_lock);
	int err = release_locked(fd, kclose);
	pthread_mutex_unlock(&files_lock);
	return err;
}

void ffio_fd_fresh(int fd)
{
	if (fd < 0 || !ffio_fd_get(fd))
		return;
	pthread_mutex_lock(&files_lock);
	(void)release_locked(fd, 0);
	pthread_mutex_unlock(&files_lock);
}

int ffio_fd_dup(int oldfd, int newfd)
{
	int err = 0;

	pthread_mutex_lock(&files_lock);
	struct ffio_ofd *o = ffio_fd_get(oldfd);
	if (!o || o->is_private) {
		err = -EBADF;
	} else {
		if (ffio_fd_get(newfd))
			(void)release_locked(newfd, 0); /* closed behind ffio's back */
		attach_locked(newfd, o);
		if (ffio_fd_get(newfd) != o)
			err = -EMFILE;
	}
	pthread_mutex_unlock(&files_lock);
	return err;
}

void ffio_fd_close_range(unsigned lo, unsigned hi)
{
	pthread_mutex_lock(&files_lock);
	for (unsigned i = lo; i <= hi && i <= (unsigned)fd_high && i < (unsigned)ffio_fdtab_size; i++) {
		struct ffio_ofd *o = ffio_fdtab[i];
		if (o && !o->is_private) {
			int err = release_locked((int)i, 0);
			if (err < 0)
				ffio_log("descriptor %u closed with a range: %s", i, strerror(-err));
		}
	}
	pthread_mutex_unlock(&files_lock);
}

int ffio_any_open(void)
{
	return __atomic_load_n(&files, __ATOMIC_RELAXED) != NULL;
}

struct ffio_file *ffio_fd_file(int fd)
{
	struct ffio_ofd *o = ffio_fd_get(fd);
	return o && !o->is_private ? o->file : NULL;
}

int ffio_fd_is_private(int fd)
{
	struct ffio_ofd *o = ffio_fd_get(fd);
	return o && o->is_private;
}

int ffio_private_next(int fd)
{
	int best = ffio_fd_own_next(fd);
	pthread_mutex_lock(&files_lock);
	for (struct ffio_file *f = files; f; f = f->next)
		if (f->fd >= fd && (best < 0 || f->fd < best))
			best = f->fd;
	pthread_mutex_unlock(&files_lock);
	return best;
}

int ffio_private_evict(int lo, int hi)
{
	int err = 0;

	pthread_mutex_lock(&files_lock);
	for (struct ffio_file *f = files; f && err == 0; f = f->next) {
		if (f->kept_fd >= lo && f->kept_fd <= hi)
			kept_forget(f); /* the program's now */
		if (f->fd < lo || f->fd > hi || !f->top)
			continue;
		pthread_mutex_lock(&f->lock);
		/* Not moved: a bottom may have registered the descriptor (io_uring);
		 * the file passes through instead, its stack flushed and closed. */
		err = pass_through_locked(f, 0);
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_unlock(&files_lock);
	return err;
}

int ffio_private_give_up(int below)
{
	struct ffio_file *low = NULL;

	pthread_mutex_lock(&files_lock);
	for (struct ffio_file *f = files; f; f = f->next) /* not one whose locks would go */
		if (f->top && f->fd >= 0 && f->fd < below && !f->posix_locked && (!low || f->fd < low->fd))
			low = f;
	if (low) {
		pthread_mutex_lock(&low->lock);
		int err = pass_through_locked(low, 0);
		pthread_mutex_unlock(&low->lock);
		if (err < 0)
			ffio_log("%s: passed through to free a descriptor; writing back failed: %s",
				 low->path, strerror(-err));
	}
	pthread_mutex_unlock(&files_lock);
	return low != NULL;
}

/* ---- opening ----------------------------------------------------------- */

/* f's writes to the kernel; then (drop_clean) the stack forgets its clean
 * data and sizes, even when writing back failed: what it read may be stale
 * either way, and the failure stays in f->error (f->lock held). */
int ffio_file_write_back(struct ffio_file *f, int drop_clean)
{
	int err = 0;
	if (f->top) {
		ffio_in_lib++;
		err = ffio_layer_flush(f->top);
		if (drop_clean) {
			int e2 = ffio_layer_invalidate(f->top);
			if (err == 0)
				err = e2;
		}
		ffio_in_lib--;
	}
	return err;
}

static int lacks_access(const struct ffio_file *f, int flags)
{
	int acc = flags & O_ACCMODE, have = f->oflags & O_ACCMODE;
	return (acc != O_WRONLY && have == O_WRONLY) || (acc != O_RDONLY && have == O_RDONLY);
}

/* Attach the kernel's new descriptor fd (opened with flags) to its file,
 * creating the file for entry e when it is not open yet. */
static void manage(struct ffio_entry *e, int fd, int dirfd, const char *path, int flags,
		   int any_type)
{
	struct stat st;
	int err = 0, created = 0, fs = 0;

	if (ffio_in_vfork_child())
		return; /* the table is the parent's */
	int plain = ffio_kernel_stat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || (any_type && e));
	if (!plain && e && S_ISREG(st.st_mode))
		fs = ffio_kernel_fs(fd);
	if (plain || (!any_type && (fs & FFIO_FS_KERNEL_MADE))) {
		ffio_fd_fresh(fd); /* pipes, devices, /proc, /sys: never cached */
		if (e && ffio_open_diags)
			ffio_log("%s: not cached (not a file of data)", path);
		return;
	}
	pthread_mutex_lock(&files_lock);
	if (ffio_fd_get(fd))
		(void)release_locked(fd, 0); /* its number was closed behind ffio's back */
	struct ffio_file *f = is_raw(st.st_dev, st.st_ino) ? NULL : find_locked(st.st_dev, st.st_ino);
	if (!f && e && !is_raw(st.st_dev, st.st_ino)) {
		f = file_create(e, fd, dirfd, path, flags, &st, fs, &err);
		created = f != NULL;
	}
	struct ffio_ofd *o = f ? calloc(1, sizeof *o) : NULL;
	if (f && !o) {
		err = -ENOMEM;
		if (created) {
			pthread_mutex_lock(&f->lock);
			unlink_file(f);
			close_stack(f);
			pthread_mutex_unlock(&f->lock);
			file_free(f);
		}
		f = NULL;
	}
	if (!f) {
		pthread_mutex_unlock(&files_lock);
		/* Out of descriptors is the program's business: said on request. */
		if (err < 0 && e && (ffio_open_diags || (err != -EMFILE && err != -ENFILE)))
			ffio_log("%s: not managed (plain I/O): %s", path, strerror(-err));
		return;
	}
	o->file = f;
	o->oflags = flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC);
	o->kfd = fd;
	o->next = f->ofds;
	f->ofds = o;
	ffio_ofd_hits(o);
	f->users++;
	f->refs++;
	attach_locked(fd, o);
	pthread_mutex_lock(&f->lock);
	if (!created && f->top) {
		if (lacks_access(f, flags)) {
			pass_through_locked(f, 0);
		} else if (flags & O_TRUNC) {
			/* The kernel emptied the file: so is what the stack holds. */
			ffio_in_lib++;
			ffio_file_set_error(f, ffio_layer_truncate(f->top, 0));
			ffio_in_lib--;
		} else {
			/* Close to open: the new descriptor reads what other
			 * processes wrote since the stack read the file. */
			ffio_file_set_error(f, ffio_file_write_back(f, 1));
		}
	}
	pthread_mutex_unlock(&f->lock);
	pthread_mutex_unlock(&files_lock);
}

int ffio_open(struct ffio_entry *e, int dirfd, const char *path, int flags, mode_t mode,
	      int any_type)
{
	int fd;
	/* The program's open (ffio_in_lib is 1 from open_impl, 0 from ffopen), again
	 * while ffio can make room for it (FFIO_FD_ROOM). */
	while ((fd = ffio_real.openat(dirfd, path, flags, mode)) < 0 && errno == EMFILE &&
	       ffio_in_lib <= 1 && ffio_fd_pressure())
		;
	if (fd < 0)
		return -errno;
	ffio_fd_forget(fd);
	if (e || files)
		manage(e, fd, dirfd, path, flags, any_type);
	else if (ffio_fd_get(fd))
		ffio_fd_fresh(fd);
	return fd;
}

/* ---- holding a file open without a descriptor --------------------------- */

void ffio_file_hold(struct ffio_file *f)
{
	pthread_mutex_lock(&files_lock);
	f->users++;
	f->refs++;
	pthread_mutex_unlock(&files_lock);
}

int ffio_file_unhold(struct ffio_file *f)
{
	int err = 0;

	pthread_mutex_lock(&files_lock);
	pthread_mutex_lock(&f->lock);
	if (--f->users == 0) {
		unlink_file(f);
		close_stack(f);
	}
	err = ffio_file_take_error(f);
	pthread_mutex_unlock(&f->lock);
	put_locked(f);
	pthread_mutex_unlock(&files_lock);
	return err;
}

/* ---- process events ----------------------------------------------------- */

void ffio_files_fsize_limit(void)
{
	pthread_mutex_lock(&files_lock);
	off_t limit = __atomic_load_n(&ffio_fsize_limit, __ATOMIC_RELAXED);
	for (struct ffio_file *f = files; f; f = f->next)
		__atomic_store_n(&f->wmax_pos, f->max_pos < limit ? f->max_pos : limit, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&files_lock);
}

int ffio_files_order(int drop_clean, const struct ffio_file *except)
{
	int first = 0;

	if (!ffio_any_open() || ffio_in_vfork_child())
		return 0;
	pthread_mutex_lock(&files_lock);
	for (struct ffio_file *f = files; f; f = f->next) {
		int err = 0;
		if (f == except)
			continue;
		/* A message heard tells nothing new of a file this process
		 * alone writes (glue: netCDF without NC_SHARE): its cached
		 * data stays, dirty and clean (coherence.c). */
		pthread_mutex_lock(&f->lock);
		if (ffio_thread.hearing && (f->glue_flags & FFIO_FILE_SIEVE)) {
			pthread_mutex_unlock(&f->lock);
			continue;
		}
		if (drop_clean == FFIO_ORDER_FORGET && f->top) {
			ffio_in_lib++;
			err = ffio_layer_invalidate(f->top);
			ffio_in_lib--;
		} else if (drop_clean != FFIO_ORDER_FORGET) {
			err = ffio_file_write_back(f, drop_clean);
		}
		ffio_file_set_error(f, err);
		if (!first)
			first = err;
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_unlock(&files_lock);
	return first;
}

int ffio_flush_all(void)
{
	int first = 0, vforked = ffio_in_vfork_child();

	pthread_mutex_lock(&files_lock);
	for (struct ffio_file *f = files; f; f = f->next) {
		/* A vfork child that closed ffio's descriptors (after flushing:
		 * close_range) has nothing left to write them with. */
		if (vforked && f->fd >= 0 && ffio_real.fcntl(f->fd, F_GETFD) < 0)
			continue;
		pthread_mutex_lock(&f->lock);
		ffio_in_lib++;
		int err = f->top ? ffio_layer_flush(f->top) : 0;
		ffio_in_lib--;
		if (err < 0) {
			ffio_log("%s: writing back cached data failed: %s", f->path, strerror(-err));
			ffio_file_set_error(f, err);
			if (!first)
				first = err;
		}
		if (!f->through)
			(void)ffio_file_give_offsets(f);
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_unlock(&files_lock);
	return first;
}

void ffio_exit_all(void)
{
	pthread_mutex_lock(&files_lock);
	for (struct ffio_file *f = files; f; f = f->next) {
		if (!f->top)
			continue;
		ffio_in_lib++;
		pthread_mutex_lock(&f->lock);
		int err = ffio_layer_flush(f->top);
		if (err < 0 || f->error)
			ffio_log("%s: data written through ffio could not be flushed at exit: %s",
				 f->path, strerror(-(err < 0 ? err : f->error)));
		f->stack_calls++; /* see stack.c's entered() */
		for (struct ffio_layer *l = f->top; l; l = l->below)
			if (l->ops->atexit)
				l->ops->atexit(l);
		pthread_mutex_unlock(&f->lock);
		ffio_in_lib--;
	}
	pthread_mutex_unlock(&files_lock);
}

/* Before fork: a file open now is shared with the child through its
 * descriptors (their positions, the data behind them), so it passes
 * through to the kernel in both processes from now on: flushed, each
 * kernel offset set to the position, the stack closed.  Every lock is held
 * across the fork so that nothing is mid-change in the child. */
void ffio_files_fork_prepare(void)
{
	pthread_mutex_lock(&files_lock);
	for (struct ffio_file *f = files; f; f = f->next) {
		pthread_mutex_lock(&f->lock);
		(void)pass_through_locked(f, 0);
	}
}

void ffio_files_fork_after(void)
{
	for (struct ffio_file *f = files; f; f = f->next)
		pthread_mutex_unlock(&f->lock);
	pthread_mutex_unlock(&files_lock);
}
