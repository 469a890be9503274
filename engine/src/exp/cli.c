/*
 * cli.c - the headless CLI of ../shared/spec/lab-cli.md, in the engine.
 *
 * Why in C: the native binary (main.c) and the Node wrapper over the WASM
 * build (cli/lab.mjs) both call lab_cli(), so the two print the same bytes
 * for the same arguments (wall_ms, host time, is the only field that may
 * differ). Arguments are validated completely before anything runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exp.h"
#include "lab.h"
#include "labmem.h"
#include "seeds.h"
#include "variation.h"

#define STEP_BUDGET (1u << 20)

static const char usage[] =
	"usage: lab list [--json]\n"
	"       lab run EXPERIMENT [--variant before|after|both] [--set KEY=VALUE]... [--seed N] [--seeds N] [--json]\n"
	"       lab fidelity [--experiment NAME] [--json | --markdown]\n";

static double wall_ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Print a one-line error and return exit status 2. The argument is the
 * user's: quoted and escaped, so a newline or an escape sequence in it
 * can neither make a second line nor reach the terminal. */
static int bad(strbuf *err, const char *msg, const char *arg)
{
	sb_printf(err, "lab: %s", msg);
	if (arg) {
		sb_puts(err, ": ");
		sb_quote(err, arg, 60);
	}
	sb_putc(err, '\n');
	return 2;
}

/* Run an opened run to the end. Returns 0 or a LAB_E* code. */
static int run_to_end(lab_run *r, double *wall_ms)
{
	double t0 = wall_ms_now();
	int done = 0, rc = 0;
	while (!done && rc == 0)
		rc = lab_step(r, STEP_BUDGET, &done);
	*wall_ms = wall_ms_now() - t0;
	return rc;
}

/* What the output needs of a finished run: the run itself is closed
 * before the next one starts (cmd_run). */
typedef struct run_sum {
	double m[EXP_MAX_METRICS];
	unsigned char m_set[EXP_MAX_METRICS];
	uint64_t sim_ns, events;
} run_sum;

static void run_sum_take(const lab_run *r, run_sum *s)
{
	memcpy(s->m, r->m, sizeof s->m);
	memcpy(s->m_set, r->m_set, sizeof s->m_set);
	s->sim_ns = (uint64_t)sim_now(r->sim);
	s->events = (uint64_t)sim_events(r->sim);
}

static void metrics_json(const lab_exp *e, const run_sum *r, strbuf *o)
{
	js_obj(o);
	for (int i = 0; i < e->nmetrics; i++) {
		js_key(o, e->metrics[i].name);
		if (r->m_set[i])
			js_num(o, r->m[i]);
		else
			js_null(o);
	}
	js_obj_end(o);
}

/* ---------------------------------------------------------------- list */

static int cmd_list(int json, strbuf *out)
{
	if (json) {
		char *s = NULL;
		if (lab_list_json(&s))
			return 1;
		sb_puts(out, s);
		sb_putc(out, '\n');
		lab_free(s);
		return 0;
	}
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		sb_printf(out, "%-12s seed %-3s %s\n", e->name, e->seed, e->title);
		if (e->has_variants)
			sb_printf(out, "  variants: before (kernel %s) after (kernel %s)\n",
				  exp_kernel(e, VAR_BEFORE), exp_kernel(e, VAR_AFTER));
		else
			sb_printf(out, "  variants: base (kernel %s)\n", exp_kernel(e, VAR_BASE));
		for (int j = 0; j < e->npatches; j++) {
			const patch_info *pi = patch_get(e->patches[j]);
			sb_printf(out, "  patch %-5s %-12s %s%s%s\n", pi->series,
				  *pi->commit ? pi->commit : "(no commit)", pi->title,
				  pi->effect == PE_MODEL ? "" : "; changes ",
				  pi->effect == PE_NONE ? "nothing" : pi->effect == PE_NOT_YET ? "nothing yet" : "");
		}
		for (int j = 0; j < exp_nparams(e); j++) {
			const param_desc *d = exp_param_desc(e, j);
			strbuf v;
			sb_init(&v);
			if (d->type == PT_ENUM) {
				for (int k = 0; d->values[k]; k++)
					sb_printf(&v, "%s%s", k ? "|" : "", d->values[k]);
				sb_printf(&v, " (default %s)", d->values[(int)d->def]);
			} else if (d->type == PT_BOOL) {
				sb_printf(&v, "true|false (default %s)", d->def ? "true" : "false");
			} else {
				sb_puts(&v, "default ");
				sb_num(&v, d->def);
				sb_puts(&v, d->min_open ? ", range (" : ", range [");
				sb_num(&v, d->min);
				sb_puts(&v, ", ");
				sb_num(&v, d->max);
				sb_puts(&v, d->type == PT_INT_OR_INF ? "] or inf" : "]");
			}
			sb_printf(out, "  --set %s=...  %s%s%s; %s\n", d->name, d->unit ? d->unit : "",
				  d->unit ? ", " : "", v.buf ? v.buf : "", d->help ? d->help : "");
			sb_free(&v);
		}
		sb_puts(out, "  metrics:");
		for (int j = 0; j < e->nmetrics; j++)
			sb_printf(out, " %s", e->metrics[j].name);
		sb_puts(out, "\n");
	}
	sb_puts(out, "\nsources of run-to-run variation (every experiment; --set variation=on|off|NAME|-NAME,...):\n");
	for (int i = 0; var_desc_get(i); i++) {
		const var_desc *d = var_desc_get(i);
		sb_printf(out, "  %-16s %s; %s\n", d->name, d->on ? "on" : "off", d->varies);
	}
	return 0;
}

