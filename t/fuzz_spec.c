/* t/fuzz_spec.c -- fuzz harness for the FF_IO_OPTS parser and the pattern
 * matcher.  Every input is parsed as a spec and as a bare stack; a rejected
 * input must give one line naming FF_IO_OPTS (or the stack's source), an
 * entry and a column; an accepted one must give well-formed stacks (1..16
 * layers, a bottom layer last and nowhere else) that match paths without
 * crashing.
 *
 * In `make check` (plain build) it runs the seed corpus t/fuzz/spec/ and then
 * FUZZ_MUTATIONS (default 100000) deterministic mutations of it (seed
 * FUZZ_SEED, default 1), printing TAP.
 *
 * As a libFuzzer target (long runs; ASan + UBSan), from an empty directory:
 *
 *   S=/work/main   # the source tree
 *   CC=clang CFLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined" \
 *       $S/configure -q --disable-shared && make -j2 libffio.la
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFFIO_LIBFUZZER \
 *       -I. -I$S/include -I$S/libffio $S/t/fuzz_spec.c .libs/libffio.a \
 *       $(grep '^LIBS =' Makefile | cut -d= -f2) -luring -ljemalloc -ldl -lpthread -o fuzz_spec
 *   mkdir -p corpus && ./fuzz_spec -max_total_time=120 -dict=$S/t/fuzz/spec.dict corpus $S/t/fuzz/spec
 *
 * (drop -luring / -ljemalloc when configure did not find them).  A crash or
 * a malformed message aborts with the input saved by libFuzzer.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ffio-internal.h"

static long violations; /* plain mode: inputs that broke a rule */
static long accepted;   /* inputs parsed as a spec without error */

static void violation(const char *why, const char *input, const char *detail)
{
#ifdef FFIO_LIBFUZZER
	fprintf(stderr, "fuzz_spec: %s: %.200s\n", why, detail);
	(void)input;
	abort();
#else
	if (violations++ < 10) {
		printf("# violation: %s\n# input (first 200 bytes, escaped): ", why);
		for (size_t i = 0; input[i] && i < 200; i++) {
			unsigned char c = (unsigned char)input[i];
			printf(c < 0x20 || c >= 0x7f || c == '\\' ? "\\x%02x" : "%c", c);
		}
		printf("\n# detail: %.200s\n", detail);
	}
#endif
}

/* A rejected input's message: one line, "SOURCE: entry N \"...\", column C: ...". */
static void check_message(const char *input, const char *source, const char *err)
{
	char prefix[64];
	size_t n = (size_t)snprintf(prefix, sizeof prefix, "%s: entry ", source);

	if (strncmp(err, prefix, n) != 0 || !strstr(err, "\", column ") ||
	    strpbrk(err, "\n\r") != NULL)
		violation("message is not one line naming the source, entry and column", input, err);
}

static void check_spec(const char *input, const struct ffio_spec *s)
{
	for (int i = 0; i < s->nentries; i++) {
		const struct ffio_entry *e = &s->entry[i];
		if (e->index != i + 1 || !e->pattern || e->nlayers < 1 || e->nlayers > FFIO_MAX_LAYERS) {
			violation("malformed entry", input, e->pattern ? e->pattern : "(no pattern)");
			return;
		}
		for (int j = 0; j < e->nlayers; j++) {
			const struct ffio_layer_spec *ls = &e->layer[j];
			if (!ls->ops || memchr(ls->text, '\0', sizeof ls->text) == NULL) {
				violation("layer without ops or label", input, e->pattern);
				return;
			}
			int bottom = (ls->ops->kind & FFIO_LAYER_BOTTOM) != 0;
			if (bottom != (j == e->nlayers - 1) || ls->ops->unavailable)
				violation("malformed stack", input, ls->text);
		}
	}
}

