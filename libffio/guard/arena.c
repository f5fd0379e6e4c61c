/* libffio/guard/arena.c -- the guarded memory: page buffers and the
 * records of which of their bytes the application wrote, in two files
 * (shmfile.c: on a huge-page tmpfs of the process's own, or memfds) that
 * the guardian process (client.c) maps when this process is gone
 * (layout: proto.h).  The cache layer takes its page buffers here for a
 * file it may write, and marks each byte it takes in (ffio_guard_copy)
 * until it is in the file (ffio_guard_unmark_all).
 *
 * Each file is made as large as it may ever need to be, sparse, and
 * mapped once, shared (arena_init); the guardian holds the files, this
 * process only the mappings.  Page records are never given back: a record freed
 * keeps its data block and waits on a free list of its page size for the
 * next page of that size; beyond WARM_MAX bytes of free blocks, a block's
 * memory is given back to the kernel (a hole punched) and comes back as
 * zeros.
 *
 * Death at any instruction: a new record is whole before meta->end moves
 * past it; bytes are copied before they are marked; a copy that must be
 * whole or absent runs under the file's intent (proto.h), which the
 * guardian undoes if it finds it armed.  The compiler keeps these stores
 * in program order (compiler_order); the processor does too, for the
 * guardian, which reads them only after this process has ended.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "guard.h"

#define WARM_MAX ((uint64_t)64 << 20) /* bytes of free blocks kept touched */
#define CLASSES 16                    /* page sizes with a free list */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define POPULATE_MIN ((size_t)64 << 10)
#define RESERVE_MIN ((size_t)256 << 20) /* the least guarded memory worth having */

struct ffio_guard {
	uint32_t index;                  /* in meta->file[] and for the guardian */
	struct guard_file *rec;
	int begun;                       /* inside ffio_guard_begin .. end */
	uint32_t words_used, bytes_used; /* of the armed intent */
};

/* A free list of records of one page size, linked through reserved[0]
 * (the next one's offset in meta, 0: none); reserved[1] nonzero: the
 * record's block was given back to the kernel (its bytes are zeros). */
struct free_class {
	uint64_t page;
	uint64_t head;
};

static struct {
	pthread_mutex_t lock;
	int state;                       /* 0: not tried, 1: ready, -1: off */
	int meta_fd, data_fd;
	char *meta, *data;
	size_t meta_res, data_res;       /* reserved */
	size_t meta_bump, data_bump;     /* first offset never handed out */
	uint64_t warm_free;              /* bytes of free blocks not given back */
	struct free_class classes[CLASSES];
	uint64_t used[GUARD_FILES / 64]; /* file indices taken */
	struct ffio_guard files[GUARD_FILES];
	int said_full, said_files;
} A = {.lock = PTHREAD_MUTEX_INITIALIZER, .meta_fd = -1, .data_fd = -1};

static inline void compiler_order(void)
{
	__asm__ __volatile__("" ::: "memory");
}

static struct guard_meta *meta(void)
{
	return (struct guard_meta *)(void *)A.meta;
}

static struct guard_page *rec_at(uint64_t off)
{
	return (struct guard_page *)(void *)(A.meta + off);
}

static uint64_t rec_off(const struct guard_page *rec)
{
	return (uint64_t)((const char *)rec - A.meta);
}

static size_t round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/* ---- setting up -------------------------------------------------------- */

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		ffio_real.close(*fd);
		*fd = -1;
	}
}

static void teardown(void)
{
	if (A.meta)
		munmap(A.meta, A.meta_res);
	if (A.data)
		munmap(A.data, A.data_res);
	A.meta = A.data = NULL;
	close_fd(&A.meta_fd);
	close_fd(&A.data_fd);
}

/* Size the file fd for res bytes and map it shared (its pages are
 * allocated as they are first touched); huge: advised huge pages. */
