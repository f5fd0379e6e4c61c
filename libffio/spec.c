/* libffio/spec.c -- the FF_IO_OPTS parser and pattern matcher.
 *
 * Grammar (see ffio(7)):
 *   spec    := ws* (entry (ws+ entry)*)? ws*
 *   entry   := PATTERN '(' ws* layer (ws* ',' ws* layer)* ws* ')'
 *   layer   := NAME ('.' FLAG)* (':' ARG)*
 *   ARG     := VALUE | KEY '=' VALUE
 * A stack given on its own (ffopen, MPI_Info) is just the layer list.
 *
 * Every error produces one line in err naming the source variable, the entry,
 * the 1-based column in the whole text and what was expected.  The parser
 * never reads past the terminating NUL and bounds everything it stores.
 */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffio-internal.h"

#define MAX_ENTRIES 1024  /* entries in one spec */
#define QUOTE_MAX 40      /* characters of input quoted in a message */
#define MAX_MAP_STEPS 4   /* eie -> cache -> (cache's own check) */

struct parser {
	const char *text;   /* the whole text: columns count from here */
	const char *source; /* "FF_IO_OPTS" */
	char *err;
	size_t errlen;
	const char *entry_start; /* current entry, for messages */
	int entry_index;
	int in_parens;           /* the entry is PATTERN(...) (not a bare stack) */
};

/* ---- characters --------------------------------------------------------- */

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* End of an argument token. */
static int is_arg_end(char c)
{
	return c == '\0' || c == ':' || c == ',' || c == ')' || is_space(c);
}

static const char *skip_space(const char *p)
{
	while (is_space(*p))
		p++;
	return p;
}

static int token_is(const char *tok, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(tok, word, len) == 0;
}

/* ---- messages ----------------------------------------------------------- */

/* Copy at most max characters of s[0..len) into buf as printable text
 * (control characters become '?'), with "..." when truncated. */
static void quote(char *buf, size_t bufsize, const char *s, size_t len, size_t max)
{
	size_t n = 0;
	int cut = len > max;

	if (cut)
		len = max;
	for (size_t i = 0; i < len && n + 1 < bufsize; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[n++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (cut)
		for (int i = 0; i < 3 && n + 1 < bufsize; i++)
			buf[n++] = '.';
	buf[n] = '\0';
}

/* The text of the current entry: up to its closing ')' (or, before the
 * '(' is seen, up to white space), or the end of the text. */
static size_t entry_length(const struct parser *p)
{
	const char *e = p->entry_start;
	int open = !p->in_parens;

	while (*e) {
		if (!open && is_space(*e))
			break;
		if (*e == '(')
			open = 1;
		if (*e == ')' && p->in_parens) {
			e++;
			break;
		}
		e++;
	}
	return (size_t)(e - p->entry_start);
}

/* Record one error message at position at; returns -EINVAL. */
static int fail(struct parser *p, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct parser *p, const char *at, const char *fmt, ...)
{
	char what[512], entry[3 * QUOTE_MAX];
	va_list ap;

	if (!p->err || p->errlen == 0)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	quote(entry, sizeof entry, p->entry_start, entry_length(p), QUOTE_MAX);
	snprintf(p->err, p->errlen, "%s: entry %d \"%s\", column %zu: %s", p->source,
		 p->entry_index, entry, (size_t)(at - p->text) + 1, what);
	return -EINVAL;
}

/* Describe the character at s for "found ..." in messages. */
static const char *found(const char *s, char *buf, size_t bufsize)
{
	if (*s == '\0')
		return "the end of the text";
	if ((unsigned char)*s < 0x20 || *s == 0x7f) {
		snprintf(buf, bufsize, "character 0x%02x", (unsigned char)*s);
		return buf;
	}
	snprintf(buf, bufsize, "\"%c\"", *s);
	return buf;
}

/* Append ", name" for every name of a list to buf (bounded). */
static void list_append(char *buf, size_t bufsize, const char *name)
{
	size_t n = strlen(buf);

	if (n + 1 >= bufsize)
		return;
	snprintf(buf + n, bufsize - n, "%s%s", n ? ", " : "", name);
}

/* ---- numbers, units, errno names ---------------------------------------- */

struct unit {
	const char *suffix;
	int64_t mult;
};

static const struct unit size_units[] = {
	{"", 1}, {"k", 1LL << 10}, {"K", 1LL << 10}, {"m", 1LL << 20}, {"M", 1LL << 20},
	{"g", 1LL << 30}, {"G", 1LL << 30}, {NULL, 0},
};

static const struct unit no_units[] = {{"", 1}, {NULL, 0}};

static const struct unit time_units[] = {
	{"", 1000}, {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {NULL, 0},
};

#define E(name) {#name, name}
static const struct errno_name {
	const char *name;
	int value;
} errno_names[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG), E(ENOEXEC),
	E(EBADF), E(ECHILD), E(EAGAIN), E(EWOULDBLOCK), E(ENOMEM), E(EACCES), E(EFAULT),
	E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV), E(ENOTDIR), E(EISDIR),
	E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY), E(ETXTBSY), E(EFBIG), E(ENOSPC),
	E(ESPIPE), E(EROFS), E(EMLINK), E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK),
	E(ENAMETOOLONG), E(ENOLCK), E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG),
	E(EIDRM), E(ENOSTR), E(ENODATA), E(ETIME), E(ENOSR), E(ENOLINK), E(EPROTO),
	E(EBADMSG), E(EOVERFLOW), E(EILSEQ), E(EUSERS), E(ENOTSOCK), E(EMSGSIZE),
	E(EOPNOTSUPP), E(ENOTSUP), E(EADDRINUSE), E(ENETDOWN), E(ENETUNREACH),
	E(ECONNABORTED), E(ECONNRESET), E(ENOBUFS), E(EISCONN), E(ENOTCONN), E(ETIMEDOUT),
	E(ECONNREFUSED), E(EHOSTUNREACH), E(EALREADY), E(EINPROGRESS), E(ESTALE),
	E(EDQUOT), E(ECANCELED), E(EOWNERDEAD), E(ENOTRECOVERABLE), E(ENOMEDIUM),
	E(EREMOTEIO), E(EUCLEAN), E(EKEYEXPIRED), E(ENOKEY),
	{NULL, 0},
};
#undef E

