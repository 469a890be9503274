/*
 * exp.c - the experiment registry and the helpers experiments use to read
 * their parameters and report metrics.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exp.h"
#include "lab.h"

#define X(n) extern const lab_exp exp_##n;
#include "experiments.def"
#undef X

static const lab_exp *const registry[] = {
#define X(n) &exp_##n,
#include "experiments.def"
#undef X
};

int exp_count(void)
{
	return (int)(sizeof registry / sizeof registry[0]);
}

const lab_exp *exp_get(int i)
{
	return i >= 0 && i < exp_count() ? registry[i] : NULL;
}

const lab_exp *exp_find(const char *name)
{
	for (int i = 0; i < exp_count(); i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

static int param_index(const lab_exp *e, const char *name)
{
	for (int i = 0; i < e->nparams; i++)
		if (strcmp(e->params[i].name, name) == 0)
			return i;
	return -1;
}

double exp_param(const struct lab_run *r, const char *name)
{
	int i = param_index(r->exp, name);
	assert(i >= 0 && "experiment reads an undeclared parameter");
	return i >= 0 ? r->p[i] : 0.0;
}

int exp_param_enum(const struct lab_run *r, const char *name)
{
	return (int)exp_param(r, name);
}

const char *exp_param_enum_name(const struct lab_run *r, const char *name)
{
	int i = param_index(r->exp, name);
	assert(i >= 0 && r->exp->params[i].type == PT_ENUM);
	return r->exp->params[i].values[(int)r->p[i]];
}

void exp_metric(struct lab_run *r, const char *name, double v)
{
	for (int i = 0; i < r->exp->nmetrics; i++) {
		if (strcmp(r->exp->metrics[i].name, name) == 0) {
			r->m[i] = v;
			r->m_set[i] = 1;
			return;
		}
	}
	assert(0 && "experiment sets an undeclared metric");
}

int exp_fail(struct lab_run *r, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof r->errmsg, fmt, ap);
	va_end(ap);
	r->failed = code;
	return code;
}

/* ------------------------------------------------ parameter parsing */

static const char *type_name(ptype t)
{
	switch (t) {
	case PT_INT: return "int";
	case PT_FLOAT: return "float";
	case PT_ENUM: return "enum";
	case PT_INT_OR_INF: return "int-or-inf";
	case PT_BOOL: return "bool";
	}
	return "?";
}

/* Parse an integer with an optional binary suffix (K, M, G: x1024^n), as
 * thresholds and sizes are written in the seeds ("4K"). The whole string
 * must be consumed. */
static int parse_int(const char *v, double *out)
{
	const char *q = v;
	if (*q == '-' || *q == '+')
		q++;
	if (*q < '0' || *q > '9')
		return -1;
	double x = 0;
	for (; *q >= '0' && *q <= '9'; q++) {
		x = x * 10 + (*q - '0');
		if (x > 9.0e15)
			return -1;
	}
	if (*q == 'K' || *q == 'k') {
		x *= 1024;
		q++;
	} else if (*q == 'M' || *q == 'm') {
		x *= 1024.0 * 1024;
		q++;
	} else if (*q == 'G' || *q == 'g') {
		x *= 1024.0 * 1024 * 1024;
		q++;
	}
	if (*q)
		return -1;
	*out = v[0] == '-' ? -x : x;
	return 0;
}

static int parse_float(const char *v, double *out)
{
	char *end;
	if (!*v)
		return -1;
	double x = strtod(v, &end);
	if (*end || x != x || isinf(x))
		return -1;
	*out = x;
	return 0;
}