static void one_input(const char *text)
{
	static const char *const paths[] = {"x.nc", "/scratch/a.dat", "rel/dir/test1", "", "/", "a"};
	struct ffio_spec *s = NULL;
	char err[1024];

	err[0] = '\0';
	if (ffio_spec_parse(text, "FF_IO_OPTS", &s, err, sizeof err) == 0) {
		accepted++;
		check_spec(text, s);
		for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
			(void)ffio_spec_match(s, paths[i]);
		(void)ffio_spec_match(s, text); /* the input as a path */
		ffio_spec_free(s);
	} else {
		if (s)
			violation("spec returned with an error", text, err);
		check_message(text, "FF_IO_OPTS", err);
	}

	s = NULL;
	err[0] = '\0';
	if (ffio_spec_parse_stack(text, "ffio_opts", &s, err, sizeof err) == 0) {
		check_spec(text, s);
		ffio_spec_free(s);
	} else {
		check_message(text, "ffio_opts", err);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0'; /* the parser sees up to the first NUL, as from getenv */
	one_input(text);
	free(text);
	return 0;
}

#ifndef FFIO_LIBFUZZER
/* ---- plain mode: seeds + deterministic mutations, TAP ----------------- */

#define MAX_SEEDS 512
#define FUZZ_MAX_INPUT 4096

static char *seeds[MAX_SEEDS];
static int nseeds;

static uint64_t rng_state;
static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static const char *const tokens[] = {
	"(", ")", ",", ":", ".", "=", " ", "*", "/", "sys", "uring", "cache", "eie", "cachea",
	"bufa", "event", "fault", "delay", "system", "direct", "nodirect", "mbytes", "summary",
	"trace", "diag", "shared", "sieve", "wt", "page=", "pages=", "ahead=", "depth=", "1m",
	"4k", "9223372036854775807", "99999999999999999999g", "-1", "0", "ENOSPC", "EIO",
	"write", "any", "10ms", "5s", "((((", "))))", ", ,", "::", "\t", "\n", "\x01", "\xff",
};

static void load_seeds(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)) && nseeds < MAX_SEEDS) {
		char path[4096 + 512], buf[FUZZ_MAX_INPUT];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = '\0';
		seeds[nseeds] = strdup(buf);
		if (seeds[nseeds])
			nseeds++;
	}
	closedir(d);
}

/* One mutation of a random seed into out (NUL-terminated, < FUZZ_MAX_INPUT). */
static void mutate(char *out)
{
	size_t len = strlen(strcpy(out, seeds[rnd() % (uint64_t)nseeds]));
	int steps = 1 + (int)(rnd() % 4);

	for (int k = 0; k < steps; k++) {
		size_t at = len ? rnd() % (len + 1) : 0;
		switch (rnd() % 5) {
		case 0: /* flip a byte (never to NUL) */
			if (len) {
				size_t i = rnd() % len;
				out[i] = (char)(1 + rnd() % 255);
			}
			break;
		case 1: { /* insert a token */
			const char *t = tokens[rnd() % (sizeof tokens / sizeof tokens[0])];
			size_t tl = strlen(t);
			if (len + tl < FUZZ_MAX_INPUT) {
				memmove(out + at + tl, out + at, len - at + 1);
				memcpy(out + at, t, tl);
				len += tl;
			}
			break;
		}
		case 2: /* delete a range */
			if (len) {
				size_t n = 1 + rnd() % 8;
				if (at + n > len)
					n = len - at;
				memmove(out + at, out + at + n, len - at - n + 1);
				len -= n;
			}
			break;
		case 3: { /* duplicate a range */
			size_t n = len - at < 16 ? len - at : 16;
			if (n && len + n < FUZZ_MAX_INPUT) {
				memmove(out + at + n, out + at, len - at + 1);
				len += n;
			}
			break;
		}
		default: { /* splice the tail of another seed */
			const char *o = seeds[rnd() % (uint64_t)nseeds];
			size_t ol = strlen(o), from = ol ? rnd() % ol : 0;
			size_t n = ol - from;
			if (at + n >= FUZZ_MAX_INPUT)
				n = FUZZ_MAX_INPUT - 1 - at;
			memcpy(out + at, o + from, n);
			out[at + n] = '\0';
			len = at + n;
			break;
		}
		}
	}
}

int main(int argc, char **argv)
{
	const char *srcdir = getenv("top_srcdir");
	const char *m = getenv("FUZZ_MUTATIONS"), *sd = getenv("FUZZ_SEED");
	long mutations = m ? atol(m) : 100000;
	char dir[4096], buf[FUZZ_MAX_INPUT];

	snprintf(dir, sizeof dir, "%s/t/fuzz/spec", argc > 1 ? argv[1] : srcdir ? srcdir : ".");
	if (argc > 1)
		snprintf(dir, sizeof dir, "%s", argv[1]);
	load_seeds(dir);
	printf("1..3\n");
	if (nseeds == 0) {
		printf("not ok 1 - seed corpus %s found\nnot ok 2 # no seeds\nnot ok 3 # no seeds\n", dir);
		return 1;
	}
	printf("ok 1 - %d seeds in %s\n", nseeds, dir);

	for (int i = 0; i < nseeds; i++)
		one_input(seeds[i]);
	printf("%s 2 - seeds: no crash, messages well-formed (%ld violations)\n",
	       violations ? "not ok" : "ok", violations);

	long before = violations;
	accepted = 0;
	rng_state = sd ? strtoull(sd, NULL, 0) | 1 : 1;
	for (long i = 0; i < mutations; i++) {
		mutate(buf);
		one_input(buf);
	}
	printf("%s 3 - %ld mutations (seed %llu, %ld accepted): no crash, messages well-formed "
	       "(%ld violations)\n",
	       violations > before ? "not ok" : "ok", mutations,
	       (unsigned long long)(sd ? strtoull(sd, NULL, 0) | 1 : 1), accepted, violations - before);
	for (int i = 0; i < nseeds; i++)
		free(seeds[i]);
	return violations ? 1 : 0;
}
#endif
