/*
 * lab.c - the public API of engine/include/lab.h over the registry (exp.h)
 * and the event core (sim.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "lab.h"
#include "labmem.h"
#include "variation.h"

const char *lab_strerror(int code)
{
	switch (code) {
#define LAB_ERROR_CASE(name, value, text) case name: return #name ": " text;
	LAB_ERRORS(LAB_ERROR_CASE)
#undef LAB_ERROR_CASE
	}
	return "LAB_E?: unknown error code";
}

void lab_free(void *p)
{
	free(p);
}

static int set_err(char **errmsg, int code, const char *msg)
{
	if (errmsg)
		*errmsg = lab_strdup(msg);
	return code;
}

/* A message that echoes the caller's text, quoted (strbuf.h: sb_quote). */
static int set_err_quoted(char **errmsg, int code, const char *pre, const char *arg,
			  const char *post)
{
	strbuf m;
	sb_init(&m);
	sb_puts(&m, pre);
	sb_quote(&m, arg, 60);
	sb_puts(&m, post);
	if (errmsg)
		*errmsg = m.oom ? NULL : sb_take(&m);
	sb_free(&m);
	return code;
}

/* The experiment of that name, or LAB_ENOENT with the name quoted. */
static int find_exp(const char *experiment, const lab_exp **e, char **errmsg)
{
	*e = exp_find(experiment);
	if (*e)
		return 0;
	return set_err_quoted(errmsg, LAB_ENOENT, "no experiment ", experiment, " (see: lab list)");
}

int lab_list_json(char **out)
{
	if (!out)
		return LAB_EINVAL;
	strbuf sb;
	sb_init(&sb);
	js_obj(&sb);
	js_key(&sb, "experiments");
	js_arr(&sb);
	for (int i = 0; i < exp_count(); i++)
		exp_describe_json(exp_get(i), &sb);
	js_arr_end(&sb);
	js_key(&sb, "variation");
	var_table_json(&sb);
	/* every patch of patches.def, and the kernels as lists of them */
	js_key(&sb, "patches");
	js_arr(&sb);
	for (int id = 1; id <= P_COUNT; id++)
		exp_patch_json(patch_get(id), &sb);
	js_arr_end(&sb);
	js_key(&sb, "kernels");
	js_arr(&sb);
	for (int i = 0; i < patch_kernel_count(); i++) {
		const patch_kernel_info *k = patch_kernel_get(i);
		patchset ps;
		patch_kernel(k->name, &ps);
		js_obj(&sb);
		js_kstr(&sb, "name", k->name);
		js_kstr(&sb, "help", k->help);
		js_key(&sb, "patches");
		js_arr(&sb);
		for (int id = 1; id <= P_COUNT; id++)
			if (patch_on(&ps, id))
				js_str(&sb, patch_get(id)->name);
		js_arr_end(&sb);
		js_obj_end(&sb);
	}
	js_arr_end(&sb);
	js_kstr(&sb, "default_kernel", PATCH_DEFAULT_KERNEL);
	/* the error codes of lab.h: {"LAB_EINVAL": -1, ...} */
	js_key(&sb, "errors");
	js_obj(&sb);
#define LAB_ERROR_JSON(name, value, text) js_kint(&sb, #name, value);
	LAB_ERRORS(LAB_ERROR_JSON)
#undef LAB_ERROR_JSON
	js_obj_end(&sb);
	js_obj_end(&sb);
	*out = sb_take(&sb);
	return *out ? 0 : LAB_ENOMEM;
}

/* A failed allocation during this run's call (labmem.h) fails the run:
 * whatever the code that got the NULL did, the result can no longer be
 * trusted. */
static int oom_check(lab_run *r, uint64_t oom_before)
{
	if (lab_oom_events == oom_before)
		return 0;
	snprintf(r->errmsg, sizeof r->errmsg,
		 "the simulation needs more memory than the engine may use; "
		 "try a smaller setting");
	return r->failed = LAB_ENOMEM;
}

/* A run's `variation=` setting is not an experiment parameter: every
 * experiment takes it (variation.h). Copy the other settings to *rest and
 * parse the last `variation=` line into *mask (the defaults without one). */