/* ----------------------------------------------------------------- run */

/* A number for a person: 4 significant digits, or whole from 1000 up. */
static void short_num(strbuf *sb, double v)
{
	if (fabs(v) >= 1000 && fabs(v) < 1e15)
		sb_printf(sb, "%.0f", v);
	else
		sb_printf(sb, "%.4g", v);
}

/* One table cell: the median and [p5, p95]. */
static void spread_cell(const spread *sp, strbuf *cell)
{
	if (sp->n <= 0) {
		sb_puts(cell, "-");
		return;
	}
	short_num(cell, sp->p50);
	sb_puts(cell, " [");
	short_num(cell, sp->p5);
	sb_puts(cell, ", ");
	short_num(cell, sp->p95);
	sb_puts(cell, "]");
}

static double median_of(const double *v, int n)
{
	spread sp;
	double *c = lab_malloc((size_t)n * sizeof *c);
	if (!c)
		return NAN;
	memcpy(c, v, (size_t)n * sizeof *c);
	spread_of(c, n, &sp);
	free(c);
	return sp.p50;
}

/* `run --seeds N`: each variant over seeds seed..seed+N-1; per metric the
 * median in `metrics` and the spread beside it (../shared/spec/lab-cli.md). */
static int run_seeds(const lab_exp *e, const char *const *vnames, int nv, const char *params,
		     uint64_t seed, int nseeds, int json, strbuf *out, strbuf *err)
{
	seeds_result res[2];
	memset(res, 0, sizeof res);
	int status = 0;
	for (int i = 0; i < nv && !status; i++) {
		int rc = seeds_run(e, vnames[i], params, seed, nseeds, &res[i]);
		if (rc) {
			sb_printf(err, "lab: %s run failed: %s\n", vnames[i],
				  res[i].errmsg[0] ? res[i].errmsg : lab_strerror(rc));
			status = 1;
		}
	}
	if (status)
		goto done;
	double p[EXP_MAX_PARAMS];
	char perr[200];
	lab_run *first = NULL;
	char *msg = NULL;
	/* the parameters as the runs read them (validated already) */
	if (lab_open(e->name, vnames[0], params, (uint32_t)seed, (uint32_t)(seed >> 32), &first,
		     &msg) == 0) {
		memcpy(p, first->p, sizeof p);
		lab_close(first);
	} else {
		exp_parse_params(e, "", p, perr, sizeof perr);
	}
	lab_free(msg);
	if (json) {
		js_obj(out);
		js_kstr(out, "experiment", e->name);
		js_kint(out, "seed", (int64_t)seed);
		js_kint(out, "seeds", nseeds);
		js_key(out, "params");
		exp_params_json(e, p, out);
		js_key(out, "runs");
		js_obj(out);
		for (int i = 0; i < nv; i++) {
			spread sp;
			js_key(out, vnames[i]);
			js_obj(out);
			js_key(out, "metrics");
			js_obj(out);
			for (int m = 0; m < e->nmetrics; m++) {
				seeds_spread(&res[i], m, &sp);
				js_key(out, e->metrics[m].name);
				if (sp.n)
					js_num(out, sp.p50);
				else
					js_null(out);
			}
			js_obj_end(out);
			js_key(out, "spread");
			js_obj(out);
			for (int m = 0; m < e->nmetrics; m++) {
				seeds_spread(&res[i], m, &sp);
				js_key(out, e->metrics[m].name);
				spread_json(&sp, out);
			}
			js_obj_end(out);
			js_knum(out, "sim_ns", median_of(res[i].sim_ns, res[i].n));
			js_knum(out, "events", median_of(res[i].events, res[i].n));
			js_knum(out, "wall_ms", floor(res[i].wall_ms * 10 + 0.5) / 10);
			js_obj_end(out);
		}
		js_obj_end(out);
		js_obj_end(out);
		sb_putc(out, '\n');
		goto done;
	}
	sb_printf(out, "%s (seed %s): %s\nseeds=%llu..%llu ", e->name, e->seed, e->title,
		  (unsigned long long)seed, (unsigned long long)(seed + (uint64_t)nseeds - 1));
	strbuf pj;
	sb_init(&pj);
	exp_params_json(e, p, &pj);
	sb_printf(out, "params=%s\n", pj.buf ? pj.buf : "{}");
	sb_free(&pj);
	sb_printf(out, "each cell: the median of %d seeds [5th, 95th percentile]\n\n", nseeds);
	sb_printf(out, "%-24s", "metric");
	for (int i = 0; i < nv; i++)
		sb_printf(out, " %32s", vnames[i]);
	if (nv == 2)
		sb_printf(out, " %14s", "after/before");
	sb_puts(out, "\n");
	for (int m = 0; m < e->nmetrics; m++) {
		spread sp[2];
		sb_printf(out, "%-24s", e->metrics[m].name);
		for (int i = 0; i < nv; i++) {
			strbuf cell;
			sb_init(&cell);
			seeds_spread(&res[i], m, &sp[i]);
			spread_cell(&sp[i], &cell);
			sb_printf(out, " %32s", cell.buf);
			sb_free(&cell);
		}
		if (nv == 2 && sp[0].n && sp[1].n && sp[0].p50 != 0)
			sb_printf(out, " %13.3fx", sp[1].p50 / sp[0].p50);
		sb_printf(out, "  %s\n", e->metrics[m].unit ? e->metrics[m].unit : "");
	}
	for (int i = 0; i < nv; i++)
		sb_printf(out, "%s: %d seeds, %.3f s simulated (median)\n", vnames[i], res[i].n,
			  median_of(res[i].sim_ns, res[i].n) / 1e9);
done:
	for (int i = 0; i < nv; i++)
		seeds_free(&res[i]);
	return status;
}