/* Parse v[0..n) as a param of type pm->type into *out. */
static int parse_value(struct parser *p, const struct ffio_param *pm, const char *v,
		       size_t n, int64_t *out)
{
	char q[3 * QUOTE_MAX];
	const struct unit *units = size_units;
	const char *unit_list = "k, m or g";
	uint64_t mag = 0;
	size_t i = 0;
	int neg = 0;

	quote(q, sizeof q, v, n, QUOTE_MAX);
	if (n == 0)
		return fail(p, v, "expected a value for \"%s\"", pm->name);

	if (pm->type == FFIO_P_ENUM) {
		char names[256] = "";
		for (int k = 0; pm->names && pm->names[k]; k++) {
			if (token_is(v, n, pm->names[k])) {
				*out = k;
				return 0;
			}
			list_append(names, sizeof names, pm->names[k]);
		}
		return fail(p, v, "unknown value \"%s\" for \"%s\" (expected one of: %s)", q,
			    pm->name, names);
	}
	if (pm->type == FFIO_P_ERRNO && !(v[0] >= '0' && v[0] <= '9')) {
		for (int k = 0; errno_names[k].name; k++) {
			if (token_is(v, n, errno_names[k].name)) {
				*out = errno_names[k].value;
				goto range;
			}
		}
		return fail(p, v, "unknown errno name \"%s\" for \"%s\" (expected a name such as ENOSPC or EIO, or a number)",
			    q, pm->name);
	}

	if (v[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i >= n || !(v[i] >= '0' && v[i] <= '9'))
		return fail(p, v, "expected a number for \"%s\", found \"%s\"", pm->name, q);
	for (; i < n && v[i] >= '0' && v[i] <= '9'; i++) {
		unsigned d = (unsigned)(v[i] - '0');
		if (mag > ((uint64_t)INT64_MAX - d) / 10)
			return fail(p, v, "number too large: \"%s\"", q);
		mag = mag * 10 + d;
	}

	if (pm->type == FFIO_P_TIME) {
		units = time_units;
		unit_list = "ns, us, ms or s; a bare number is microseconds";
	} else if (pm->type == FFIO_P_ERRNO) {
		units = no_units;
		unit_list = "a plain number or a name";
	}
	const struct unit *u = NULL;
	for (int k = 0; units[k].suffix; k++) {
		if (token_is(v + i, n - i, units[k].suffix)) {
			u = &units[k];
			break;
		}
	}
	if (!u) {
		char uq[3 * QUOTE_MAX];
		quote(uq, sizeof uq, v + i, n - i, QUOTE_MAX);
		return fail(p, v + i, "unknown unit \"%s\" in \"%s\" for \"%s\" (expected %s)", uq,
			    q, pm->name, unit_list);
	}
	if (mag > (uint64_t)(INT64_MAX / u->mult))
		return fail(p, v, "number too large: \"%s\"", q);
	*out = (int64_t)mag * u->mult;
	if (neg)
		*out = -*out;
range:
	if (*out < pm->min || *out > pm->max)
		return fail(p, v, "value \"%s\" of \"%s\" is out of range (expected %" PRId64
			    "..%" PRId64 ")", q, pm->name, pm->min, pm->max);
	return 0;
}

/* ---- one layer ---------------------------------------------------------- */

static int count_params(const struct ffio_layer_ops *ops)
{
	int n = 0;

	while (ops->params && ops->params[n].name && n < FFIO_MAX_PARAMS)
		n++;
	return n;
}

static const struct ffio_flag *find_flag(const struct ffio_layer_ops *ops, const char *name,
					 size_t len)
{
	for (int i = 0; ops->flags && ops->flags[i].name; i++)
		if (token_is(name, len, ops->flags[i].name))
			return &ops->flags[i];
	return NULL;
}

static void fill_defaults(struct ffio_layer_spec *ls)
{
	int n = count_params(ls->ops);

	for (int i = 0; i < FFIO_MAX_PARAMS; i++)
		if (!(ls->given & (1u << i)))
			ls->arg[i] = i < n ? ls->ops->params[i].def : 0;
}

/* One message per process per unavailable layer. */
static void warn_fallback(const struct ffio_layer_ops *ops, const struct ffio_layer_ops *fb)
{
	static int warned[64];
	int i = 0;

	while (ffio_layers[i] && ffio_layers[i] != ops && i < 63)
		i++;
	ffio_log_once(&warned[i], "layer '%s' is not available here (%s); using '%s'", ops->name,
		      ops->unavailable, fb->name);
}

/* Replace an unavailable layer by its fallback (default arguments, .direct
 * kept when both have it). */
static int use_fallback(struct parser *p, const char *at, struct ffio_layer_spec *ls)
{
	const struct ffio_layer_ops *ops = ls->ops, *fb = NULL;
	const struct ffio_flag *direct = find_flag(ops, "direct", 6);
	unsigned flags = 0;

	if (ops->fallback)
		fb = ffio_layer_find(ops->fallback, strlen(ops->fallback));
	if (!fb || fb->unavailable)
		return fail(p, at, "layer \"%s\" is not available in this build (%s)", ops->name,
			    ops->unavailable);
	if (direct && (ls->flags & direct->bit)) {
		const struct ffio_flag *fd = find_flag(fb, "direct", 6);
		if (fd)
			flags = fd->bit;
	}
	warn_fallback(ops, fb);
	ls->ops = fb;
	ls->flags = flags;
	ls->given = 0;
	fill_defaults(ls);
	return 0;
}

static int parse_args(struct parser *p, const char **pos, struct ffio_layer_spec *ls)
{
	const struct ffio_layer_ops *ops = ls->ops;
	const char *s = *pos;
	int nparams = count_params(ops), npos = 0;
	char q[3 * QUOTE_MAX], names[256] = "";

	for (int i = 0; i < nparams; i++)
		list_append(names, sizeof names, ops->params[i].name);

	while (*s == ':') {
		const char *tok = ++s, *val = s, *eq = NULL;
		int idx;

		while (!is_arg_end(*s)) {
			if (*s == '=' && !eq)
				eq = s;
			s++;
		}
		size_t len = (size_t)(s - tok);
		if (len == 0)
			return fail(p, tok, "expected an argument after ':'");
		if (nparams == 0)
			return fail(p, tok, "layer \"%s\" takes no arguments", ops->name);
		if (eq) {
			size_t klen = (size_t)(eq - tok);
			if (klen == 0)
				return fail(p, tok, "expected an argument name before '='");
			for (idx = 0; idx < nparams; idx++)
				if (token_is(tok, klen, ops->params[idx].name))
					break;
			if (idx == nparams) {
				quote(q, sizeof q, tok, klen, QUOTE_MAX);
				return fail(p, tok, "unknown argument \"%s\" of layer \"%s\" (expected one of: %s)",
					    q, ops->name, names);
			}
			val = eq + 1;
		} else {
			idx = npos++;
			if (idx >= nparams)
				return fail(p, tok, "too many arguments for layer \"%s\" (at most %d: %s)",
					    ops->name, nparams, names);
		}
		if (ls->given & (1u << idx))
			return fail(p, tok, "argument \"%s\" of layer \"%s\" given twice",
				    ops->params[idx].name, ops->name);
		int rc = parse_value(p, &ops->params[idx], val, (size_t)(s - val), &ls->arg[idx]);
		if (rc)
			return rc;
		ls->given |= 1u << idx;
	}
	*pos = s;
	return 0;
}

static int parse_flags(struct parser *p, const char **pos, struct ffio_layer_spec *ls)
{
	const struct ffio_layer_ops *ops = ls->ops;
	const char *s = *pos;
	char q[3 * QUOTE_MAX], names[256] = "";

	for (int i = 0; ops->flags && ops->flags[i].name; i++)
		list_append(names, sizeof names, ops->flags[i].name);

	while (*s == '.') {
		const char *tok = ++s;
		while (is_name_char(*s))
			s++;
		size_t len = (size_t)(s - tok);
		if (len == 0) {
			char f[32];
			return fail(p, tok, "expected a flag name after '.', found %s",
				    found(tok, f, sizeof f));
		}
		const struct ffio_flag *fl = find_flag(ops, tok, len);
		if (!fl) {
			quote(q, sizeof q, tok, len, QUOTE_MAX);
			if (!names[0])
				return fail(p, tok, "unknown flag \"%s\": layer \"%s\" takes no flags",
					    q, ops->name);
			return fail(p, tok, "unknown flag \"%s\" of layer \"%s\" (expected one of: %s)",
				    q, ops->name, names);
		}
		ls->flags = (ls->flags & ~fl->group) | fl->bit;
	}
	*pos = s;
	return 0;
}

static int unknown_layer(struct parser *p, const char *at, size_t len)
{
	char q[3 * QUOTE_MAX], names[512] = "";

	quote(q, sizeof q, at, len, QUOTE_MAX);
	for (int i = 0; ffio_layers[i]; i++)
		list_append(names, sizeof names, ffio_layers[i]->name);
	return fail(p, at, "unknown layer \"%s\" (expected one of: %s)", q, names);
}

/* Parse one layer at *pos into ls: name, flags, arguments, fallback, map. */
static int parse_layer(struct parser *p, const char **pos, struct ffio_layer_spec *ls)
{
	const char *start = *pos, *s = *pos;
	char f[32];
	int rc;

	while (is_name_char(*s))
		s++;
	if (s == start)
		return fail(p, start, "expected a layer name, found %s", found(start, f, sizeof f));
	ls->ops = ffio_layer_find(start, (size_t)(s - start));
	if (!ls->ops)
		return unknown_layer(p, start, (size_t)(s - start));
	ls->flags = 0;
	ls->given = 0;
	if ((rc = parse_flags(p, &s, ls)) || (rc = parse_args(p, &s, ls)))
		return rc;
	fill_defaults(ls);
	quote(ls->text, sizeof ls->text, start, (size_t)(s - start), sizeof ls->text - 4);

	if (ls->ops->unavailable && (rc = use_fallback(p, start, ls)))
		return rc;
	for (int step = 0; step < MAX_MAP_STEPS && ls->ops->map; step++) {
		const struct ffio_layer_ops *before = ls->ops;
		char why[256] = "invalid combination of arguments";
		if (ls->ops->map(ls, why, sizeof why))
			return fail(p, start, "%s", why);
		if (ls->ops == before)
			break;
	}
	*pos = s;
	return 0;
}

/* ---- a stack ------------------------------------------------------------ */

/* Parse "layer, layer, ..." into e, up to ')' (in_parens) or the end of the
 * text; *pos is left after the ')' or at the NUL. */
static int parse_stack(struct parser *p, const char **pos, struct ffio_entry *e)
{
	const char *at[FFIO_MAX_LAYERS];
	const char *s = skip_space(*pos);
	char f[32];
	int rc;

	e->nlayers = 0;
	for (;;) {
		if (e->nlayers == FFIO_MAX_LAYERS)
			return fail(p, s, "too many layers (at most %d)", FFIO_MAX_LAYERS);
		at[e->nlayers] = s;
		if ((rc = parse_layer(p, &s, &e->layer[e->nlayers])))
			return rc;
		e->nlayers++;
		s = skip_space(s);
		if (*s == ',') {
			s = skip_space(s + 1);
			continue;
		}
		if (p->in_parens && *s == ')') {
			s++;
			break;
		}
		if (!p->in_parens && *s == '\0')
			break;
		return fail(p, s, "expected ',' or %s after a layer, found %s",
			    p->in_parens ? "')'" : "the end", found(s, f, sizeof f));
	}

	for (int i = 0; i < e->nlayers - 1; i++)
		if (e->layer[i].ops->kind & FFIO_LAYER_BOTTOM) /* named as written */
			return fail(p, at[i], "bottom layer \"%.*s\" must be the last of the stack",
				    (int)strcspn(e->layer[i].text, ".:"), e->layer[i].text);
	if (!(e->layer[e->nlayers - 1].ops->kind & FFIO_LAYER_BOTTOM)) {
		struct ffio_layer_spec *ls = &e->layer[e->nlayers];
		if (e->nlayers == FFIO_MAX_LAYERS)
			return fail(p, s, "too many layers (at most %d, with the \"sys\" added at the bottom)",
				    FFIO_MAX_LAYERS);
		ls->ops = ffio_layer_find("sys", 3);
		if (!ls->ops)
			return fail(p, s, "the \"sys\" layer is missing from this build");
		ls->flags = 0;
		ls->given = 0;
		fill_defaults(ls);
		snprintf(ls->text, sizeof ls->text, "sys");
		e->nlayers++;
	}
	*pos = s;
	return 0;
}

/* ---- the spec ----------------------------------------------------------- */

static void spec_free(struct ffio_spec *s, int locks_ready)
{
	if (!s)
		return;
	for (int i = 0; i < s->nentries; i++) {
		free(s->entry[i].pattern);
		if (locks_ready)
			for (int j = 0; j < s->entry[i].nlayers; j++)
				pthread_mutex_destroy(&s->entry[i].layer[j].shared_lock);
	}
	free(s->entry);
	free(s);
}

void ffio_spec_free(struct ffio_spec *s)
{
	spec_free(s, 1);
}

/* A new zeroed entry at the end of s, or NULL (no memory). */
static struct ffio_entry *add_entry(struct ffio_spec *s, int *cap)
{
	if (s->nentries == *cap) {
		int ncap = *cap ? *cap * 2 : 4;
		struct ffio_entry *n = realloc(s->entry, (size_t)ncap * sizeof *n);
		if (!n)
			return NULL;
		s->entry = n;
		*cap = ncap;
	}
	struct ffio_entry *e = &s->entry[s->nentries++];
	memset(e, 0, sizeof *e);
	e->index = s->nentries;
	return e;
}

/* Once parsing succeeded (entries no longer move): the per-layer locks. */
static int init_locks(struct ffio_spec *s)
{
	for (int i = 0; i < s->nentries; i++) {
		for (int j = 0; j < s->entry[i].nlayers; j++) {
			int rc = pthread_mutex_init(&s->entry[i].layer[j].shared_lock, NULL);
			if (rc) {
				/* undo the ones made so far */
				for (int k = 0; k <= i; k++)
					for (int m = 0; m < (k < i ? s->entry[k].nlayers : j); m++)
						pthread_mutex_destroy(&s->entry[k].layer[m].shared_lock);
				return -rc;
			}
		}
	}
	return 0;
}

static int parse_entry(struct parser *p, const char **pos, struct ffio_entry *e)
{
	const char *start = *pos, *s = *pos;
	char f[32];

	while (*s && *s != '(' && *s != ')' && !is_space(*s))
		s++;
	if (*s != '(') {
		if (s == start)
			return fail(p, s, "expected a file name pattern, found %s", found(s, f, sizeof f));
		return fail(p, s, "expected '(' after the pattern, found %s", found(s, f, sizeof f));
	}
	if (s == start)
		return fail(p, s, "expected a file name pattern before '('");
	e->pattern = strndup(start, (size_t)(s - start));
	if (!e->pattern)
		return -ENOMEM;
	e->has_slash = memchr(start, '/', (size_t)(s - start)) != NULL;
	s++;
	int rc = parse_stack(p, &s, e);
	if (rc)
		return rc;
	if (*s && !is_space(*s))
		return fail(p, s, "expected white space between entries, found %s",
			    found(s, f, sizeof f));
	*pos = s;
	return 0;
}

static int finish(struct ffio_spec *s, int rc, struct ffio_spec **out, char *err, size_t errlen,
		  const char *source)
{
	if (rc == 0)
		rc = init_locks(s);
	if (rc) {
		spec_free(s, 0);
		*out = NULL;
		if (rc != -EINVAL && err && errlen)
			snprintf(err, errlen, "%s: cannot parse: %s", source, strerror(-rc));
		return rc;
	}
	*out = s;
	return 0;
}

int ffio_spec_parse(const char *text, const char *source, struct ffio_spec **out, char *err,
		    size_t errlen)
{
	struct parser p = {.text = text ? text : "", .source = source ? source : "FF_IO_OPTS",
			   .err = err, .errlen = errlen, .in_parens = 1};
	struct ffio_spec *s = calloc(1, sizeof *s);
	const char *pos = p.text;
	int cap = 0, rc = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!s)
		return finish(s, -ENOMEM, out, err, errlen, p.source);
	for (pos = skip_space(pos); *pos && rc == 0; pos = skip_space(pos)) {
		p.entry_start = pos;
		p.entry_index = s->nentries + 1;
		if (s->nentries == MAX_ENTRIES) {
			rc = fail(&p, pos, "too many entries (at most %d)", MAX_ENTRIES);
			break;
		}
		struct ffio_entry *e = add_entry(s, &cap);
		if (!e) {
			rc = -ENOMEM;
			break;
		}
		rc = parse_entry(&p, &pos, e);
	}
	return finish(s, rc, out, err, errlen, p.source);
}