static int split_variation(const char *params, strbuf *rest, var_mask *mask, char *err,
			   size_t errlen, char **script)
{
	static const char key[] = "variation=";
	static const char skey[] = "script=";
	*mask = var_default_mask();
	for (const char *line = params ? params : ""; *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		if (script && n >= sizeof skey - 1 && !strncmp(line, skey, sizeof skey - 1)) {
			/* a text input (lab_exp.takes_script): the last one wins */
			free(*script);
			*script = lab_malloc(n - (sizeof skey - 1) + 1);
			if (!*script) {
				snprintf(err, errlen, "out of memory");
				return LAB_ENOMEM;
			}
			memcpy(*script, line + sizeof skey - 1, n - (sizeof skey - 1));
			(*script)[n - (sizeof skey - 1)] = 0;
		} else if (n >= sizeof key - 1 && !strncmp(line, key, sizeof key - 1)) {
			char v[256];
			size_t vn = n - (sizeof key - 1);
			if (vn >= sizeof v) {
				snprintf(err, errlen, "setting too long");
				return LAB_EINVAL;
			}
			memcpy(v, line + sizeof key - 1, vn);
			v[vn] = 0;
			int rc = var_parse(v, mask, err, errlen);
			if (rc)
				return rc;
		} else {
			for (size_t i = 0; i < n; i++)
				sb_putc(rest, line[i]);
			sb_putc(rest, '\n');
		}
		line += n + (nl ? 1 : 0);
	}
	if (rest->oom) {
		snprintf(err, errlen, "out of memory");
		return LAB_ENOMEM;
	}
	return 0;
}

int lab_open(const char *experiment, const char *variant, const char *params,
	     uint32_t seed_lo, uint32_t seed_hi, lab_run **out, char **errmsg)
{
	return lab_open_patched(experiment, variant, params,
				((uint64_t)seed_hi << 32) | seed_lo, NULL, out, errmsg);
}