static char *reserve(int fd, size_t res, int huge_pages)
{
	if (ftruncate(fd, (off_t)res) < 0)
		return NULL;
	/* At a huge page's boundary (address space reserved, then the file
	 * mapped over it), advised: on the tmpfs of shmfile.c, or where the
	 * system gives memfds huge pages (shmem_enabled "advise"), a page is
	 * then touched 2 MiB at a time, as the cache's own buffers are
	 * (buffer.c).  The data only: of the records, the first 13 MiB are
	 * the files' intent records (13 KiB each, 1024 of them, few used),
	 * where huge pages would hold 2 MiB per process for a few KiB; the
	 * page records after them are advised in arena_init. */
	size_t huge = (size_t)2 << 20;
	char *space = mmap(NULL, res + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (space == MAP_FAILED)
		return NULL;
	char *at = (char *)(((uintptr_t)space + huge - 1) & ~(uintptr_t)(huge - 1));
	void *p = mmap(at, res, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED) {
		munmap(space, res + huge);
		return NULL;
	}
	if (at > space)
		munmap(space, (size_t)(at - space));
	if (at + res < space + res + huge)
		munmap(at + res, (size_t)(space + res + huge - (at + res)));
	if (huge_pages)
		(void)madvise(p, res, MADV_HUGEPAGE);
	return p;
}

/* The memfds, their mappings, the header; then the guardian, which gets
 * the memfds: this process keeps only the mappings (no descriptor of the
 * program's count; nothing grows, the memfds are as large as they may
 * ever need to be at once).  The data may be as large as the machine's
 * memory (a cache larger than that is not held anyway), the records a
 * quarter of it (a record of a 4 KiB page is 576 bytes); less where the
 * address space is limited (ulimit -v).  The memfds' sizes count as file
 * sizes: under RLIMIT_FSIZE they stay below it (ftruncate past it would
 * raise SIGXFSZ), and with too low a limit nothing is guarded. */
static int arena_init(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	size_t ram = pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize : (size_t)4 << 30;
	size_t head = round_up(sizeof(struct guard_meta), 4096);
	struct rlimit fsize;
	int err, huge;

	if (ram > (size_t)1 << 40)
		ram = (size_t)1 << 40;
	if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY) {
		if (fsize.rlim_cur < head + RESERVE_MIN / 4)
			return -EFBIG;
		if (ram > fsize.rlim_cur)
			ram = (size_t)fsize.rlim_cur;
	}
	/* (the files are closed before the program's next call, so they are
	 * not parked out of its way with ffio's own descriptors, fdtable.c,
	 * which would leave a hole above them) */
	if ((err = ffio_guard_shm_files(&A.meta_fd, &A.data_fd, &huge)) < 0)
		goto fail;
	for (size_t res = round_up(ram, (size_t)2 << 20); !A.data && res >= RESERVE_MIN; res /= 2) {
		A.data_res = res;
		A.meta_res = head + res / 4;
		if (A.meta_res > ram)
			A.meta_res = ram;
		if ((A.meta = reserve(A.meta_fd, A.meta_res, 0)) && !(A.data = reserve(A.data_fd, A.data_res, 1))) {
			munmap(A.meta, A.meta_res);
			A.meta = NULL;
		}
	}
	if (!A.data) {
		err = -ENOMEM;
		goto fail;
	}
	struct guard_meta *m = meta();
	m->version = GUARD_VERSION;
	m->files = GUARD_FILES;
	m->pages_off = A.meta_bump = head;
	if (huge) {
		/* The page records on huge pages too, from a huge page's
		 * boundary (a 1 MiB page's map is 128 KiB, first touched as
		 * it is written); not the file records before them (see
		 * reserve). */
		size_t at = round_up(head, (size_t)2 << 20);
		if (at < A.meta_res) {
			m->pages_off = A.meta_bump = at;
			(void)madvise(A.meta + at, A.meta_res - at, MADV_HUGEPAGE);
		}
	}
	m->end = m->pages_off;
	compiler_order();
	m->magic = GUARD_MAGIC;
	if ((err = ffio_guardian_start(A.meta_fd, A.data_fd)) < 0)
		goto fail;
	close_fd(&A.meta_fd);
	close_fd(&A.data_fd);
	return 0;
fail:
	teardown();
	return err;
}

/* In a forked child: the parent's guarded memory is shared, not copied; the
 * child must not touch it, and holds no page of it (every file passes
 * through across fork, its cache closed).  It lets go of it, and sets up
 * its own at its first guarded file. */
static void arena_fork_child(void)
{
	teardown();
	A.state = 0;
	A.meta_bump = A.data_bump = 0;
	A.warm_free = 0;
	memset(A.classes, 0, sizeof A.classes);
	memset(A.used, 0, sizeof A.used);
	pthread_mutex_init(&A.lock, NULL);
}