int ffio_spec_parse_stack(const char *text, const char *source, struct ffio_spec **out,
			  char *err, size_t errlen)
{
	struct parser p = {.text = text ? text : "", .source = source ? source : "FF_IO_OPTS",
			   .err = err, .errlen = errlen, .in_parens = 0, .entry_index = 1};
	struct ffio_spec *s = calloc(1, sizeof *s);
	int cap = 0, rc;

	p.entry_start = p.text;
	if (err && errlen)
		err[0] = '\0';
	if (!s)
		return finish(s, -ENOMEM, out, err, errlen, p.source);
	struct ffio_entry *e = add_entry(s, &cap);
	if (!e)
		return finish(s, -ENOMEM, out, err, errlen, p.source);
	e->pattern = strdup("*");
	if (!e->pattern)
		return finish(s, -ENOMEM, out, err, errlen, p.source);
	const char *pos = p.text;
	rc = parse_stack(&p, &pos, e);
	return finish(s, rc, out, err, errlen, p.source);
}

/* ---- matching ----------------------------------------------------------- */

/* A pattern with a '/' is matched against the path as given, one without
 * against its last component.  No FNM_PATHNAME: a '*' also matches '/', so
 * a pattern "DIR/" "*.dat" covers every .dat file in the whole tree under
 * DIR, which is what a user naming a file system usually wants.  No
 * FNM_PERIOD: "*.nc" also matches ".x.nc". */
struct ffio_entry *ffio_spec_match(const struct ffio_spec *s, const char *path)
{
	const char *base;

	if (!s || !path)
		return NULL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (int i = 0; i < s->nentries; i++) {
		struct ffio_entry *e = &s->entry[i];
		if (fnmatch(e->pattern, e->has_slash ? path : base, 0) == 0)
			return e;
	}
	return NULL;
}

/* ---- one value ---------------------------------------------------------- */

/* Parse text as a value of param pm (units, errno names, enum names, range),
 * exactly as an argument of a layer.  Not in ffio-internal.h: the tests of
 * the value syntax (t/spec_values.c) declare it themselves. */
int ffio_spec_parse_value(const struct ffio_param *pm, const char *text, int64_t *out,
			  char *err, size_t errlen);
int ffio_spec_parse_value(const struct ffio_param *pm, const char *text, int64_t *out,
			  char *err, size_t errlen)
{
	struct parser p = {.text = text, .source = "value", .err = err, .errlen = errlen,
			   .entry_start = text, .entry_index = 1};

	if (err && errlen)
		err[0] = '\0';
	return parse_value(&p, pm, text, strlen(text), out);
}