int lab_open_patched(const char *experiment, const char *variant, const char *params,
		     uint64_t seed, const patchset *patches, lab_run **out, char **errmsg)
{
	char err[200];
	if (errmsg)
		*errmsg = NULL;
	if (!experiment || !variant || !out)
		return set_err(errmsg, LAB_EINVAL, "missing argument");
	*out = NULL;
	const lab_exp *e;
	int rc = find_exp(experiment, &e, errmsg);
	if (rc)
		return rc;
	int var;
	if (!strcmp(variant, "before"))
		var = VAR_BEFORE;
	else if (!strcmp(variant, "after"))
		var = VAR_AFTER;
	else if (!strcmp(variant, "base"))
		var = VAR_BASE;
	else
		return set_err_quoted(errmsg, LAB_EINVAL, "variant must be before, after or base, not ",
				      variant, "");
	if (e->has_variants ? var == VAR_BASE : var != VAR_BASE) {
		snprintf(err, sizeof err, e->has_variants
			 ? "experiment '%s' has variants before and after"
			 : "experiment '%s' has no patch to toggle: its one variant is base",
			 e->name);
		return set_err(errmsg, LAB_EINVAL, err);
	}
	lab_reserve_arm();
	uint64_t oom_before = lab_oom_events;
	lab_run *r = lab_calloc(1, sizeof *r);
	if (!r)
		return set_err(errmsg, LAB_ENOMEM, "out of memory");
	r->exp = e;
	r->variant = var;
	r->seed = seed;
	strbuf rest;
	var_mask vmask;
	sb_init(&rest);
	rc = split_variation(params, &rest, &vmask, err, sizeof err,
			     e->takes_script ? &r->script : NULL);
	if (!rc)
		rc = exp_parse_params(e, rest.buf ? rest.buf : "", r->p, err, sizeof err);
	sb_free(&rest);
	if (rc) {
		free(r->script);
		free(r);
		return set_err(errmsg, rc, err);
	}
	if (e->validate && (rc = e->validate(r)) != 0) {
		set_err(errmsg, rc, r->errmsg);
		free(r->script);
		free(r);
		return rc;
	}
	if (patches)
		r->patches = *patches;
	else
		exp_run_patches(e, var, r->p, &r->patches);
	r->sim = sim_create(r->seed, 0);
	if (!r->sim || var_attach_build(r->sim, r->seed, vmask, r->patches.bits)) {
		sim_destroy(r->sim);
		free(r->script);
		free(r);
		return set_err(errmsg, LAB_ENOMEM, "out of memory");
	}
	rc = e->setup(r);
	if (!rc)
		rc = oom_check(r, oom_before);
	if (rc) {
		if (!r->errmsg[0])
			snprintf(r->errmsg, sizeof r->errmsg, "%s", lab_strerror(rc));
		set_err(errmsg, rc, r->errmsg);
		lab_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

int lab_estimate(const char *experiment, const char *params, double *work,
		 double *default_work, char **errmsg)
{
	char err[200];
	if (errmsg)
		*errmsg = NULL;
	if (!experiment || !work || !default_work)
		return set_err(errmsg, LAB_EINVAL, "missing argument");
	const lab_exp *e;
	int rc = find_exp(experiment, &e, errmsg);
	if (rc)
		return rc;
	if (!e->estimate)
		return set_err(errmsg, LAB_ENOTSUP, "this experiment has no work estimate");
	/* a run with parameters and nothing else: what estimate() reads */
	struct lab_run r;
	memset(&r, 0, sizeof r);
	r.exp = e;
	strbuf rest;
	var_mask vmask;
	sb_init(&rest);
	rc = split_variation(params, &rest, &vmask, err, sizeof err,
			     e->takes_script ? &r.script : NULL);
	if (!rc)
		rc = exp_parse_params(e, NULL, r.p, err, sizeof err);
	if (!rc) {
		/* the defaults' work: without the text input either */
		char *script = r.script;
		r.script = NULL;
		*default_work = e->estimate(&r);
		r.script = script;
	}
	if (!rc)
		rc = exp_parse_params(e, rest.buf ? rest.buf : "", r.p, err, sizeof err);
	sb_free(&rest);
	if (rc) {
		free(r.script);
		return set_err(errmsg, rc, err);
	}
	if (e->validate && (rc = e->validate(&r)) != 0) {
		free(r.script);
		return set_err(errmsg, rc, r.errmsg);
	}
	*work = e->estimate(&r);
	free(r.script);
	return 0;
}

int lab_step(lab_run *r, uint32_t max_events, int *done)
{
	if (!r || !done)
		return LAB_EINVAL;
	*done = 0;
	if (r->failed)
		return r->failed;
	if (r->finished) {
		*done = 1;
		return 0;
	}
	lab_reserve_arm();
	uint64_t oom_before = lab_oom_events;
	int fin = sim_run(r->sim, max_events ? max_events : 1, SIMTIME_MAX);
	if (r->failed || oom_check(r, oom_before))
		return r->failed;
	if (fin) {
		int rc = r->exp->collect(r);
		if (!rc)
			rc = oom_check(r, oom_before);
		if (rc)
			return r->failed = rc;
		r->finished = 1;
		*done = 1;
	}
	return 0;
}

int lab_append(lab_run *r, const char *text, char **errmsg)
{
	char err[200] = "";
	if (errmsg)
		*errmsg = NULL;
	if (!r || !text)
		return set_err(errmsg, LAB_EINVAL, "missing argument");
	if (!r->exp->takes_script || !r->exp->append)
		return set_err(errmsg, LAB_ENOTSUP, "this experiment takes no script");
	if (r->failed || !r->finished)
		return set_err(errmsg, LAB_ESTATE, r->failed ? "the run failed" : "the run has not finished");
	/* the script as lab_open would have been given it: "old; new" */
	size_t a = r->script ? strlen(r->script) : 0, b = strlen(text);
	char *all = lab_malloc(a + b + 3);
	if (!all)
		return set_err(errmsg, LAB_ENOMEM, "out of memory");
	snprintf(all, a + b + 3, "%s%s%s", a ? r->script : "", a ? "; " : "", text);
	lab_reserve_arm();
	uint64_t oom_before = lab_oom_events;
	int rc = r->exp->append(r, all, err, sizeof err);
	if (!rc && lab_oom_events != oom_before)
		rc = LAB_ENOMEM;
	if (rc) {
		free(all);
		return set_err(errmsg, rc, err[0] ? err : lab_strerror(rc));
	}
	free(r->script);
	r->script = all;
	memset(r->m_set, 0, sizeof r->m_set);
	r->finished = 0;
	sim_resume(r->sim);
	return 0;
}

double lab_progress(const lab_run *r)
{
	if (!r)
		return 0;
	if (r->finished)
		return 1;
	if (!r->exp->progress)
		return 0;
	double p = r->exp->progress((lab_run *)r);
	return p < 0 ? 0 : p > 1 ? 1 : p;
}

double lab_sim_ns(const lab_run *r) { return r ? (double)sim_now(r->sim) : 0; }
double lab_events(const lab_run *r) { return r ? (double)sim_events(r->sim) : 0; }

int lab_result_json(lab_run *r, char **out)
{
	if (!r || !out)
		return LAB_EINVAL;
	if (!r->finished)
		return LAB_ESTATE;
	strbuf sb;
	sb_init(&sb);
	js_obj(&sb);
	js_key(&sb, "metrics");
	js_obj(&sb);
	for (int i = 0; i < r->exp->nmetrics; i++) {
		js_key(&sb, r->exp->metrics[i].name);
		if (r->m_set[i])
			js_num(&sb, r->m[i]);
		else
			js_null(&sb);
	}
	js_obj_end(&sb);
	js_kint(&sb, "sim_ns", (int64_t)sim_now(r->sim));
	js_kint(&sb, "events", (int64_t)sim_events(r->sim));
	js_key(&sb, "details");
	if (r->exp->details)
		r->exp->details(r, &sb);
	else
		js_raw(&sb, "{}");
	js_obj_end(&sb);
	*out = sb_take(&sb);
	return *out ? 0 : LAB_ENOMEM;
}

int lab_record(lab_run *r, double from_ns, uint32_t max_events)
{
	if (!r || !(from_ns >= 0) || from_ns > 1.8e19 || max_events == 0 ||
	    max_events > LAB_RECORD_MAX)
		return LAB_EINVAL;
	if (r->failed)
		return r->failed;
	if (r->finished)
		return LAB_ESTATE;
	return sim_record_start(r->sim, (simtime_t)from_ns, max_events);
}

/* A whole number in [lo, hi] from text. */
static int rec_num(const char *v, double lo, double hi, double *out)
{
	char *end = NULL;
	double x = strtod(v, &end);
	if (end == v || *end || !(x >= lo && x <= hi) || x != (double)(uint64_t)x)
		return LAB_EINVAL;
	*out = x;
	return 0;
}

int lab_record_opts(lab_run *r, const char *opts)
{
	if (!r || !opts || strlen(opts) > 4000)
		return LAB_EINVAL;
	double from = 0, nth = 0, max = LAB_RECORD_MAX;
	char op[32] = "", only[1024] = "", line[1100];
	const char *p = opts;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n >= sizeof line)
			return LAB_EINVAL;
		memcpy(line, p, n);
		line[n] = 0;
		p += n + (e ? 1 : 0);
		if (!line[0])
			continue;
		char *eq = strchr(line, '=');
		if (!eq)
			return LAB_EINVAL;
		*eq = 0;
		const char *k = line, *v = eq + 1;
		int rc = 0;
		if (!strcmp(k, "max_events"))
			rc = rec_num(v, 1, LAB_RECORD_MAX, &max);
		else if (!strcmp(k, "from_ns"))
			rc = rec_num(v, 0, 1.8e19, &from);
		else if (!strcmp(k, "nth"))
			rc = rec_num(v, 0, 4294967295.0, &nth);
		else if (!strcmp(k, "from_op") && strlen(v) < sizeof op && !strncmp(v, "op:", 3) && v[3])
			snprintf(op, sizeof op, "%s", v);
		else if (!strcmp(k, "only") && strlen(v) < sizeof only)
			snprintf(only, sizeof only, "%s", v);
		else
			rc = LAB_EINVAL;
		if (rc)
			return rc;
	}
	if (op[0] && from != 0)
		return LAB_EINVAL; /* one start: a time or an operation */
	if (r->failed)
		return r->failed;
	if (r->finished)
		return LAB_ESTATE;
	if (sim_record_state(r->sim))
		return LAB_ESTATE;
	int rc = sim_record_only(r->sim, only);
	if (rc)
		return rc;
	if (op[0])
		return sim_record_at_op(r->sim, op, (uint64_t)nth, (uint64_t)max);
	return sim_record_start(r->sim, (simtime_t)from, (uint64_t)max);
}