__attribute__((constructor)) static void arena_fork_safe(void)
{
	ffio_atfork(NULL, NULL, arena_fork_child);
}

/* Is guarding on (FF_IO_GUARD unset, or not 0, and not under valgrind)?
 * Under valgrind (its preloaded core in LD_PRELOAD), a process that forked
 * with the guarded memory mapped filled it: gigabytes of shared memory,
 * until the OOM killer ended it (valgrind 3.19); so nothing is guarded
 * there, as with FF_IO_GUARD=0 (ffio-reliability(7)). */
static int guard_wanted(void)
{
	const char *v = ffio_env(FFIO_ENV_GUARD);
	if (ffio_guard_under_valgrind())
		return 0;
	return !v || strcmp(v, "0") != 0;
}

/* ---- files ----------------------------------------------------------------- */

struct ffio_guard *ffio_guard_open(int fd)
{
	struct ffio_guard *f = NULL;

	if (ffio_in_vfork_child()) /* its memory is its parent's */
		return NULL;
	pthread_mutex_lock(&A.lock);
	if (A.state == 0) {
		int err = guard_wanted() ? arena_init() : -ECANCELED;
		A.state = err < 0 ? -1 : 1;
		/* (not said under a tiny RLIMIT_FSIZE: the message itself could
		 * go past it, and end the process by SIGXFSZ) */
		if (err < 0 && err != -ECANCELED && err != -EFBIG)
			ffio_log("cached data is not guarded (%s): it is lost if the process dies", strerror(-err));
	}
	if (A.state < 0 || !ffio_guardian_running())
		goto out;
	for (uint32_t w = 0; w < GUARD_FILES / 64 && !f; w++) {
		if (A.used[w] == ~(uint64_t)0)
			continue;
		uint32_t b = (uint32_t)__builtin_ctzll(~A.used[w]);
		f = &A.files[w * 64 + b];
		f->index = w * 64 + b;
		f->rec = &meta()->file[f->index];
		f->rec->trunc_armed = 0;
		f->rec->trunc_len = 0;
		f->rec->intent.armed = 0;
		f->begun = 0;
		if (ffio_guardian_open(f->index, fd) < 0) {
			f = NULL;
			goto out;
		}
		A.used[w] |= (uint64_t)1 << b;
	}
	if (!f && A.state > 0 && ffio_guardian_running() && !A.said_files) {
		A.said_files = 1;
		ffio_log("more than %d files guarded at once: the cached data of the others is lost if the process dies",
			 GUARD_FILES);
	}
out:
	pthread_mutex_unlock(&A.lock);
	return f;
}

void ffio_guard_close(struct ffio_guard *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&A.lock);
	if (A.state > 0) {
		ffio_guardian_close(f->index);
		A.used[f->index / 64] &= ~((uint64_t)1 << (f->index % 64));
	}
	pthread_mutex_unlock(&A.lock);
}

/* ---- page buffers -------------------------------------------------------------- */

static struct free_class *class_of(uint64_t page, int add)
{
	for (int i = 0; i < CLASSES; i++) {
		if (A.classes[i].page == page)
			return &A.classes[i];
		if (!A.classes[i].page && add) {
			A.classes[i].page = page;
			return &A.classes[i];
		}
	}
	return NULL;
}

/* A new record and block for pages of page bytes: made whole, then
 * published (meta->end). */
static struct guard_page *rec_new(size_t page)
{
	size_t words = (page + 63) / 64;
	size_t rsize = round_up(sizeof(struct guard_page) + words * sizeof(uint64_t), 64);
	size_t align = page >= 4096 ? 4096 : 64;
	size_t doff = round_up(A.data_bump, align);

	if (A.meta_bump + rsize > A.meta_res || doff + round_up(page, 64) > A.data_res) {
		if (!A.said_full) {
			A.said_full = 1;
			ffio_log("guarded memory full (%zu MiB): pages cached beyond it are lost if the process dies",
				 A.data_res >> 20);
		}
		return NULL;
	}
	struct guard_page *rec = rec_at(A.meta_bump);
	rec->state = GUARD_PAGE_FREE; /* (the memfd's bytes are zeros: the map is empty) */
	rec->size = rsize;
	rec->page = page;
	rec->pno = -1;
	rec->data_off = doff;
	rec->span_lo = (uint32_t)page;
	rec->span_hi = 0;
	A.meta_bump += rsize;
	A.data_bump = doff + round_up(page, 64);
	compiler_order();
	meta()->end = A.meta_bump;
	return rec;
}