static int parse_one(const param_desc *d, const char *v, double *out,
		     char *err, size_t errlen)
{
	double x;
	switch (d->type) {
	case PT_BOOL:
		if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "on")) {
			*out = 1;
			return 0;
		}
		if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "off")) {
			*out = 0;
			return 0;
		}
		snprintf(err, errlen, "parameter '%s' takes true or false, not '%s'", d->name, v);
		return LAB_EINVAL;
	case PT_ENUM: {
		for (int i = 0; d->values[i]; i++) {
			if (!strcmp(v, d->values[i])) {
				*out = i;
				return 0;
			}
		}
		int n = snprintf(err, errlen, "parameter '%s' takes one of", d->name);
		for (int i = 0; d->values[i] && n > 0 && (size_t)n < errlen; i++)
			n += snprintf(err + n, errlen - (size_t)n, " %s", d->values[i]);
		if (n > 0 && (size_t)n < errlen)
			snprintf(err + n, errlen - (size_t)n, ", not '%s'", v);
		return LAB_EINVAL;
	}
	case PT_INT_OR_INF:
		if (!strcmp(v, "inf") || !strcmp(v, "infinite") || !strcmp(v, "infinity")) {
			*out = INFINITY;
			return 0;
		}
		/* fall through */
	case PT_INT:
		if (parse_int(v, &x)) {
			snprintf(err, errlen, "parameter '%s' takes an integer%s, not '%s'", d->name,
				 d->type == PT_INT_OR_INF ? " or inf" : "", v);
			return LAB_EINVAL;
		}
		if (x < d->min || (d->type == PT_INT && x > d->max) ||
		    (d->type == PT_INT_OR_INF && d->max > d->min && x > d->max)) {
			if (d->type == PT_INT_OR_INF && !(d->max > d->min))
				snprintf(err, errlen, "parameter '%s' must be >= %.0f or inf, not %s",
					 d->name, d->min, v);
			else
				snprintf(err, errlen, "parameter '%s' must be in [%.0f, %.0f], not %s",
					 d->name, d->min, d->max, v);
			return LAB_ERANGE;
		}
		if (d->multiple_of > 0 && isfinite(x) && fmod(x, d->multiple_of) != 0) {
			snprintf(err, errlen, "parameter '%s' must be a multiple of %.0f, not %s",
				 d->name, d->multiple_of, v);
			return LAB_ERANGE;
		}
		*out = x;
		return 0;
	case PT_FLOAT:
		if (parse_float(v, &x)) {
			snprintf(err, errlen, "parameter '%s' takes a number, not '%s'", d->name, v);
			return LAB_EINVAL;
		}
		if ((d->min_open ? x <= d->min : x < d->min) || x > d->max) {
			snprintf(err, errlen, "parameter '%s' must be in %c%g, %g], not %s", d->name,
				 d->min_open ? '(' : '[', d->min, d->max, v);
			return LAB_ERANGE;
		}
		*out = x;
		return 0;
	}
	snprintf(err, errlen, "parameter '%s' has an unknown type", d->name);
	return LAB_EINVAL;
}

int exp_parse_params(const lab_exp *e, const char *text, double *p,
		     char *err, size_t errlen)
{
	for (int i = 0; i < e->nparams; i++)
		p[i] = e->params[i].def;
	if (!text)
		return 0;
	const char *line = text;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		if (n > 0) {
			char buf[256];
			if (n >= sizeof buf) {
				snprintf(err, errlen, "setting too long");
				return LAB_EINVAL;
			}
			memcpy(buf, line, n);
			buf[n] = 0;
			char *eq = strchr(buf, '=');
			if (!eq || eq == buf) {
				snprintf(err, errlen, "setting '%s' is not KEY=VALUE", buf);
				return LAB_EINVAL;
			}
			*eq = 0;
			int idx = param_index(e, buf);
			if (idx < 0) {
				snprintf(err, errlen, "experiment '%s' has no parameter '%s' (see: lab list)",
					 e->name, buf);
				return LAB_ENOENT;
			}
			int rc = parse_one(&e->params[idx], eq + 1, &p[idx], err, errlen);
			if (rc)
				return rc;
		}
		line += n + (nl ? 1 : 0);
	}
	return 0;
}

static void param_value_json(const param_desc *d, double v, strbuf *out)
{
	if (d->type == PT_ENUM)
		js_str(out, d->values[(int)v]);
	else if (d->type == PT_BOOL)
		js_bool(out, v != 0);
	else
		js_num(out, v); /* +inf prints as "inf" */
}