static int cmd_run(int argc, const char *const *argv, strbuf *out, strbuf *err)
{
	const char *name = NULL, *variant = NULL;
	uint64_t seed = 1;
	int json = 0, nseeds = 0;
	strbuf params;
	sb_init(&params);
	int status = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--script")) {
			/* the hosts (main.c, cli/lab.mjs) read FILE and pass its
			 * text as --script-text: the engine has no file system */
			status = bad(err, "--script FILE: this host cannot read files; pass the text "
				     "with --script-text", NULL);
			goto out;
		} else if (!strcmp(a, "--script-text")) {
			if (i + 1 >= argc) {
				status = bad(err, "missing value after", a);
				goto out;
			}
			/* the sandbox's script: one `script=` setting, lines as ';' */
			const char *v = argv[++i];
			sb_puts(&params, "script=");
			for (; *v; v++)
				sb_putc(&params, *v == '\n' ? ';' : *v == '\r' ? ' ' : *v);
			sb_putc(&params, '\n');
		} else if (!strcmp(a, "--variant") || !strcmp(a, "--set") || !strcmp(a, "--seed") ||
			   !strcmp(a, "--seeds")) {
			if (i + 1 >= argc) {
				status = bad(err, "missing value after", a);
				goto out;
			}
			const char *v = argv[++i];
			if (!strcmp(a, "--variant")) {
				if (strcmp(v, "before") && strcmp(v, "after") && strcmp(v, "both")) {
					status = bad(err, "--variant takes before, after or both, not", v);
					goto out;
				}
				variant = v;
			} else if (!strcmp(a, "--set")) {
				if (!strchr(v, '=') || strchr(v, '\n') || v[0] == '=') {
					status = bad(err, "--set takes KEY=VALUE, not", v);
					goto out;
				}
				sb_puts(&params, v);
				sb_putc(&params, '\n');
			} else if (!strcmp(a, "--seeds")) {
				char *end;
				long k = v[0] >= '0' && v[0] <= '9' ? strtol(v, &end, 10) : -1;
				if (k < 1 || k > SEEDS_MAX || *end) {
					status = bad(err, "--seeds takes an integer in [1, 1000], not", v);
					goto out;
				}
				nseeds = (int)k;
			} else {
				char *end;
				if (!(v[0] >= '0' && v[0] <= '9')) {
					status = bad(err, "--seed takes a non-negative integer, not", v);
					goto out;
				}
				unsigned long long s = strtoull(v, &end, 10);
				if (*end || s > 9007199254740991ull) {
					status = bad(err, "--seed takes an integer in [0, 2^53), not", v);
					goto out;
				}
				seed = s;
			}
		} else if (a[0] == '-') {
			status = bad(err, "unknown option", a);
			goto out;
		} else if (!name) {
			name = a;
		} else {
			status = bad(err, "unexpected argument", a);
			goto out;
		}
	}
	if (!name) {
		status = bad(err, "run needs an EXPERIMENT (see: lab list)", NULL);
		goto out;
	}
	const lab_exp *e = exp_find(name);
	if (!e) {
		status = bad(err, "no such experiment (see: lab list)", name);
		goto out;
	}
	const char *vnames[2];
	int nv = 0;
	if (!e->has_variants) {
		if (variant) {
			sb_printf(err, "lab: experiment '%s' has no patch to toggle; drop --variant\n", name);
			status = 2;
			goto out;
		}
		vnames[nv++] = "base";
	} else if (!variant || !strcmp(variant, "both")) {
		vnames[nv++] = "before";
		vnames[nv++] = "after";
	} else {
		vnames[nv++] = variant;
	}

	/* Open every run first: all validation happens before anything runs. */
	lab_run *runs[2] = {NULL, NULL};
	for (int i = 0; i < nv; i++) {
		char *msg = NULL;
		int rc = lab_open(name, vnames[i], params.buf ? params.buf : "",
				  (uint32_t)seed, (uint32_t)(seed >> 32), &runs[i], &msg);
		if (rc) {
			int usage_err = rc == LAB_EINVAL || rc == LAB_ERANGE || rc == LAB_ENOENT;
			sb_printf(err, "lab: %s\n", msg ? msg : lab_strerror(rc));
			lab_free(msg);
			status = usage_err ? 2 : 1;
			for (int j = 0; j < i; j++)
				lab_close(runs[j]);
			goto out;
		}
	}
	if (nseeds) {
		for (int i = 0; i < nv; i++)
			lab_close(runs[i]);
		status = run_seeds(e, vnames, nv, params.buf ? params.buf : "", seed, nseeds, json,
				   out, err);
		goto out;
	}
	/* Each run is closed once its figures are taken, before the next
	 * one runs: the next reuses its memory (a bonnie file system, its
	 * trees and pools: ~60 MB) instead of touching fresh pages, which
	 * cost ~5% of a WASM bonnie run, and the heap's peak is one run's. */
	double wall[2] = {0, 0};
	double p0[EXP_MAX_PARAMS];
	memcpy(p0, runs[0]->p, sizeof p0);
	run_sum sum[2];
	strbuf det[2]; /* a script experiment's details: what each command did */
	sb_init(&det[0]);
	sb_init(&det[1]);
	for (int i = 0; i < nv; i++) {
		int rc = run_to_end(runs[i], &wall[i]);
		if (rc) {
			sb_printf(err, "lab: %s run failed: %s%s%s\n", vnames[i], lab_strerror(rc),
				  runs[i]->errmsg[0] ? ": " : "", runs[i]->errmsg);
			status = 1;
			break;
		}
		run_sum_take(runs[i], &sum[i]);
		if (e->takes_script && e->details)
			e->details(runs[i], &det[i]);
		lab_close(runs[i]);
		runs[i] = NULL;
	}
	if (status == 0 && json) {
		js_obj(out);
		js_kstr(out, "experiment", name);
		js_kint(out, "seed", (int64_t)seed);
		js_key(out, "params");
		exp_params_json(e, p0, out);
		js_key(out, "runs");
		js_obj(out);
		for (int i = 0; i < nv; i++) {
			js_key(out, vnames[i]);
			js_obj(out);
			js_key(out, "metrics");
			metrics_json(e, &sum[i], out);
			js_kint(out, "sim_ns", (int64_t)sum[i].sim_ns);
			js_kint(out, "events", (int64_t)sum[i].events);
			js_knum(out, "wall_ms", floor(wall[i] * 10 + 0.5) / 10);
			if (det[i].buf) {
				js_key(out, "details");
				js_raw(out, det[i].buf);
			}
			js_obj_end(out);
		}
		js_obj_end(out);
		js_obj_end(out);
		sb_putc(out, '\n');
	} else if (status == 0) {
		sb_printf(out, "%s (seed %s): %s\nseed=%llu ", e->name, e->seed, e->title,
			  (unsigned long long)seed);
		strbuf pj;
		sb_init(&pj);
		exp_params_json(e, p0, &pj);
		sb_printf(out, "params=%s\n\n", pj.buf ? pj.buf : "{}");
		sb_free(&pj);
		sb_printf(out, "%-24s", "metric");
		for (int i = 0; i < nv; i++)
			sb_printf(out, " %16s", vnames[i]);
		if (nv == 2)
			sb_printf(out, " %14s", "after/before");
		sb_puts(out, "\n");
		for (int m = 0; m < e->nmetrics; m++) {
			sb_printf(out, "%-24s", e->metrics[m].name);
			for (int i = 0; i < nv; i++) {
				strbuf v;
				sb_init(&v);
				if (sum[i].m_set[m])
					sb_num(&v, sum[i].m[m]);
				else
					sb_puts(&v, "-");
				sb_printf(out, " %16s", v.buf);
				sb_free(&v);
			}
			if (nv == 2 && sum[0].m_set[m] && sum[1].m_set[m] && sum[0].m[m] != 0)
				sb_printf(out, " %13.3fx", sum[1].m[m] / sum[0].m[m]);
			sb_printf(out, "  %s\n", e->metrics[m].unit ? e->metrics[m].unit : "");
		}
		for (int i = 0; i < nv; i++)
			sb_printf(out, "%s: %llu events, %.3f s simulated\n", vnames[i],
				  (unsigned long long)sum[i].events, (double)sum[i].sim_ns / 1e9);
		if (e->takes_script)
			sb_puts(out, "(per command: --json, runs.VARIANT.details.commands)\n");
	}
	sb_free(&det[0]);
	sb_free(&det[1]);
	for (int i = 0; i < nv; i++)
		lab_close(runs[i]);