char *ffio_guard_buf_get(struct ffio_guard *f, size_t page, struct guard_page **out, int *fresh)
{
	struct guard_page *rec = NULL;

	*fresh = 0;
	if (page > UINT32_MAX)
		return NULL;
	pthread_mutex_lock(&A.lock);
	struct free_class *k = class_of(page, 0);
	if (k && k->head) {
		rec = rec_at(k->head);
		k->head = rec->reserved[0];
		if (rec->reserved[1])
			*fresh = 1;
		else
			A.warm_free -= page;
		rec->reserved[0] = rec->reserved[1] = 0;
	} else if (!(rec = rec_new(page))) {
		pthread_mutex_unlock(&A.lock);
		return NULL;
	} else {
		*fresh = 1;
	}
	rec->pno = -1;
	rec->file = f->index;
	compiler_order();
	rec->state = GUARD_PAGE_LIVE;
	pthread_mutex_unlock(&A.lock);
	*out = rec;
	char *data = A.data + rec->data_off;
	if (*fresh && page >= POPULATE_MIN)
		(void)madvise(data, page, MADV_POPULATE_WRITE);
	return data;
}

void ffio_guard_buf_put(struct guard_page *rec)
{
	ffio_guard_unmark_all(rec);
	pthread_mutex_lock(&A.lock);
	rec->state = GUARD_PAGE_FREE;
	rec->pno = -1;
	struct free_class *k = class_of(rec->page, 1);
	if (!k) { /* more page sizes than classes: the record waits unused */
		pthread_mutex_unlock(&A.lock);
		return;
	}
	rec->reserved[1] = 0;
	if (A.warm_free + rec->page > WARM_MAX && rec->page % 4096 == 0 && rec->data_off % 4096 == 0 &&
	    madvise(A.data + rec->data_off, rec->page, MADV_REMOVE) == 0)
		rec->reserved[1] = 1;
	else
		A.warm_free += rec->page;
	rec->reserved[0] = k->head;
	k->head = rec_off(rec);
	pthread_mutex_unlock(&A.lock);
}

void ffio_guard_bind(struct ffio_guard *f, struct guard_page *rec, int64_t pno)
{
	ffio_guard_unmark_all(rec); /* (nothing marked: the page was clean) */
	rec->pno = -1;
	compiler_order();
	rec->file = f->index;
	rec->pno = pno;
}

/* ---- marks ----------------------------------------------------------------- */

static void mark(struct guard_page *rec, uint32_t lo, uint32_t hi)
{
	for (uint32_t w = lo >> 6; w <= (hi - 1) >> 6; w++)
		rec->map[w] |= guard_word_mask(w, lo, hi);
	if (lo < rec->span_lo)
		rec->span_lo = lo;
	if (hi > rec->span_hi)
		rec->span_hi = hi;
}

static int any_marked(const struct guard_page *rec, uint32_t lo, uint32_t hi)
{
	for (uint32_t w = lo >> 6; w <= (hi - 1) >> 6; w++)
		if (rec->map[w] & guard_word_mask(w, lo, hi))
			return 1;
	return 0;
}

int ffio_guard_marked(const struct guard_page *rec, uint32_t lo, uint32_t hi)
{
	if (hi > rec->span_hi)
		hi = rec->span_hi;
	if (lo < rec->span_lo)
		lo = rec->span_lo;
	return lo < hi && any_marked(rec, lo, hi);
}

void ffio_guard_unmark(struct guard_page *rec, uint32_t lo, uint32_t hi)
{
	if (hi > rec->span_hi)
		hi = rec->span_hi;
	if (lo < rec->span_lo)
		lo = rec->span_lo;
	if (lo >= hi)
		return;
	for (uint32_t w = lo >> 6; w <= (hi - 1) >> 6; w++)
		rec->map[w] &= ~guard_word_mask(w, lo, hi);
	if (lo == rec->span_lo && hi == rec->span_hi) {
		rec->span_lo = (uint32_t)rec->page;
		rec->span_hi = 0;
	}
}