void exp_params_json(const lab_exp *e, const double *p, strbuf *out)
{
	js_obj(out);
	for (int i = 0; i < e->nparams; i++) {
		js_key(out, e->params[i].name);
		param_value_json(&e->params[i], p[i], out);
	}
	js_obj_end(out);
}

void exp_describe_json(const lab_exp *e, strbuf *out)
{
	js_obj(out);
	js_kstr(out, "name", e->name);
	js_kstr(out, "seed", e->seed);
	js_kstr(out, "title", e->title);
	js_key(out, "variants");
	js_arr(out);
	if (e->has_variants) {
		js_str(out, "before");
		js_str(out, "after");
	} else {
		js_str(out, "base");
	}
	js_arr_end(out);
	js_key(out, "params");
	js_arr(out);
	for (int i = 0; i < e->nparams; i++) {
		const param_desc *d = &e->params[i];
		js_obj(out);
		js_kstr(out, "name", d->name);
		js_kstr(out, "type", type_name(d->type));
		js_key(out, "default");
		param_value_json(d, d->def, out);
		if (d->type == PT_INT || d->type == PT_FLOAT || d->type == PT_INT_OR_INF) {
			js_knum(out, "min", d->min);
			if (d->type != PT_INT_OR_INF || d->max > d->min)
				js_knum(out, "max", d->max);
			if (d->min_open)
				js_kbool(out, "min_exclusive", 1);
			if (d->multiple_of > 0)
				js_knum(out, "multiple_of", d->multiple_of);
		}
		if (d->type == PT_ENUM) {
			js_key(out, "values");
			js_arr(out);
			for (int j = 0; d->values[j]; j++)
				js_str(out, d->values[j]);
			js_arr_end(out);
		}
		if (d->unit)
			js_kstr(out, "unit", d->unit);
		js_kstr(out, "help", d->help ? d->help : "");
		js_obj_end(out);
	}
	js_arr_end(out);
	js_key(out, "metrics");
	js_arr(out);
	for (int i = 0; i < e->nmetrics; i++)
		js_str(out, e->metrics[i].name);
	js_arr_end(out);
	js_key(out, "metric_info");
	js_arr(out);
	for (int i = 0; i < e->nmetrics; i++) {
		js_obj(out);
		js_kstr(out, "name", e->metrics[i].name);
		js_kstr(out, "unit", e->metrics[i].unit ? e->metrics[i].unit : "");
		js_kstr(out, "help", e->metrics[i].help ? e->metrics[i].help : "");
		js_obj_end(out);
	}
	js_arr_end(out);
	js_key(out, "published");
	js_arr(out);
	for (int i = 0; i < e->npublished; i++) {
		const published_row *r = &e->published[i];
		double p[EXP_MAX_PARAMS];
		char err[160];
		js_obj(out);
		js_kstr(out, "variant", r->variant);
		js_key(out, "params");
		/* the row's own settings only, as written */
		js_obj(out);
		if (exp_parse_params(e, r->params, p, err, sizeof err) == 0) {
			const char *line = r->params ? r->params : "";
			while (*line) {
				const char *nl = strchr(line, '\n');
				size_t n = nl ? (size_t)(nl - line) : strlen(line);
				char buf[128];
				if (n > 0 && n < sizeof buf) {
					memcpy(buf, line, n);
					buf[n] = 0;
					char *eq = strchr(buf, '=');
					if (eq) {
						*eq = 0;
						int idx = param_index(e, buf);
						if (idx >= 0) {
							js_key(out, buf);
							param_value_json(&e->params[idx], p[idx], out);
						}
					}
				}
				line += n + (nl ? 1 : 0);
			}
		}
		js_obj_end(out);
		js_kstr(out, "metric", r->metric);
		js_knum(out, "value", r->value);
		js_kstr(out, "source", r->source);
		js_knum(out, "tolerance", r->tolerance);
		js_obj_end(out);
	}
	js_arr_end(out);
	js_obj_end(out);
}