out:
	sb_free(&params);
	return status;
}

/* ------------------------------------------------------------ fidelity */

/* A Markdown table cell: '|' escaped, a newline a space (docs/fidelity.md
 * is written from these rows by scripts/docs.mjs). */
static void md_cell(strbuf *sb, const char *s)
{
	sb_puts(sb, " ");
	for (; *s; s++) {
		if (*s == '|')
			sb_puts(sb, "\\|");
		else
			sb_putc(sb, *s == '\n' ? ' ' : *s);
	}
	sb_puts(sb, " |");
}

/* The runs behind the published rows, each setup run once: a point row's
 * one run of the deterministic model (seed 1, every source of variation
 * off), a noisy row's FIDELITY_SEEDS seeds with the sources on. */
typedef struct fid_cache {
	const lab_exp *e;
	const char *variant;
	const char *params;
	int noisy;
	lab_run *run;
	seeds_result seeds;
	int rc;
} fid_cache;

static fid_cache *fid_run(fid_cache *c, int *nc, const lab_exp *e, const published_row *row)
{
	for (int i = 0; i < *nc; i++) {
		if (c[i].e == e && !strcmp(c[i].variant, row->variant) && c[i].noisy == row->noisy &&
		    !strcmp(c[i].params ? c[i].params : "", row->params ? row->params : ""))
			return &c[i];
	}
	fid_cache *n = &c[(*nc)++];
	n->e = e;
	n->variant = row->variant;
	n->params = row->params;
	n->noisy = row->noisy;
	n->run = NULL;
	strbuf ps;
	sb_init(&ps);
	sb_puts(&ps, row->params ? row->params : "");
	if (row->noisy) {
		n->rc = seeds_run(e, row->variant, ps.buf ? ps.buf : "", 1, FIDELITY_SEEDS, &n->seeds);
	} else {
		char *msg = NULL;
		sb_puts(&ps, "\nvariation=off");
		n->rc = ps.oom ? LAB_ENOMEM
			       : lab_open(e->name, row->variant, ps.buf, 1, 0, &n->run, &msg);
		lab_free(msg);
		if (n->rc == 0) {
			double w;
			n->rc = run_to_end(n->run, &w);
		}
	}
	sb_free(&ps);
	return n;
}

