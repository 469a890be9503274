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
#include "labmem.h"

#define X(n) extern const lab_exp exp_##n;
#include "experiments.def"
#undef X

static const lab_exp *const registry[] = {
#define X(n) &exp_##n,
#include "experiments.def"
#undef X
};

#define NEXP ((int)(sizeof registry / sizeof registry[0]))

/* Each experiment's whole parameter list: its own, then one switch per
 * exposed patch that changes the model and has a param name. Built at
 * first use (the engine is single-threaded). */
static struct {
	param_desc p[EXP_MAX_PARAMS];
	char help[EXP_MAX_PARAMS][240]; /* the switches' */
	int n;
} all_params[NEXP];
static int all_built;

/* Whether e declares a parameter called name itself. */
static int own_param(const lab_exp *e, const char *name)
{
	for (int j = 0; j < e->nparams; j++)
		if (strcmp(e->params[j].name, name) == 0)
			return 1;
	return 0;
}

static void build_params(void)
{
	for (int i = 0; i < NEXP; i++) {
		const lab_exp *e = registry[i];
		patchset after;
		patch_kernel(exp_kernel(e, e->has_variants ? VAR_AFTER : VAR_BASE), &after);
		int n = 0;
		for (int j = 0; j < e->nparams && n < EXP_MAX_PARAMS; j++)
			all_params[i].p[n++] = e->params[j];
		for (int j = 0; j < e->npatches; j++) {
			const patch_info *pi = patch_get(e->patches[j]);
			assert(pi && "experiment exposes an unknown patch");
			assert(n < EXP_MAX_PARAMS && "raise EXP_MAX_PARAMS");
			if (!pi || pi->effect != PE_MODEL || !*pi->param || n >= EXP_MAX_PARAMS)
				continue;
			if (own_param(e, pi->param))
				continue; /* the experiment's own switch (lab_exp.switches) */
			snprintf(all_params[i].help[n], sizeof all_params[i].help[n], "%s: %s, %s",
				 e->has_variants ? "after" : "base", pi->series, pi->help);
			all_params[i].p[n] = (param_desc){
				.name = pi->param, .type = PT_BOOL,
				.def = patch_on(&after, pi->id), .min = 0, .max = 1,
				.help = all_params[i].help[n], .patch = pi->id,
			};
			n++;
		}
		all_params[i].n = n;
	}
	all_built = 1;
}

static int reg_index(const lab_exp *e)
{
	for (int i = 0; i < NEXP; i++)
		if (registry[i] == e)
			return i;
	return -1;
}

int exp_nparams(const lab_exp *e)
{
	if (!all_built)
		build_params();
	int i = reg_index(e);
	return i >= 0 ? all_params[i].n : 0;
}

const param_desc *exp_param_desc(const lab_exp *e, int j)
{
	if (!all_built)
		build_params();
	int i = reg_index(e);
	if (i < 0)
		return NULL;
	return j >= 0 && j < all_params[i].n ? &all_params[i].p[j] : NULL;
}

const char *exp_kernel(const lab_exp *e, int variant)
{
	const char *k = variant >= 0 && variant < 3 ? e->kernel[variant] : NULL;
	return k ? k : PATCH_DEFAULT_KERNEL;
}

int exp_run_patches(const lab_exp *e, int variant, const double *p, patchset *out)
{
	int rc = patch_kernel(exp_kernel(e, variant), out);
	assert(!rc && "experiment names an unknown kernel");
	if (rc || variant == VAR_BEFORE)
		return rc;
	for (int j = 0; j < exp_nparams(e); j++) {
		const param_desc *d = exp_param_desc(e, j);
		if (d->patch != P_NONE)
			patch_set(out, d->patch, p[j] != 0);
	}
	if (e->switches)
		e->switches(e, p, out);
	return 0;
}

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
	for (int i = 0; i < exp_nparams(e); i++)
		if (strcmp(exp_param_desc(e, i)->name, name) == 0)
			return i;
	return -1;
}