void ffio_guard_unmark_all(struct guard_page *rec)
{
	if (rec->span_lo < rec->span_hi)
		memset(&rec->map[rec->span_lo >> 6], 0,
		       (size_t)(((rec->span_hi - 1) >> 6) - (rec->span_lo >> 6) + 1) * sizeof(uint64_t));
	rec->span_lo = (uint32_t)rec->page;
	rec->span_hi = 0;
}

/* ---- intents --------------------------------------------------------------- */

static void intent_arm(struct ffio_guard *f)
{
	struct guard_intent *in = &f->rec->intent;
	in->n_entries = 0;
	f->words_used = f->bytes_used = 0;
	compiler_order();
	in->armed = 1;
	compiler_order();
}

static void intent_disarm(struct ffio_guard *f)
{
	compiler_order();
	f->rec->intent.armed = 0;
	compiler_order();
}

void ffio_guard_begin(struct ffio_guard *f)
{
	intent_arm(f);
	f->begun = 1;
}

void ffio_guard_end(struct ffio_guard *f)
{
	intent_disarm(f);
	f->begun = 0;
}

/* Does a copy of [lo, hi) fit the armed intent (saved, or fresh)? */
static int intent_fits(const struct ffio_guard *f, uint32_t lo, uint32_t hi, int saved)
{
	if (f->rec->intent.n_entries >= GUARD_INTENT_ENTRIES)
		return 0;
	return !saved || (f->words_used + ((hi - 1) >> 6) - (lo >> 6) + 1 <= GUARD_INTENT_WORDS &&
			  f->bytes_used + (hi - lo) <= GUARD_INTENT_BYTES);
}

/* Enter [lo, hi) of rec in the armed intent, with what it held if saved. */
static void intent_enter(struct ffio_guard *f, struct guard_page *rec, const char *data, uint32_t lo, uint32_t hi,
			 int saved)
{
	struct guard_intent *in = &f->rec->intent;
	struct guard_intent_entry *e = &in->entry[in->n_entries];

	e->page_off = rec_off(rec);
	e->lo = lo;
	e->hi = hi;
	e->fresh = !saved;
	e->words_at = f->words_used;
	e->bytes_at = f->bytes_used;
	if (saved) {
		uint32_t w0 = lo >> 6, nw = ((hi - 1) >> 6) - w0 + 1;
		memcpy(&in->words[f->words_used], &rec->map[w0], nw * sizeof(uint64_t));
		memcpy(&in->bytes[f->bytes_used], data + lo, hi - lo);
		f->words_used += nw;
		f->bytes_used += hi - lo;
	}
	compiler_order();
	in->n_entries++;
	compiler_order();
}

void ffio_guard_copy(struct ffio_guard *f, struct guard_page *rec, char *data, uint32_t lo, const void *src,
		     size_t n)
{
	const char *s = src;

	while (n > 0) {
		uint32_t hi = lo + (uint32_t)n;
		int saved = any_marked(rec, lo, hi);
		if (saved && n > GUARD_INTENT_BYTES) /* a piece at a time: each whole or absent */
			hi = lo + GUARD_INTENT_BYTES;
		int own = !f->begun;
		if (own)
			intent_arm(f);
		else if (!intent_fits(f, lo, hi, saved)) { /* what is in is whole from here */
			intent_disarm(f);
			intent_arm(f);
		}
		if (!intent_fits(f, lo, hi, saved)) { /* too big even alone: shrink */
			hi = lo + (GUARD_INTENT_BYTES < (hi - lo) ? GUARD_INTENT_BYTES : (hi - lo));
			saved = any_marked(rec, lo, hi);
		}
		intent_enter(f, rec, data, lo, hi, saved);
		memcpy(data + lo, s, hi - lo);
		compiler_order();
		mark(rec, lo, hi);
		if (own)
			intent_disarm(f);
		s += hi - lo;
		n -= hi - lo;
		lo = hi;
	}
}

/* ---- truncation ------------------------------------------------------------ */

void ffio_guard_trunc_begin(struct ffio_guard *f, off_t len)
{
	f->rec->trunc_len = len;
	compiler_order();
	f->rec->trunc_armed = 1;
	compiler_order();
}

void ffio_guard_trunc_end(struct ffio_guard *f)
{
	compiler_order();
	f->rec->trunc_armed = 0;
	compiler_order();
}
