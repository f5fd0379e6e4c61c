/* layers/compat.c -- SGI's eie and Cray's cachea and bufa layers.  They exist
 * only at spec time: each has its own flags and arguments (sizes in 4 KiB
 * blocks, as the originals) and a map() that rewrites the parsed layer onto
 * the cache layer.  Nothing of them runs at I/O time.
 *
 *   eie.{direct|nodirect}.{mbytes|kbytes|bytes}.{diag|nodiag}:SIZE:NUM:LEAD:SHARE:STRIDE:0
 *   cachea:BS:NBUFS:LEAD:SHARE
 *   bufa:BS:NBUFS
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ffio-internal.h"

#define BLOCK 4096       /* the unit of SIZE and BS */
#define MAX_BLOCKS 262144 /* 1 GiB pages */
#define MAX_PAGES 65536

/* Defaults equal the cache's documented ones (1 MiB pages, 16 pages, 2 ahead). */
#define DEF_BLOCKS 256
#define DEF_PAGES 16
#define DEF_AHEAD 2

/* ---- eie flags ---- */
#define EIE_DIRECT   0x01u
#define EIE_NODIRECT 0x02u
#define EIE_MBYTES   0x04u
#define EIE_KBYTES   0x08u
#define EIE_BYTES    0x10u
#define EIE_DIAG     0x20u
#define EIE_NODIAG   0x40u
#define EIE_G_DIRECT (EIE_DIRECT | EIE_NODIRECT)
#define EIE_G_UNITS  (EIE_MBYTES | EIE_KBYTES | EIE_BYTES)
#define EIE_G_DIAG   (EIE_DIAG | EIE_NODIAG)

static const struct ffio_flag eie_flags[] = {
	{.name = "direct", .bit = EIE_DIRECT, .group = EIE_G_DIRECT},
	{.name = "nodirect", .bit = EIE_NODIRECT, .group = EIE_G_DIRECT},
	{.name = "mbytes", .bit = EIE_MBYTES, .group = EIE_G_UNITS},
	{.name = "kbytes", .bit = EIE_KBYTES, .group = EIE_G_UNITS},
	{.name = "bytes", .bit = EIE_BYTES, .group = EIE_G_UNITS},
	{.name = "diag", .bit = EIE_DIAG, .group = EIE_G_DIAG},
	{.name = "nodiag", .bit = EIE_NODIAG, .group = EIE_G_DIAG},
	{.name = NULL},
};

enum { EIE_SIZE, EIE_NUM, EIE_LEAD, EIE_SHARE, EIE_STRIDE, EIE_RESERVED, EIE_RESERVED2 };

static const struct ffio_param eie_params[] = {
	[EIE_SIZE] = {.name = "size", .type = FFIO_P_COUNT, .def = DEF_BLOCKS, .min = 1, .max = MAX_BLOCKS},
	[EIE_NUM] = {.name = "num", .type = FFIO_P_COUNT, .def = DEF_PAGES, .min = 1, .max = MAX_PAGES},
	[EIE_LEAD] = {.name = "lead", .type = FFIO_P_COUNT, .def = DEF_AHEAD, .min = 0, .max = MAX_PAGES},
	[EIE_SHARE] = {.name = "share", .type = FFIO_P_COUNT, .def = 0, .min = 0, .max = 1},
	/* Accepted for compatibility, ignored: the cache detects strides itself. */
	[EIE_STRIDE] = {.name = "stride", .type = FFIO_P_COUNT, .def = 1, .min = 0, .max = INT32_MAX},
	/* SGI's trailing fields (always 0 in practice): accepted, ignored. */
	[EIE_RESERVED] = {.name = "reserved", .type = FFIO_P_COUNT, .def = 0, .min = 0, .max = INT32_MAX},
	[EIE_RESERVED2] = {.name = "reserved2", .type = FFIO_P_COUNT, .def = 0, .min = 0, .max = INT32_MAX},
	{.name = NULL},
};

enum { CACHEA_BS, CACHEA_NBUFS, CACHEA_LEAD, CACHEA_SHARE };

static const struct ffio_param cachea_params[] = {
	[CACHEA_BS] = {.name = "bs", .type = FFIO_P_COUNT, .def = DEF_BLOCKS, .min = 1, .max = MAX_BLOCKS},
	[CACHEA_NBUFS] = {.name = "nbufs", .type = FFIO_P_COUNT, .def = DEF_PAGES, .min = 1, .max = MAX_PAGES},
	[CACHEA_LEAD] = {.name = "lead", .type = FFIO_P_COUNT, .def = DEF_AHEAD, .min = 0, .max = MAX_PAGES},
	[CACHEA_SHARE] = {.name = "share", .type = FFIO_P_COUNT, .def = 0, .min = 0, .max = 1},
	{.name = NULL},
};

enum { BUFA_BS, BUFA_NBUFS };

