/* libffio/guard/proto.h -- what the library and ffio-guardian share: the
 * layout of the guarded memory and the messages on the socket between
 * them.  Both sides include this file and nothing else of each other.
 *
 * The guarded memory is two memfds, mapped shared by the process (the
 * library) and, once the process is gone, by its guardian:
 *   meta  a header (struct guard_meta: the file records, each with its
 *         intent), then page records (struct guard_page) one after another
 *         from pages_off up to end, each of its own size;
 *   data  the bytes of the pages, at each record's data_off.
 * A page record's map says, a bit per byte, which bytes of the page the
 * application wrote that are not yet known to be in the file.  When the
 * process dies (or execs, or closes the socket), the guardian undoes the
 * intent of each file that has one armed, writes every marked byte of
 * every live record to its file, applies an armed truncation, and exits.
 *
 * Every change the library makes is ordered so that a death at any
 * instruction leaves a state the guardian reads correctly: a record is
 * filled before end moves past it, bytes are copied before they are
 * marked, an intent entry is filled before n_entries counts it.
 */
#ifndef FFIO_GUARD_PROTO_H
#define FFIO_GUARD_PROTO_H

#include <stdint.h>

#define GUARD_MAGIC 0x6472617567666666ull /* "fffguard" */
#define GUARD_VERSION 1
#define GUARD_FILES 1024          /* guarded files open at once, at most */
#define GUARD_INTENT_ENTRIES 16   /* pages one write in flight can touch and be undone */
#define GUARD_INTENT_BYTES 4096   /* bytes written before (marked) that it can restore */
#define GUARD_INTENT_WORDS 1056   /* map words it can restore */

/* One page's part of the write in flight. */
struct guard_intent_entry {
	uint64_t page_off;        /* the page record's offset in meta */
	uint32_t lo, hi;          /* the bytes [lo, hi) of the page */
	uint32_t fresh;           /* no byte of [lo, hi) was marked before: undo = unmark them */
	uint32_t words_at;        /* else: the map words lo/64 .. (hi-1)/64 as they were, */
	uint32_t bytes_at;        /* from words[words_at], and the bytes [lo, hi) as they */
	uint32_t pad;             /* were, from bytes[bytes_at] */
};

/* The write in flight into one file's pages: armed before its first byte is
 * copied, disarmed once every byte is copied and marked.  Armed at death:
 * the guardian undoes each counted entry (the write is then absent). */
struct guard_intent {
	uint32_t armed;
	uint32_t n_entries;
	struct guard_intent_entry entry[GUARD_INTENT_ENTRIES];
	uint64_t words[GUARD_INTENT_WORDS];
	unsigned char bytes[GUARD_INTENT_BYTES];
};

/* A guarded file, by its index (the index of GUARD_MSG_OPEN). */
struct guard_file {
	uint32_t trunc_armed;     /* a truncation to trunc_len is in flight: */
	uint32_t pad;             /* bytes at or past it are not written, then */
	int64_t trunc_len;        /* the file is truncated to it */
	struct guard_intent intent;
};

struct guard_meta {
	uint64_t magic;           /* GUARD_MAGIC */
	uint32_t version;         /* GUARD_VERSION */
	uint32_t files;           /* GUARD_FILES */
	uint64_t pages_off;       /* offset of the first page record */
	uint64_t end;             /* page records end here (published last) */
	struct guard_file file[GUARD_FILES];
};

enum { GUARD_PAGE_FREE = 0, GUARD_PAGE_LIVE = 1 };

/* A page buffer: its record in meta, its bytes in data. */
struct guard_page {
	uint32_t state;           /* GUARD_PAGE_* */
	uint32_t file;            /* index of the file it holds a page of (LIVE) */
	uint64_t size;            /* bytes of this record, map included: a multiple of 64 */
	int64_t pno;              /* which page of the file: its bytes start at pno * page */
	uint64_t page;            /* bytes in the page */
	uint64_t data_off;        /* where they are in data */
	uint32_t span_lo, span_hi;/* (the library's: marked bytes lie within [span_lo, span_hi)) */
	uint64_t reserved[2];
	uint64_t map[];           /* (page + 63) / 64 words: bit b of word w marks byte 64 w + b */
};

/* Messages, library to guardian, on a SOCK_SEQPACKET socket; the guardian
 * answers nothing, and says once, first, that it is ready (READY, the
 * other way).  Descriptors travel as SCM_RIGHTS. */
enum {
	GUARD_MSG_HELLO = 1,      /* first; fds: meta, data, the log's descriptor (or none) */
	GUARD_MSG_OPEN = 2,       /* fd: the file, as the cache writes it; file: its index */
	GUARD_MSG_CLOSE = 3,      /* file: its index (no page record holds a mark for it) */
	GUARD_MSG_READY = 4,      /* guardian to library: serving, in a session of its own */
	GUARD_MSG_GOODBYE = 5,    /* the process closes its end and lives on (its descriptors
				     are short): write back when it ends, not at end of file */
};

struct guard_msg {
	uint32_t kind;
	uint32_t file;
	int64_t pid;              /* HELLO: the process guarded; READY: the guardian */
};

#endif
