/* libffio/guard/guard.h -- the guard's private header: what the cache
 * layer calls to keep its dirty bytes where a guardian process can write
 * them back if the process dies (arena.c), and the guardian process
 * itself, its socket and its life (client.c).  The guard knows nothing of
 * the cache; the cache calls it (see ffio-reliability(7)).
 */
#ifndef FFIO_GUARD_H
#define FFIO_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "proto.h"

/* ---- client.c: the guardian process ------------------------------------ */

/* Start this process's guardian (once; again in a forked child), handing it
 * the guarded memory's two memfds.  0, or -errno: then nothing is guarded
 * (said once in the log). */
int ffio_guardian_start(int meta_fd, int data_fd);

/* Hand the guardian the file of index file, written through fd.  0, or
 * -errno (the guardian is gone: said once; the caller guards nothing
 * more). */
int ffio_guardian_open(uint32_t file, int fd);

/* The file of index file is closed (no page record marks a byte of it). */
void ffio_guardian_close(uint32_t file);

/* Give the guardian's socket up for a descriptor the program needs: 1 when
 * one was freed (fdtable.c's ffio_fd_pressure). */
int ffio_guardian_release(void);

/* Is the guardian running, as far as this process knows? */
int ffio_guardian_running(void);

/* The guardian's process ID, or 0 (ffio_guardian_pid in ffio_ext.h). */
pid_t ffio_guardian_pid_internal(void);

/* Run fn(arg) in a child that shares our memory, on stack (size bytes),
 * with every signal blocked, and wait for it: clone(CLONE_VM | CLONE_VFORK
 * | flags) with no exit signal, reaped with __WCLONE (no wait of the
 * program sees it).  fn makes system calls only.  0, or -errno when the
 * child could not be made; errno unchanged. */
int ffio_guard_run_child(int (*fn)(void *), char *stack, size_t size, int flags, void *arg);

/* Are we under valgrind (its preloaded core in LD_PRELOAD)?  It runs a
 * clone(CLONE_VM | CLONE_VFORK) as a fork, with memory of its own, and
 * refuses any other clone that shares memory. */
int ffio_guard_under_valgrind(void);

/* ---- shmfile.c: the files of the guarded memory ------------------------- */

/* The two files the guarded memory lives in (records, data): on a tmpfs of
 * the process's own with huge pages where it may mount one (*huge = 1),
 * else memfds.  0, or -errno. */
int ffio_guard_shm_files(int *meta_fd, int *data_fd, int *huge);

/* ---- arena.c: the guarded memory ----------------------------------------- */

/* The mask of bits [lo, hi) within word w of a map (hi > lo). */
static inline uint64_t guard_word_mask(uint32_t w, uint32_t lo, uint32_t hi)
{
	uint64_t m = ~(uint64_t)0;
	if (w == lo >> 6)
		m &= ~(uint64_t)0 << (lo & 63);
	if (w == (hi - 1) >> 6)
		m &= ~(uint64_t)0 >> (63 - ((hi - 1) & 63));
	return m;
}

struct ffio_guard;            /* one guarded file */

/* Guard a file written through fd (the cache's descriptor below): NULL when
 * guarding is off (FF_IO_GUARD=0), the guardian could not start or is gone,
 * or GUARD_FILES files are guarded already. */
struct ffio_guard *ffio_guard_open(int fd);
/* Every page of it freed before. */
void ffio_guard_close(struct ffio_guard *f);

/* A page buffer of page bytes in guarded memory, with its record; *fresh:
 * its bytes are zeros.  NULL: none (out of guarded memory). */
char *ffio_guard_buf_get(struct ffio_guard *f, size_t page, struct guard_page **rec, int *fresh);
void ffio_guard_buf_put(struct guard_page *rec);
/* The record now holds page pno of its file (no byte marked). */
void ffio_guard_bind(struct ffio_guard *f, struct guard_page *rec, int64_t pno);

/* Copy n bytes from src to data + lo, the page's buffer, and mark them:
 * a death at any instruction leaves them all or none in the file when the
 * file's intent can hold them (see proto.h), else a part. */
void ffio_guard_copy(struct ffio_guard *f, struct guard_page *rec, char *data, uint32_t lo, const void *src,
		     size_t n);
/* One intent over several copies (one write over several pages). */
void ffio_guard_begin(struct ffio_guard *f);
void ffio_guard_end(struct ffio_guard *f);

/* Is a byte of [lo, hi) marked? */
int ffio_guard_marked(const struct guard_page *rec, uint32_t lo, uint32_t hi);

/* Unmark [lo, hi) (the bytes reached the file, or are dropped), or every
 * marked byte of the page. */
void ffio_guard_unmark(struct guard_page *rec, uint32_t lo, uint32_t hi);
void ffio_guard_unmark_all(struct guard_page *rec);

/* A truncation to len is in flight / done. */
void ffio_guard_trunc_begin(struct ffio_guard *f, off_t len);
void ffio_guard_trunc_end(struct ffio_guard *f);

#endif
