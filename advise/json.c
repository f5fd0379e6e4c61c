/* advise/json.c -- a small JSON parser for one line of ffio's event log:
 * objects, arrays, strings (with \uXXXX escapes), numbers, true, false and
 * null.  It rejects anything else, trailing bytes included, and says what
 * it expected at which column, so that a malformed line gets a clear
 * message instead of a wrong advice. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"

#define JSON_DEPTH 32 /* the event log nests 4 deep */

struct jp {
	const char *text, *p;
	char *err;
	size_t errlen;
	int depth;
};

__attribute__((format(printf, 2, 3))) static int jfail(struct jp *j, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(j->err, j->errlen, "column %ld: ", (long)(j->p - j->text) + 1);

	if (n < 0 || (size_t)n >= j->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(j->err + n, j->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void jspace(struct jp *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n')
		j->p++;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string at j->p (the opening quote) into a new buffer *out. */
static int jstring(struct jp *j, char **out)
{
	const char *s = ++j->p;
	size_t cap = 16, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		unsigned c = (unsigned char)*s;
		char tmp[4];
		size_t tn = 1;

		if (c == '"')
			break;
		if (c == '\0') {
			free(buf);
			j->p = s;
			return jfail(j, "the string does not end");
		}
		if (c < 0x20) {
			free(buf);
			j->p = s;
			return jfail(j, "a control character in a string");
		}
		if (c == '\\') {
			s++;
			switch (*s) {
			case '"': case '\\': case '/': tmp[0] = *s; break;
			case 'b': tmp[0] = '\b'; break;
			case 'f': tmp[0] = '\f'; break;
			case 'n': tmp[0] = '\n'; break;
			case 'r': tmp[0] = '\r'; break;
			case 't': tmp[0] = '\t'; break;
			case 'u': {
				unsigned v = 0;
				for (int i = 1; i <= 4; i++) {
					int h = hexval(s[i]);
					if (h < 0) {
						free(buf);
						j->p = s;
						return jfail(j, "expected 4 hex digits after \\u");
					}
					v = v * 16 + (unsigned)h;
				}
				s += 4;
				if (v == 0) {
					free(buf);
					j->p = s;
					return jfail(j, "\\u0000 in a string");
				}
				/* UTF-8 (surrogates are kept as they are: ffio writes
				 * only control characters this way). */
				if (v < 0x80) {
					tmp[0] = (char)v;
				} else if (v < 0x800) {
					tmp[0] = (char)(0xc0 | (v >> 6));
					tmp[1] = (char)(0x80 | (v & 0x3f));
					tn = 2;
				} else {
					tmp[0] = (char)(0xe0 | (v >> 12));
					tmp[1] = (char)(0x80 | ((v >> 6) & 0x3f));
					tmp[2] = (char)(0x80 | (v & 0x3f));
					tn = 3;
				}
				break;
			}
			default:
				free(buf);
				j->p = s;
				return jfail(j, "an unknown escape in a string");
			}
		} else {
			tmp[0] = (char)c;
		}
		if (len + tn + 1 > cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		memcpy(buf + len, tmp, tn);
		len += tn;
		s++;
	}
	buf[len] = '\0';
	j->p = s + 1;
	*out = buf;
	return 0;
}

static int jnumber(struct jp *j, struct adv_json *v)
{
	const char *s = j->p, *start = s;
	int whole = 1;
	char *end;

	if (*s == '-') {
		s++;
		whole = 0;
	}
	if (*s < '0' || *s > '9')
		return jfail(j, "expected a value");
	while (*s >= '0' && *s <= '9')
		s++;
	if (*s == '.') {
		whole = 0;
		s++;
		if (*s < '0' || *s > '9') {
			j->p = s;
			return jfail(j, "expected a digit after '.'");
		}
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		whole = 0;
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (*s < '0' || *s > '9') {
			j->p = s;
			return jfail(j, "expected a digit in the exponent");
		}
		while (*s >= '0' && *s <= '9')
			s++;
	}
	v->type = ADV_JNUM;
	v->num = strtod(start, &end);
	if (whole) {
		errno = 0;
		v->u = strtoull(start, &end, 10);
		v->is_uint = errno == 0;
	}
	j->p = s;
	return 0;
}

static int jvalue(struct jp *j, struct adv_json *v);

/* Append a member (key may be NULL for an array) to container v. */
static int jadd(struct adv_json *v, char *key, struct adv_json **kid)
{
	struct adv_json *k = adv_xrealloc(v->kid, (size_t)v->n + 1, sizeof *k);
	if (!k)
		return -ENOMEM;
	v->kid = k;
	if (v->type == ADV_JOBJ) {
		char **keys = adv_xrealloc(v->keys, (size_t)v->n + 1, sizeof *keys);
		if (!keys)
			return -ENOMEM;
		v->keys = keys;
		keys[v->n] = key;
	}
	*kid = &k[v->n];
	memset(*kid, 0, sizeof **kid);
	v->n++;
	return 0;
}

static int jcontainer(struct jp *j, struct adv_json *v, int obj)
{
	char close = obj ? '}' : ']';

	if (++j->depth > JSON_DEPTH)
		return jfail(j, "nested more than %d deep", JSON_DEPTH);
	v->type = obj ? ADV_JOBJ : ADV_JARR;
	j->p++;
	jspace(j);
	if (*j->p == close) {
		j->p++;
		j->depth--;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		struct adv_json *kid;
		int rc;

		jspace(j);
		if (obj) {
			if (*j->p != '"')
				return jfail(j, "expected a member name in quotes");
			rc = jstring(j, &key);
			if (rc)
				return rc;
			jspace(j);
			if (*j->p != ':') {
				free(key);
				return jfail(j, "expected ':' after a member name");
			}
			j->p++;
		}
		rc = jadd(v, key, &kid);
		if (rc) {
			free(key);
			return rc;
		}
		rc = jvalue(j, kid);
		if (rc)
			return rc;
		jspace(j);
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p == close) {
			j->p++;
			j->depth--;
			return 0;
		}
		return jfail(j, "expected ',' or '%c'", close);
	}
}

static int jvalue(struct jp *j, struct adv_json *v)
{
	jspace(j);
	switch (*j->p) {
	case '{':
		return jcontainer(j, v, 1);
	case '[':
		return jcontainer(j, v, 0);
	case '"':
		v->type = ADV_JSTR;
		return jstring(j, &v->str);
	case 't':
		if (strncmp(j->p, "true", 4) == 0) {
			v->type = ADV_JBOOL;
			v->num = 1;
			j->p += 4;
			return 0;
		}
		break;
	case 'f':
		if (strncmp(j->p, "false", 5) == 0) {
			v->type = ADV_JBOOL;
			j->p += 5;
			return 0;
		}
		break;
	case 'n':
		if (strncmp(j->p, "null", 4) == 0) {
			v->type = ADV_JNULL;
			j->p += 4;
			return 0;
		}
		break;
	case '\0':
		return jfail(j, "the line ends where a value was expected");
	default:
		return jnumber(j, v);
	}
	return jfail(j, "expected a value");
}

int adv_json_parse(const char *text, struct adv_json *v, char *err, size_t errlen)
{
	struct jp j = {.text = text, .p = text, .err = err, .errlen = errlen};
	int rc;

	memset(v, 0, sizeof *v);
	rc = jvalue(&j, v);
	if (rc == 0) {
		jspace(&j);
		if (*j.p)
			rc = jfail(&j, "unexpected '%c' after the value", *j.p);
	}
	if (rc) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		adv_json_free(v);
	}
	return rc;
}

void adv_json_free(struct adv_json *v)
{
	if (!v)
		return;
	for (int i = 0; i < v->n; i++) {
		if (v->keys)
			free(v->keys[i]);
		adv_json_free(&v->kid[i]);
	}
	free(v->keys);
	free(v->kid);
	free(v->str);
	memset(v, 0, sizeof *v);
}

const struct adv_json *adv_json_get(const struct adv_json *v, const char *key)
{
	if (!v || v->type != ADV_JOBJ)
		return NULL;
	for (int i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return &v->kid[i];
	return NULL;
}