static void fid_md_row(strbuf *out, const char *exp, const published_row *row, const char *params,
		       const char *published, const char *simulated, double error, const char *range)
{
	char errtxt[32];
	snprintf(errtxt, sizeof errtxt, "%+.1f%%", error * 100);
	sb_puts(out, "|");
	md_cell(out, exp);
	md_cell(out, row->variant);
	md_cell(out, params);
	md_cell(out, row->metric);
	md_cell(out, published);
	md_cell(out, simulated);
	md_cell(out, errtxt);
	md_cell(out, row->fit ? "FIT" : "predicted");
	md_cell(out, range);
	md_cell(out, row->source);
	sb_putc(out, '\n');
}

static int cmd_fidelity(const char *only, int json, int md, strbuf *out, strbuf *err)
{
	int total = 0;
	for (int i = 0; i < exp_count(); i++)
		total += exp_get(i)->npublished;
	fid_cache *cache = lab_calloc((size_t)total + 1, sizeof *cache);
	if (!cache)
		return 1;
	int nc = 0, status = 0, any_noisy = 0;
	if (only && !exp_find(only)) {
		free(cache);
		return bad(err, "no such experiment (see: lab list)", only);
	}
	/* The params column is as wide as the widest row's: cut short, the fio
	 * rows of one block size would all read alike (no depth, no jobs). */
	int pw = (int)strlen("params");
	for (int i = 0; !json && i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		for (int k = 0; (!only || !strcmp(only, e->name)) && k < e->npublished; k++) {
			const char *ps = e->published[k].params;
			int n = ps ? (int)strlen(ps) : 0;
			if (n > pw)
				pw = n;
			any_noisy |= e->published[k].noisy;
		}
	}
	if (json)
		js_arr(out);
	else if (md)
		sb_puts(out, "| experiment | variant | params | metric | published | simulated | error | fit | "
			     "5-95% of 20 seeds | source |\n|---|---|---|---|---:|---:|---:|---|---|---|\n");
	else
		sb_printf(out, "%-12s %-8s %-*s %-20s %12s %12s %8s  %-9s  %s%s\n", "experiment", "variant",
			  pw, "params", "metric", "published", "simulated", "error", "fit",
			  any_noisy ? "5-95% of 20 seeds (noisy rows)   " : "", "source");
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		if (only && strcmp(only, e->name))
			continue;
		for (int k = 0; k < e->npublished; k++) {
			const published_row *row = &e->published[k];
			fid_cache *fc = fid_run(cache, &nc, e, row);
			int rc = fc->rc;
			lab_run *r = fc->run;
			double simv = NAN;
			spread sp = {0};
			if (rc == 0 && row->noisy) {
				for (int m = 0; m < e->nmetrics; m++)
					if (!strcmp(e->metrics[m].name, row->metric))
						seeds_spread(&fc->seeds, m, &sp);
				simv = sp.n ? sp.p50 : NAN;
			} else if (rc == 0 && r) {
				for (int m = 0; m < e->nmetrics; m++)
					if (!strcmp(e->metrics[m].name, row->metric) && r->m_set[m])
						simv = r->m[m];
			} else {
				sb_printf(err, "lab: fidelity run %s/%s failed: %s\n", e->name, row->variant,
					  lab_strerror(rc));
				status = 1;
			}
			double error = row->value != 0 ? simv / row->value - 1 : NAN;
			double p[EXP_MAX_PARAMS];
			char perr[160];
			if (json) {
				js_obj(out);
				js_kstr(out, "experiment", e->name);
				js_key(out, "params");
				if (exp_parse_params(e, row->params, p, perr, sizeof perr) == 0)
					exp_params_json(e, p, out);
				else
					js_raw(out, "{}");
				js_kstr(out, "variant", row->variant);
				js_kstr(out, "metric", row->metric);
				js_knum(out, "published", row->value);
				js_knum(out, "simulated", simv);
				js_knum(out, "error", error);
				js_knum(out, "tolerance", row->tolerance);
				if (row->noisy) {
					js_key(out, "range");
					js_arr(out);
					js_num(out, sp.n ? sp.p5 : NAN);
					js_num(out, sp.n ? sp.p95 : NAN);
					js_arr_end(out);
					js_kbool(out, "inside", sp.n && sp.p5 <= row->value &&
							       row->value <= sp.p95);
					js_kint(out, "seeds", sp.n);
				}
				js_kbool(out, "fit", row->fit);
				js_kstr(out, "source", row->source);
				js_obj_end(out);
			} else {
				strbuf a, b, ps;
				sb_init(&a);
				sb_init(&b);
				sb_init(&ps);
				for (const char *q = row->params ? row->params : ""; *q; q++)
					sb_putc(&ps, *q == '\n' ? ' ' : *q);
				sb_num(&a, row->value);
				sb_num(&b, simv);
				strbuf rg;
				sb_init(&rg);
				if (row->noisy && sp.n) {
					sb_puts(&rg, "[");
					short_num(&rg, sp.p5);
					sb_puts(&rg, ", ");
					short_num(&rg, sp.p95);
					sb_puts(&rg, sp.p5 <= row->value && row->value <= sp.p95 ? "] inside"
												: "] outside");
				}
				if (md)
					fid_md_row(out, e->name, row, ps.buf ? ps.buf : "", a.buf, b.buf, error,
						   rg.buf ? rg.buf : "");
				else
					sb_printf(out, "%-12s %-8s %-*s %-20s %12s %12s %+7.1f%%  %-9s  %-*s%s\n",
						  e->name, row->variant, pw, ps.buf ? ps.buf : "", row->metric, a.buf,
						  b.buf, error * 100, row->fit ? "FIT" : "predicted", any_noisy ? 34 : 0,
						  rg.buf ? rg.buf : "", row->source);
				sb_free(&rg);
				sb_free(&a);
				sb_free(&b);
				sb_free(&ps);
			}
		}
	}
	if (json) {
		js_arr_end(out);
		sb_putc(out, '\n');
	}
	for (int i = 0; i < nc; i++) {
		lab_close(cache[i].run);
		seeds_free(&cache[i].seeds);
	}
	free(cache);
	return status;
}