int exp_param_index(const lab_exp *e, const char *name)
{
	return param_index(e, name);
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
	const param_desc *d = exp_param_desc(r->exp, i);
	assert(d && d->type == PT_ENUM);
	return d->values[(int)r->p[i]];
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

/*
 * The grammar of a parameter value. web/model/params.ts (parseParam)
 * implements the same one over the same `list` ranges, and a Vitest test
 * runs one table of values through both, so the page never calls a value
 * valid that the engine refuses, nor the reverse. No surrounding spaces.
 *
 *   int         [+-]?[0-9]+ with an optional binary suffix K, M or G
 *               (x1024^n, either case), as sizes and thresholds are written
 *               in the seeds ("4K"). The value is computed exactly (any
 *               number of digits: too many is out of range, never "not an
 *               integer") and the range is checked after the suffix.
 *   int-or-inf  an int, or inf / infinite / infinity
 *   float       [+-]?(digits[.digits] | .digits)([eE][+-]?digits)?, read
 *               as the nearest double; overflow is out of range
 *   bool        true false 1 0 on off
 *   enum        one of the listed values, exactly
 *
 * Every numeric parameter declares a finite range, integers within
 * +-2^53 (engine/tests/test_params.c checks the registry), so a value
 * that passes is exact in a double and every cast an experiment makes
 * of it (to int, uint64_t, simtime_t) is defined.
 */

/* An int as text: sign, magnitude and whether the magnitude (after the
 * suffix) exceeds 2^64 - 1. Returns -1 if the text is not an int. */
static int parse_int(const char *v, int *neg, uint64_t *mag, int *over)
{
	const char *q = v;
	*neg = *q == '-';
	if (*q == '-' || *q == '+')
		q++;
	if (*q < '0' || *q > '9')
		return -1;
	uint64_t x = 0;
	*over = 0;
	for (; *q >= '0' && *q <= '9'; q++) {
		unsigned d = (unsigned)(*q - '0');
		if (x > (UINT64_MAX - d) / 10)
			*over = 1;
		else
			x = x * 10 + d;
	}
	int shift = 0;
	switch (*q) {
	case 'K': case 'k': shift = 10; q++; break;
	case 'M': case 'm': shift = 20; q++; break;
	case 'G': case 'g': shift = 30; q++; break;
	}
	if (*q)
		return -1;
	if (shift && x > UINT64_MAX >> shift)
		*over = 1;
	else
		x <<= shift;
	*mag = x;
	return 0;
}

/* A float as text (the grammar above), then strtod: the nearest double,
 * +-HUGE_VAL on overflow. Returns -1 if the text is not a float. */
static int parse_float(const char *v, double *out)
{
	const char *q = v;
	if (*q == '-' || *q == '+')
		q++;
	int digits = 0;
	while (*q >= '0' && *q <= '9')
		q++, digits++;
	if (*q == '.')
		for (q++; *q >= '0' && *q <= '9'; q++)
			digits++;
	if (!digits)
		return -1;
	if (*q == 'e' || *q == 'E') {
		q++;
		if (*q == '-' || *q == '+')
			q++;
		if (*q < '0' || *q > '9')
			return -1;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	if (*q)
		return -1;
	*out = strtod(v, NULL);
	return 0;
}

/* "parameter 'NAME' " then fmt, then ", not 'VALUE'" (quoted: the value
 * is the user's). */
static int refuse(char *err, size_t errlen, int code, const param_desc *d, const char *v,
		  const char *fmt, ...)
{
	strbuf m;
	sb_init(&m);
	sb_printf(&m, "parameter '%s' ", d->name);
	char tmp[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	sb_puts(&m, tmp);
	sb_puts(&m, ", not ");
	sb_quote(&m, v, 40);
	snprintf(err, errlen, "%s", m.buf && !m.oom ? m.buf : "bad parameter value");
	sb_free(&m);
	return code;
}

/* The range of d as text: "[1, 4096]", "(0, 1]". */
static void range_text(const param_desc *d, char *buf, size_t n)
{
	strbuf m;
	sb_init(&m);
	sb_putc(&m, d->min_open ? '(' : '[');
	sb_num(&m, d->min);
	sb_puts(&m, ", ");
	sb_num(&m, d->max);
	sb_putc(&m, ']');
	snprintf(buf, n, "%s", m.buf && !m.oom ? m.buf : "?");
	sb_free(&m);
}

/* One value of d: 0 and *out, or LAB_EINVAL (not of the type's grammar)
 * or LAB_ERANGE (well formed, outside the range) with a message. */
static int parse_one(const param_desc *d, const char *v, double *out,
		     char *err, size_t errlen)
{
	char range[96];
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
		return refuse(err, errlen, LAB_EINVAL, d, v, "takes true or false");
	case PT_ENUM: {
		for (int i = 0; d->values[i]; i++) {
			if (!strcmp(v, d->values[i])) {
				*out = i;
				return 0;
			}
		}
		char list[120];
		int n = 0;
		list[0] = 0;
		for (int i = 0; d->values[i] && n >= 0 && (size_t)n < sizeof list; i++)
			n += snprintf(list + n, sizeof list - (size_t)n, " %s", d->values[i]);
		return refuse(err, errlen, LAB_EINVAL, d, v, "takes one of%s", list);
	}
	case PT_INT_OR_INF:
	case PT_INT: {
		int inf_ok = d->type == PT_INT_OR_INF;
		if (inf_ok && (!strcmp(v, "inf") || !strcmp(v, "infinite") || !strcmp(v, "infinity"))) {
			*out = INFINITY;
			return 0;
		}
		range_text(d, range, sizeof range);
		int neg, over;
		uint64_t mag;
		/* a type refusal states the range too (issue 32 M1): one message
		 * tells the whole rule */
		if (parse_int(v, &neg, &mag, &over))
			return refuse(err, errlen, LAB_EINVAL, d, v,
				      "takes an integer in %s%s (K, M, G: x1024^n)", range,
				      inf_ok ? " or inf" : "");
		/* the ranges lie within +-2^53, where a double is exact */
		double x = over || mag > (1ull << 53) ? (neg ? -HUGE_VAL : HUGE_VAL)
				: neg ? -(double)mag : (double)mag;
		if (x < d->min || x > d->max)
			return refuse(err, errlen, LAB_ERANGE, d, v, "must be in %s%s", range,
				      inf_ok ? " or inf" : "");
		if (d->multiple_of > 0 && fmod(x, d->multiple_of) != 0)
			return refuse(err, errlen, LAB_ERANGE, d, v, "must be a multiple of %.0f",
				      d->multiple_of);
		*out = x + 0.0; /* -0 is 0 */
		return 0;
	}
	case PT_FLOAT: {
		double x;
		range_text(d, range, sizeof range);
		if (parse_float(v, &x))
			return refuse(err, errlen, LAB_EINVAL, d, v, "takes a number in %s", range);
		if ((d->min_open ? x <= d->min : x < d->min) || x > d->max)
			return refuse(err, errlen, LAB_ERANGE, d, v, "must be in %s", range);
		*out = x;
		return 0;
	}
	}
	snprintf(err, errlen, "parameter '%s' has an unknown type", d->name);
	return LAB_EINVAL;
}

int exp_parse_params(const lab_exp *e, const char *text, double *p,
		     char *err, size_t errlen)
{
	for (int i = 0; i < exp_nparams(e); i++)
		p[i] = exp_param_desc(e, i)->def;
	if (!text)
		return 0;
	const char *line = text;
	int rc = 0;
	while (*line && !rc) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		if (n > 0) {
			/* any length: a value of many digits is an integer (out of
			 * range), not a refusal of its length */
			char *buf = lab_malloc(n + 1);
			if (!buf) {
				snprintf(err, errlen, "out of memory");
				return LAB_ENOMEM;
			}
			memcpy(buf, line, n);
			buf[n] = 0;
			char *eq = strchr(buf, '=');
			int idx = -1;
			if (eq && eq != buf) {
				*eq = 0;
				idx = param_index(e, buf);
			}
			strbuf m;
			sb_init(&m);
			if (!eq || eq == buf) {
				sb_puts(&m, "setting ");
				sb_quote(&m, buf, 40);
				sb_puts(&m, " is not KEY=VALUE");
				rc = LAB_EINVAL;
			} else if (idx < 0) {
				sb_printf(&m, "experiment '%s' has no parameter ", e->name);
				sb_quote(&m, buf, 40);
				sb_puts(&m, " (see: lab list)");
				rc = LAB_ENOENT;
			} else {
				rc = parse_one(exp_param_desc(e, idx), eq + 1, &p[idx], err, errlen);
			}
			if (m.len)
				snprintf(err, errlen, "%s", m.oom ? "bad setting" : m.buf);
			sb_free(&m);
			free(buf);
		}
		line += n + (nl ? 1 : 0);
	}
	return rc;
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
	for (int i = 0; i < exp_nparams(e); i++) {
		const param_desc *d = exp_param_desc(e, i);
		js_key(out, d->name);
		param_value_json(d, p[i], out);
	}
	js_obj_end(out);
}

static void patch_fields(const patch_info *pi, strbuf *out)
{
	js_kstr(out, "id", pi->name);
	js_kstr(out, "seed", pi->seed);
	js_kstr(out, "series", pi->series);
	js_key(out, "commit"); /* null: not on file (help says why) */
	if (*pi->commit)
		js_str(out, pi->commit);
	else
		js_null(out);
	js_kstr(out, "kernel", pi->kernel);
	js_kstr(out, "subsystem", pi->subsystem);
	js_kstr(out, "effect", patch_effect_name(pi->effect));
	js_kstr(out, "title", pi->title);
	js_kstr(out, "help", pi->help);
}

void exp_patch_json(const patch_info *pi, strbuf *out)
{
	js_obj(out);
	patch_fields(pi, out);
	js_obj_end(out);
}

static const char *const var_names[3] = { "base", "before", "after" };

/*
 * For an experiment's own enum switch sw (lab_exp.switches): whether each
 * of its values applies patch `id` in the after run: true / false, or,
 * for a value that follows the kernel preset (an own enum parameter named
 * `kernel`), an object {kernel value: applied}. The page draws the
 * switch's state from it without knowing the experiment.
 */
static void switch_values_json(const lab_exp *e, int sw, patch_id id, strbuf *out)
{
	const param_desc *d = exp_param_desc(e, sw);
	int ki = param_index(e, "kernel");
	const param_desc *kd = ki >= 0 && ki != sw && exp_param_desc(e, ki)->type == PT_ENUM
				       ? exp_param_desc(e, ki) : NULL;
	double p[EXP_MAX_PARAMS];
	char err[160];
	if (exp_parse_params(e, NULL, p, err, sizeof err) != 0)
		return;
	js_key(out, "switch_values");
	js_obj(out);
	for (int j = 0; d->values[j]; j++) {
		p[sw] = j;
		int on[16], nk = 0, same = 1;
		for (int k = 0; (kd ? kd->values[k] != NULL : k == 0) && nk < 16; k++) {
			if (kd)
				p[ki] = k;
			patchset ps;
			exp_run_patches(e, e->has_variants ? VAR_AFTER : VAR_BASE, p, &ps);
			on[nk] = patch_on(&ps, id);
			same &= on[nk] == on[0];
			nk++;
		}
		if (kd)
			p[ki] = kd->def;
		js_key(out, d->values[j]);
		if (same) {
			js_bool(out, on[0]);
			continue;
		}
		js_obj(out);
		for (int k = 0; k < nk; k++)
			js_kbool(out, kd->values[k], on[k]);
		js_obj_end(out);
	}
	p[sw] = d->def;
	js_obj_end(out);
}

void exp_describe_json(const lab_exp *e, strbuf *out)
{
	int vars[2] = { VAR_BEFORE, VAR_AFTER }, nv = 2;
	if (!e->has_variants) {
		vars[0] = VAR_BASE;
		nv = 1;
	}
	js_obj(out);
	js_kstr(out, "name", e->name);
	js_kstr(out, "seed", e->seed);
	js_kstr(out, "title", e->title);
	if (e->work_unit)
		js_kstr(out, "work_unit", e->work_unit);
	js_key(out, "variants");
	js_arr(out);
	for (int v = 0; v < nv; v++)
		js_str(out, var_names[vars[v]]);
	js_arr_end(out);
	/* the kernel each variant runs, and the patches the experiment
	 * exposes: where each is applied, and its switch parameter */
	js_key(out, "kernels");
	js_obj(out);
	for (int v = 0; v < nv; v++)
		js_kstr(out, var_names[vars[v]], exp_kernel(e, vars[v]));
	js_obj_end(out);
	js_key(out, "patches");
	js_arr(out);
	for (int j = 0; j < e->npatches; j++) {
		const patch_info *pi = patch_get(e->patches[j]);
		if (!pi)
			continue;
		js_obj(out);
		patch_fields(pi, out);
		js_key(out, "switch");
		int sw = -1;
		for (int k = 0; k < exp_nparams(e); k++)
			if (exp_param_desc(e, k)->patch == pi->id)
				sw = k;
		if (sw < 0 && pi->effect == PE_MODEL && *pi->param && own_param(e, pi->param))
			sw = param_index(e, pi->param);
		if (sw >= 0)
			js_str(out, exp_param_desc(e, sw)->name);
		else
			js_null(out);
		if (sw >= 0 && exp_param_desc(e, sw)->type == PT_ENUM)
			switch_values_json(e, sw, pi->id, out);
		js_key(out, "applied");
		js_obj(out);
		for (int v = 0; v < nv; v++) {
			patchset ps;
			patch_kernel(exp_kernel(e, vars[v]), &ps);
			js_kbool(out, var_names[vars[v]], patch_on(&ps, pi->id));
		}
		js_obj_end(out);
		js_obj_end(out);
	}
	js_arr_end(out);
	js_key(out, "params");
	js_arr(out);
	for (int i = 0; i < exp_nparams(e); i++) {
		const param_desc *d = exp_param_desc(e, i);
		js_obj(out);
		js_kstr(out, "name", d->name);
		js_kstr(out, "type", type_name(d->type));
		js_key(out, "default");
		param_value_json(d, d->def, out);
		if (d->type == PT_INT || d->type == PT_FLOAT || d->type == PT_INT_OR_INF) {
			js_knum(out, "min", d->min);
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
		if (d->patch != P_NONE)
			js_kstr(out, "patch", patch_get(d->patch)->name);
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
							param_value_json(exp_param_desc(e, idx), p[idx], out);
						}
					}
				}
				line += n + (nl ? 1 : 0);
			}
		}
		js_obj_end(out);
		/* the row's kernel: its variant's, or the preset a `kernel`
		 * parameter of the row names (an experiment's own switch) */
		const char *kern = exp_kernel(e, !strcmp(r->variant, "before") ? VAR_BEFORE
						 : !strcmp(r->variant, "after") ? VAR_AFTER : VAR_BASE);
		int ki = param_index(e, "kernel");
		if (ki >= 0 && exp_param_desc(e, ki)->type == PT_ENUM && r->params &&
		    strstr(r->params, "kernel=") && strcmp(r->variant, "before") != 0 &&
		    exp_parse_params(e, r->params, p, err, sizeof err) == 0)
			kern = exp_param_desc(e, ki)->values[(int)p[ki]];
		js_kstr(out, "kernel", kern);
		js_kstr(out, "metric", r->metric);
		js_knum(out, "value", r->value);
		js_kstr(out, "source", r->source);
		js_knum(out, "tolerance", r->tolerance);
		if (r->noisy)
			js_kbool(out, "noisy", 1);
		js_kbool(out, "fit", r->fit);
		if (r->runs > 0) {
			js_knum(out, "sd", r->sd);
			js_kint(out, "runs", r->runs);
		}
		js_obj_end(out);
	}
	js_arr_end(out);
	if (e->npublished_separate)
		js_kint(out, "published_separate", e->npublished_separate);
	js_obj_end(out);
}