static const struct ffio_param bufa_params[] = {
	[BUFA_BS] = {.name = "bs", .type = FFIO_P_COUNT, .def = DEF_BLOCKS, .min = 1, .max = MAX_BLOCKS},
	[BUFA_NBUFS] = {.name = "nbufs", .type = FFIO_P_COUNT, .def = 2, .min = 1, .max = MAX_PAGES},
	{.name = NULL},
};

/* The cache's declared parameter i, or NULL when the cache declares fewer. */
static const struct ffio_param *cache_param(int i)
{
	const struct ffio_param *pm = ffio_layer_cache.params;

	for (int k = 0; pm && pm[k].name; k++)
		if (k == i)
			return &pm[k];
	return NULL;
}

/* Rewrite ls onto the cache.  given_* says whether the compat argument was
 * written; one that was not takes the cache's own default. */
static int map_to_cache(struct ffio_layer_spec *ls, int64_t blocks, int given_page,
			int64_t pages, int given_pages, int64_t ahead, int given_ahead,
			unsigned cache_flags, char *err, size_t errlen)
{
	const char *what[] = {"page size", "number of pages", "read-ahead"};
	int64_t val[3] = {blocks * BLOCK, pages, ahead};
	int given[3] = {given_page, given_pages, given_ahead};
	const char *name = ls->ops->name;
	struct ffio_layer_spec out = *ls;

	out.ops = &ffio_layer_cache;
	out.flags = cache_flags;
	out.given = 0;
	for (int i = 0; i < FFIO_MAX_PARAMS; i++) {
		const struct ffio_param *pm = cache_param(i);
		out.arg[i] = pm ? pm->def : 0;
	}
	for (int i = FFIO_CACHE_PAGE; i <= FFIO_CACHE_AHEAD; i++) {
		const struct ffio_param *pm = cache_param(i);
		if (!given[i] && pm)
			continue; /* the cache's default */
		if (pm && (val[i] < pm->min || val[i] > pm->max)) {
			snprintf(err, errlen,
				 "%s: %s %" PRId64 " is out of the cache's range (%" PRId64 "..%" PRId64 ")",
				 name, what[i], val[i], pm->min, pm->max);
			return -EINVAL;
		}
		out.arg[i] = val[i];
		if (given[i])
			out.given |= 1u << i;
	}
	ls->ops = out.ops;
	ls->flags = out.flags;
	ls->given = out.given;
	memcpy(ls->arg, out.arg, sizeof ls->arg);
	return 0;
}

static int given(const struct ffio_layer_spec *ls, int i)
{
	return (ls->given >> i) & 1u;
}

static int eie_map(struct ffio_layer_spec *ls, char *err, size_t errlen)
{
	unsigned flags = 0;

	if (ls->flags & EIE_DIRECT)
		flags |= FFIO_CACHE_DIRECT;
	if (ls->flags & EIE_DIAG)
		flags |= FFIO_CACHE_DIAG;
	if (ls->arg[EIE_SHARE])
		flags |= FFIO_CACHE_SHARED;
	return map_to_cache(ls, ls->arg[EIE_SIZE], given(ls, EIE_SIZE), ls->arg[EIE_NUM],
			    given(ls, EIE_NUM), ls->arg[EIE_LEAD], given(ls, EIE_LEAD), flags, err,
			    errlen);
}

static int cachea_map(struct ffio_layer_spec *ls, char *err, size_t errlen)
{
	unsigned flags = ls->arg[CACHEA_SHARE] ? FFIO_CACHE_SHARED : 0;

	return map_to_cache(ls, ls->arg[CACHEA_BS], given(ls, CACHEA_BS), ls->arg[CACHEA_NBUFS],
			    given(ls, CACHEA_NBUFS), ls->arg[CACHEA_LEAD], given(ls, CACHEA_LEAD),
			    flags, err, errlen);
}

/* bufa: NBUFS buffers, one being filled while the others are in flight, so
 * the read-ahead is NBUFS - 1 buffers. */
static int bufa_map(struct ffio_layer_spec *ls, char *err, size_t errlen)
{
	int64_t nbufs = ls->arg[BUFA_NBUFS];

	return map_to_cache(ls, ls->arg[BUFA_BS], 1, nbufs, 1, nbufs - 1, 1, 0, err, errlen);
}

const struct ffio_layer_ops ffio_layer_eie = {
	.name = "eie",
	.flags = eie_flags,
	.params = eie_params,
	.instance_size = sizeof(struct ffio_layer),
	.map = eie_map,
};

const struct ffio_layer_ops ffio_layer_cachea = {
	.name = "cachea",
	.params = cachea_params,
	.instance_size = sizeof(struct ffio_layer),
	.map = cachea_map,
};

const struct ffio_layer_ops ffio_layer_bufa = {
	.name = "bufa",
	.params = bufa_params,
	.instance_size = sizeof(struct ffio_layer),
	.map = bufa_map,
};