/* ---------------------------------------------------------------- main */

int lab_cli(int argc, const char *const *argv, char **out, char **err)
{
	strbuf o, e;
	sb_init(&o);
	sb_init(&e);
	int status;
	if (argc < 2) {
		status = bad(&e, "no command given (list, run, fidelity); see: lab --help", NULL);
	} else if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		sb_puts(&o, usage);
		status = 0;
	} else if (!strcmp(argv[1], "list")) {
		int json = 0;
		status = 0;
		for (int i = 2; i < argc && status == 0; i++) {
			if (!strcmp(argv[i], "--json"))
				json = 1;
			else
				status = bad(&e, "list takes only --json, not", argv[i]);
		}
		if (status == 0)
			status = cmd_list(json, &o);
	} else if (!strcmp(argv[1], "run")) {
		status = cmd_run(argc - 2, argv + 2, &o, &e);
	} else if (!strcmp(argv[1], "fidelity")) {
		int json = 0, md = 0;
		const char *only = NULL;
		status = 0;
		for (int i = 2; i < argc && status == 0; i++) {
			if (!strcmp(argv[i], "--json"))
				json = 1;
			else if (!strcmp(argv[i], "--markdown"))
				md = 1;
			else if (!strcmp(argv[i], "--experiment") && i + 1 < argc)
				only = argv[++i];
			else
				status = bad(&e, "fidelity takes --experiment NAME and --json or --markdown, not",
					     argv[i]);
		}
		if (status == 0 && json && md)
			status = bad(&e, "fidelity prints --json or --markdown, not both", NULL);
		if (status == 0)
			status = cmd_fidelity(only, json, md, &o, &e);
	} else {
		status = bad(&e, "unknown command (list, run, fidelity)", argv[1]);
	}
	if (o.oom || e.oom)
		status = 1;
	*out = sb_take(&o);
	*err = sb_take(&e);
	return status;
}