int lab_record_state(const lab_run *r)
{
	return r ? sim_record_state(r->sim) : 0;
}

int lab_trace_json(lab_run *r, double since, char **out)
{
	/* a sequence number: refuse what no uint64_t holds (NaN, inf, < 0,
	 * >= 2^64) rather than cast it (undefined behaviour) */
	if (!r || !out || !(since >= 0 && since < 18446744073709551616.0))
		return LAB_EINVAL;
	strbuf sb;
	sb_init(&sb);
	js_obj(&sb);
	js_key(&sb, "trace");
	sim_trace_json(r->sim, (uint64_t)since, &sb);
	js_key(&sb, "series");
	sim_series_json(r->sim, &sb);
	js_key(&sb, "counters");
	sim_counters_json(r->sim, &sb);
	js_knum(&sb, "sim_ns", (double)sim_now(r->sim));
	js_knum(&sb, "progress", lab_progress(r));
	js_obj_end(&sb);
	*out = sb_take(&sb);
	return *out ? 0 : LAB_ENOMEM;
}

int lab_snapshot_json(lab_run *r, const char *what, char **out)
{
	if (!r || !what || !out)
		return LAB_EINVAL;
	if (!r->exp->snapshot)
		return LAB_ENOTSUP;
	strbuf sb;
	sb_init(&sb);
	int rc = r->exp->snapshot(r, what, &sb);
	if (rc) {
		sb_free(&sb);
		return rc;
	}
	*out = sb_take(&sb);
	return *out ? 0 : LAB_ENOMEM;
}

int lab_check(lab_run *r)
{
	if (!r)
		return LAB_EINVAL;
	if (!r->exp->check)
		return 0;
	return r->exp->check(r);
}

void lab_close(lab_run *r)
{
	if (!r)
		return;
	if (r->exp->teardown)
		r->exp->teardown(r);
	sim_destroy(r->sim);
	free(r->script);
	free(r);
}
