/*
 * cli.c - the headless CLI of ../shared/spec/lab-cli.md, in the engine.
 *
 * Why in C: the native binary (main.c) and the Node wrapper over the WASM
 * build (cli/lab.mjs) both call lab_cli(), so the two print the same bytes
 * for the same arguments (wall_ms, host time, is the only field that may
 * differ). Arguments are validated completely before anything runs.
 *
 * --jobs: the runs of `--seeds` and `fidelity` are a plan of independent
 * units (an experiment, a variant, settings, a seed). A host that runs them
 * on several workers asks for the plan (--x-plan), has each worker run
 * units (--x-units LO-HI: their results as exact lines) and hands every
 * result back (--x-results TEXT) to one call, which formats them as a
 * serial run would: the same bytes whatever ran where.
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

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

#define STEP_BUDGET (1u << 20)
/* `--jobs N` at most: more workers than this buys nothing on any laptop and
 * each holds a run's memory. */
#define JOBS_MAX 256
/* `--seeds` without --long may ask for at most this many times the work of
 * the published setup's one run, by the experiment's own estimate
 * (lab_estimate): a published run takes 0.1-1.7 s of WASM (issue 36), so a
 * few minutes on one core at most. */
#define SEEDS_WORK_BOUND 200

static const char usage[] =
	"usage: lab list [--json]\n"
	"       lab run EXPERIMENT [--variant before|after|both] [--set KEY=VALUE]... [--seed N] [--seeds N [--long]] [--jobs N] [--json]\n"
	"       lab run sandbox --script FILE [--variant ...] [--set KEY=VALUE]... [--json]\n"
	"       lab fidelity [--experiment NAME] [--jobs N] [--json | --markdown]\n"
	"each option and each --set key at most once; -- ends the options\n";

static double wall_ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Progress for the host's terminal line: runs done of total, and how far
 * the current one is (lab_progress). The host draws it or not (only on a
 * terminal); the engine only reports. Under WASM, Module.labProgress. */
#ifdef __EMSCRIPTEN__
EM_JS(void, host_progress, (int done, int total, double frac), {
	if (Module['labProgress'])
		Module['labProgress'](done, total, frac);
});
#else
static void (*progress_hook)(int done, int total, double frac);

void lab_cli_set_progress(void (*fn)(int done, int total, double frac))
{
	progress_hook = fn;
}

static void host_progress(int done, int total, double frac)
{
	if (progress_hook)
		progress_hook(done, total, frac);
}
#endif

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

/* Run an opened run to the end, reporting progress as run `done` of
 * `total` (total 0: no report). Returns 0 or a LAB_E* code. */
static int run_to_end(lab_run *r, double *wall_ms, int done_before, int total)
{
	double t0 = wall_ms_now();
	int done = 0, rc = 0;
	while (!done && rc == 0) {
		rc = lab_step(r, STEP_BUDGET, &done);
		if (total > 0 && !done && rc == 0)
			host_progress(done_before, total, lab_progress(r));
	}
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


/* ------------------------------------------------------------- options */

/* Every option of every command, once. Each is given at most once, and
 * so is each --set key (lab-cli.md): a second one is refused, never taken
 * silently. `--` ends the options; `--opt=VALUE` is `--opt VALUE`, as
 * getopt_long reads it. The --x- options are the hosts' protocol for
 * --jobs (see the top of this file), not a user's. */
enum {
	O_JSON, O_MARKDOWN, O_LONG, O_VARIANT, O_SEED, O_SEEDS, O_JOBS, O_EXPERIMENT,
	O_SET, O_SCRIPT, O_SCRIPT_TEXT, O_X_PLAN, O_X_UNITS, O_X_RESULTS, O_COUNT
};

static const struct {
	const char *flag;
	int takes_value;
} optdef[O_COUNT] = {
	[O_JSON] = {"--json", 0},
	[O_MARKDOWN] = {"--markdown", 0},
	[O_LONG] = {"--long", 0},
	[O_VARIANT] = {"--variant", 1},
	[O_SEED] = {"--seed", 1},
	[O_SEEDS] = {"--seeds", 1},
	[O_JOBS] = {"--jobs", 1},
	[O_EXPERIMENT] = {"--experiment", 1},
	[O_SET] = {"--set", 1},
	[O_SCRIPT] = {"--script", 1},
	[O_SCRIPT_TEXT] = {"--script-text", 1},
	[O_X_PLAN] = {"--x-plan", 0},
	[O_X_UNITS] = {"--x-units", 1},
	[O_X_RESULTS] = {"--x-results", 1},
};

#define OBIT(o) (1u << (o))
#define X_OPTS (OBIT(O_X_PLAN) | OBIT(O_X_UNITS) | OBIT(O_X_RESULTS))

typedef struct cli_opts {
	const char *pos;        /* the one positional argument (run's EXPERIMENT) */
	int on[O_COUNT];        /* given */
	const char *val[O_COUNT];
	strbuf params;          /* --set and --script-text, one KEY=VALUE a line */
	int jobs;               /* --jobs, 0: not given */
} cli_opts;

/* The line of `params` whose key is key[0..klen), or NULL. */
static const char *params_find(const char *params, const char *key, size_t klen)
{
	for (const char *l = params; l && *l;) {
		if (!strncmp(l, key, klen) && l[klen] == '=')
			return l;
		const char *nl = strchr(l, '\n');
		l = nl ? nl + 1 : NULL;
	}
	return NULL;
}

static int twice(strbuf *err, const char *what, const char *first, const char *second)
{
	sb_printf(err, "lab: %s given twice", what);
	if (first && second) {
		sb_puts(err, " (");
		sb_quote(err, first, 40);
		sb_puts(err, ", then ");
		sb_quote(err, second, 40);
		sb_puts(err, ")");
	}
	sb_puts(err, ": give it once\n");
	return 2;
}

/* A --set or --script-text setting: KEY=VALUE, its key not given before. */
static int add_setting(cli_opts *o, int k, const char *v, strbuf *err)
{
	if (k == O_SET && (!strchr(v, '=') || strchr(v, '\n') || v[0] == '='))
		return bad(err, "--set takes KEY=VALUE, not", v);
	const char *key = k == O_SET ? v : "script=";
	size_t klen = (size_t)(strchr(key, '=') - key);
	const char *prev = params_find(o->params.buf, key, klen);
	if (prev) {
		char what[200], k40[41];
		snprintf(k40, sizeof k40, "%.*s", (int)(klen < 40 ? klen : 40), key);
		strbuf q;
		sb_init(&q);
		sb_quote(&q, k40, 0);
		snprintf(what, sizeof what, "--set %s", q.buf ? q.buf : "key");
		sb_free(&q);
		/* the first setting as given, up to its line's end */
		size_t plen = strcspn(prev, "\n");
		char *first = lab_malloc(plen + 1);
		if (first) {
			memcpy(first, prev, plen);
			first[plen] = 0;
		}
		int rc = twice(err, what, first, k == O_SET ? v : "script=...");
		free(first);
		return rc;
	}
	if (k == O_SET) {
		sb_puts(&o->params, v);
	} else {
		/* the sandbox's script: one `script=` setting, lines as ';' */
		sb_puts(&o->params, "script=");
		for (; *v; v++)
			sb_putc(&o->params, *v == '\n' ? ';' : *v == '\r' ? ' ' : *v);
	}
	sb_putc(&o->params, '\n');
	return 0;
}

/* argv (after the command) into o; `allowed` is the command's options,
 * `npos` how many positional arguments it takes (0 or 1). */
static int parse_opts(const char *cmd, int argc, const char *const *argv, unsigned allowed,
		      int npos, cli_opts *o, strbuf *err)
{
	int dashdash = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!dashdash && !strcmp(a, "--")) {
			dashdash = 1;
			continue;
		}
		if (dashdash || a[0] != '-' || !a[1]) {
			if (npos < 1 || o->pos)
				return bad(err, "unexpected argument", a);
			o->pos = a;
			continue;
		}
		const char *eq = strchr(a, '='), *v = NULL;
		int k;
		for (k = 0; k < O_COUNT; k++) {
			size_t fl = strlen(optdef[k].flag);
			if (!strcmp(a, optdef[k].flag))
				break;
			if (optdef[k].takes_value && eq && (size_t)(eq - a) == fl &&
			    !strncmp(a, optdef[k].flag, fl)) {
				v = eq + 1;
				break;
			}
		}
		if (k == O_COUNT)
			return bad(err, "unknown option", a);
		if (!(allowed & OBIT(k))) {
			char msg[64];
			snprintf(msg, sizeof msg, "%s takes no option", cmd);
			return bad(err, msg, a);
		}
		if (optdef[k].takes_value && !v) {
			if (i + 1 >= argc)
				return bad(err, "missing value after", a);
			v = argv[++i];
		}
		if (k == O_SCRIPT) {
			if (params_find(o->params.buf, "script", 6))
				return twice(err, "--script", NULL, NULL);
			/* the hosts (main.c, cli/lab.mjs) read FILE and pass its
			 * text as --script-text: the engine has no file system */
			return bad(err, "--script FILE: this host cannot read files; pass the text "
				   "with --script-text", NULL);
		}
		if (k == O_SET || k == O_SCRIPT_TEXT) {
			int rc = add_setting(o, k, v, err);
			if (rc)
				return rc;
			continue;
		}
		if (o->on[k])
			return twice(err, optdef[k].flag, o->val[k], v);
		o->on[k] = 1;
		o->val[k] = v;
	}
	if (o->on[O_JOBS]) {
		const char *v = o->val[O_JOBS];
		char *end;
		long n = v[0] >= '0' && v[0] <= '9' ? strtol(v, &end, 10) : -1;
		if (n < 1 || n > JOBS_MAX || *end) {
			char msg[64];
			snprintf(msg, sizeof msg, "--jobs takes an integer in [1, %d], not", JOBS_MAX);
			return bad(err, msg, v);
		}
		o->jobs = (int)n;
	}
	return 0;
}

/* ---------------------------------------------------------------- plan */

/* One independent run of a plan. */
typedef struct unit {
	const lab_exp *e;
	const char *variant;
	const char *params;
	uint64_t seed;
	int var_off;            /* every source of variation off (fidelity's point rows) */
} unit;

typedef struct unit_res {
	int rc;
	run_sum s;
	double wall_ms;
	char errmsg[240];
} unit_res;

typedef struct cli_plan {
	unit *u;
	unit_res *r;
	unsigned char *have;    /* r[i] is known: run, or handed in by --x-results */
	int n, cap, oom;
} cli_plan;

static void plan_add(cli_plan *pl, const lab_exp *e, const char *variant, const char *params,
		     uint64_t seed, int var_off)
{
	if (pl->oom)
		return;
	if (pl->n == pl->cap) {
		int cap = pl->cap ? 2 * pl->cap : 64;
		unit *u = lab_realloc(pl->u, (size_t)cap * sizeof *u);
		if (u)
			pl->u = u;
		unit_res *r = lab_realloc(pl->r, (size_t)cap * sizeof *r);
		if (r)
			pl->r = r;
		unsigned char *h = lab_realloc(pl->have, (size_t)cap);
		if (h)
			pl->have = h;
		if (!u || !r || !h) {
			pl->oom = 1;
			return;
		}
		pl->cap = cap;
	}
	pl->u[pl->n] = (unit){e, variant, params, seed, var_off};
	memset(&pl->r[pl->n], 0, sizeof pl->r[pl->n]);
	pl->have[pl->n] = 0;
	pl->n++;
}

static void plan_free(cli_plan *pl)
{
	free(pl->u);
	free(pl->r);
	free(pl->have);
	memset(pl, 0, sizeof *pl);
}

/* Run unit i, as run `done` of `total` for the progress line. The error
 * texts are seeds_run's. */
static void unit_exec(cli_plan *pl, int i, int done, int total)
{
	const unit *u = &pl->u[i];
	unit_res *res = &pl->r[i];
	strbuf ps;
	sb_init(&ps);
	sb_puts(&ps, u->params ? u->params : "");
	if (u->var_off)
		sb_puts(&ps, "\nvariation=off");
	lab_run *r = NULL;
	char *msg = NULL;
	int rc = ps.oom ? LAB_ENOMEM
			: lab_open(u->e->name, u->variant, ps.buf ? ps.buf : "", (uint32_t)u->seed,
				   (uint32_t)(u->seed >> 32), &r, &msg);
	if (rc) {
		snprintf(res->errmsg, sizeof res->errmsg, "%s", msg ? msg : lab_strerror(rc));
	} else {
		rc = run_to_end(r, &res->wall_ms, done, total);
		if (rc)
			snprintf(res->errmsg, sizeof res->errmsg, "seed %llu: %s%s%s",
				 (unsigned long long)u->seed, lab_strerror(rc), r->errmsg[0] ? ": " : "",
				 r->errmsg);
		else
			run_sum_take(r, &res->s);
		lab_close(r);
	}
	res->rc = rc;
	lab_free(msg);
	sb_free(&ps);
}

/* A unit's result as one exact line: index, code, sim_ns, events, wall_ms
 * and each metric as a C99 hex float ('-' when unset), then '|' and the
 * error text. strtod reads back the very same doubles. */
static void unit_line(const cli_plan *pl, int i, strbuf *out)
{
	const unit_res *r = &pl->r[i];
	sb_printf(out, "%d %d %llu %llu %a", i, r->rc, (unsigned long long)r->s.sim_ns,
		  (unsigned long long)r->s.events, r->wall_ms);
	for (int m = 0; m < pl->u[i].e->nmetrics; m++) {
		if (r->s.m_set[m])
			sb_printf(out, " %a", r->s.m[m]);
		else
			sb_puts(out, " -");
	}
	sb_puts(out, " |");
	for (const char *c = r->errmsg; *c; c++)
		sb_putc(out, *c == '\n' ? ' ' : *c);
	sb_putc(out, '\n');
}

/* unit_line's lines back into the plan. Returns 0, or -1 for text that is
 * not this plan's. */
static int plan_take(cli_plan *pl, const char *text)
{
	const char *p = text;
	while (*p) {
		char *end;
		long i = strtol(p, &end, 10);
		if (end == p || i < 0 || i >= pl->n)
			return -1;
		unit_res *r = &pl->r[i];
		memset(r, 0, sizeof *r);
		p = end;
		long rc = strtol(p, &end, 10);
		if (end == p || rc > 0 || rc < -1000)
			return -1;
		r->rc = (int)rc;
		p = end;
		r->s.sim_ns = strtoull(p, &end, 10);
		if (end == p)
			return -1;
		p = end;
		r->s.events = strtoull(p, &end, 10);
		if (end == p)
			return -1;
		p = end;
		r->wall_ms = strtod(p, &end);
		if (end == p)
			return -1;
		p = end;
		for (int m = 0; m < pl->u[i].e->nmetrics; m++) {
			while (*p == ' ')
				p++;
			if (*p == '-' && (p[1] == ' ' || p[1] == '|')) {
				p++;
				continue;
			}
			r->s.m[m] = strtod(p, &end);
			if (end == p)
				return -1;
			r->s.m_set[m] = 1;
			p = end;
		}
		while (*p == ' ')
			p++;
		if (*p++ != '|')
			return -1;
		size_t n = strcspn(p, "\n");
		snprintf(r->errmsg, sizeof r->errmsg, "%.*s", (int)(n < sizeof r->errmsg ? n : sizeof r->errmsg - 1), p);
		p += n;
		if (*p == '\n')
			p++;
		pl->have[i] = 1;
	}
	return 0;
}

/*
 * Run what this call runs of the plan. Returns 1 when the call is a host's
 * (--x-plan, --x-units; its output written and *status set), 0 when the
 * caller formats the results. `stop_on_fail`: a serial run stops at its
 * first failure (the one it reports) instead of running the rest.
 */
static int plan_exec(cli_plan *pl, const cli_opts *o, int stop_on_fail, int *status, strbuf *out,
		     strbuf *err)
{
	*status = 0;
	if (pl->oom) {
		*status = bad(err, "out of memory", NULL);
		return 1;
	}
	if (o->on[O_X_PLAN]) {
		sb_printf(out, "units %d jobs %d parallel 1\n", pl->n, o->jobs);
		return 1;
	}
	int lo = 0, hi = pl->n;
	if (o->on[O_X_UNITS]) {
		char *end;
		const char *v = o->val[O_X_UNITS];
		lo = (int)strtol(v, &end, 10);
		hi = *end == '-' ? (int)strtol(end + 1, &end, 10) : -1;
		if (*end || lo < 0 || hi <= lo || hi > pl->n) {
			*status = bad(err, "--x-units takes LO-HI within the plan, not", v);
			return 1;
		}
		stop_on_fail = 0;
	}
	if (o->on[O_X_RESULTS] && plan_take(pl, o->val[O_X_RESULTS])) {
		*status = bad(err, "--x-results: not this plan's results", NULL);
		return 1;
	}
	int total = 0, done = 0;
	for (int i = lo; i < hi; i++)
		total += !pl->have[i];
	for (int i = lo; i < hi; i++) {
		if (!pl->have[i]) {
			unit_exec(pl, i, done, total);
			pl->have[i] = 1;
			host_progress(++done, total, 0);
		}
		if (stop_on_fail && pl->r[i].rc)
			break;
	}
	if (o->on[O_X_UNITS]) {
		for (int i = lo; i < hi; i++)
			unit_line(pl, i, out);
		return 1;
	}
	return 0;
}

/* Units u0 .. u0+n-1 (consecutive seeds of one setup) as seeds_run would
 * have returned them. */
static int seeds_from_units(const cli_plan *pl, int u0, int n, seeds_result *out)
{
	const lab_exp *e = pl->u[u0].e;
	int arc = seeds_alloc(e, n, out);
	if (arc)
		return arc;
	for (int k = 0; k < n; k++) {
		const unit_res *r = &pl->r[u0 + k];
		if (!pl->have[u0 + k])
			return LAB_ESTATE;
		if (r->rc) {
			snprintf(out->errmsg, sizeof out->errmsg, "%s", r->errmsg);
			return r->rc;
		}
		for (int m = 0; m < e->nmetrics; m++)
			if (r->s.m_set[m])
				out->val[m][out->nval[m]++] = r->s.m[m];
		out->sim_ns[k] = (double)r->s.sim_ns;
		out->events[k] = (double)r->s.events;
		out->wall_ms += r->wall_ms;
		out->n = k + 1;
	}
	return 0;
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
		     uint64_t seed, int nseeds, int json, const cli_opts *o, strbuf *out, strbuf *err)
{
	cli_plan pl = {0};
	for (int i = 0; i < nv; i++)
		for (int k = 0; k < nseeds; k++)
			plan_add(&pl, e, vnames[i], params, seed + (uint64_t)k, 0);
	int status = 0;
	if (plan_exec(&pl, o, 1, &status, out, err)) {
		plan_free(&pl);
		return status;
	}
	seeds_result res[2];
	memset(res, 0, sizeof res);
	for (int i = 0; i < nv && !status; i++) {
		int rc = seeds_from_units(&pl, i * nseeds, nseeds, &res[i]);
		if (rc) {
			sb_printf(err, "lab: %s run failed: %s\n", vnames[i],
				  res[i].errmsg[0] ? res[i].errmsg : lab_strerror(rc));
			status = 1;
		}
	}
	plan_free(&pl);
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

/* One line for --seeds beyond the bound: the runs and their work, by the
 * experiment's own estimate. Returns 0 if within it (or --long). */
static int seeds_bound(const lab_exp *e, const char *params, int nv, int nseeds, int lng,
		       strbuf *err)
{
	double work = 0, dwork = 0;
	char *msg = NULL;
	int rc = lab_estimate(e->name, params, &work, &dwork, &msg);
	lab_free(msg);
	if (lng || rc || !(dwork > 0) || !(work >= 0))
		return 0;
	double runs = (double)nv * nseeds, times = runs * work / dwork;
	if (times <= SEEDS_WORK_BOUND)
		return 0;
	strbuf w, t;
	sb_init(&w);
	sb_init(&t);
	short_num(&w, work);
	short_num(&t, times);
	sb_printf(err,
		  "lab: --seeds %d: %.0f runs of %s %s each, by the work estimate %s times the "
		  "published setup's one run (at most %d without --long); add --long to run them\n",
		  nseeds, runs, w.buf ? w.buf : "?", e->work_unit ? e->work_unit : "units of work",
		  t.buf ? t.buf : "?", SEEDS_WORK_BOUND);
	sb_free(&w);
	sb_free(&t);
	return 2;
}

static int cmd_run(int argc, const char *const *argv, strbuf *out, strbuf *err)
{
	cli_opts o;
	memset(&o, 0, sizeof o);
	sb_init(&o.params);
	uint64_t seed = 1;
	int nseeds = 0;
	int status = parse_opts("run", argc, argv,
				OBIT(O_JSON) | OBIT(O_LONG) | OBIT(O_VARIANT) | OBIT(O_SEED) |
					OBIT(O_SEEDS) | OBIT(O_JOBS) | OBIT(O_SET) | OBIT(O_SCRIPT) |
					OBIT(O_SCRIPT_TEXT) | X_OPTS,
				1, &o, err);
	if (status)
		goto out;
	const char *name = o.pos, *variant = o.val[O_VARIANT];
	const char *params = o.params.buf ? o.params.buf : "";
	int json = o.on[O_JSON];
	if (o.on[O_SEEDS]) {
		const char *v = o.val[O_SEEDS];
		char *end;
		long k = v[0] >= '0' && v[0] <= '9' ? strtol(v, &end, 10) : -1;
		if (k < 1 || k > SEEDS_MAX || *end) {
			status = bad(err, "--seeds takes an integer in [1, 1000], not", v);
			goto out;
		}
		nseeds = (int)k;
	}
	if (o.on[O_SEED]) {
		const char *v = o.val[O_SEED];
		char *end;
		if (!(v[0] >= '0' && v[0] <= '9')) {
			status = bad(err, "--seed takes an integer in [0, 2^53), not", v);
			goto out;
		}
		unsigned long long s = strtoull(v, &end, 10);
		if (*end || s > 9007199254740991ull) {
			status = bad(err, "--seed takes an integer in [0, 2^53), not", v);
			goto out;
		}
		seed = s;
	}
	if (o.on[O_LONG] && !nseeds) {
		status = bad(err, "--long applies to --seeds N", NULL);
		goto out;
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
	/* the variants named are the experiment's own */
	const char *vnames[2];
	int nv = 0;
	if (!e->has_variants) {
		if (variant && strcmp(variant, "base")) {
			char msg[160];
			snprintf(msg, sizeof msg,
				 "experiment '%s' has one variant, base (no patch to toggle), not", name);
			status = bad(err, msg, variant);
			goto out;
		}
		vnames[nv++] = "base";
	} else if (!variant || !strcmp(variant, "both")) {
		vnames[nv++] = "before";
		vnames[nv++] = "after";
	} else if (!strcmp(variant, "before") || !strcmp(variant, "after")) {
		vnames[nv++] = variant;
	} else {
		char msg[160];
		snprintf(msg, sizeof msg, "experiment '%s' has variants before, after (or both), not",
			 name);
		status = bad(err, msg, variant);
		goto out;
	}

	/* A worker's call (--x-units) or the last one (--x-results) of a plan
	 * that --x-plan validated: each unit opens its own run (opening a run
	 * can cost as much as a small run: qgroup-drop's 0.27 s). */
	if (nseeds && (o.on[O_X_UNITS] || o.on[O_X_RESULTS])) {
		status = run_seeds(e, vnames, nv, params, seed, nseeds, json, &o, out, err);
		goto out;
	}
	/* Open every run first: all validation happens before anything runs. */
	lab_run *runs[2] = {NULL, NULL};
	for (int i = 0; i < nv; i++) {
		char *msg = NULL;
		int rc = lab_open(name, vnames[i], params, (uint32_t)seed, (uint32_t)(seed >> 32),
				  &runs[i], &msg);
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
		status = seeds_bound(e, params, nv, nseeds, o.on[O_LONG], err);
		if (!status)
			status = run_seeds(e, vnames, nv, params, seed, nseeds, json, &o, out, err);
		goto out;
	}
	if (o.on[O_X_PLAN] || o.on[O_X_UNITS] || o.on[O_X_RESULTS]) {
		/* one run per variant, in this call: nothing to hand out */
		for (int i = 0; i < nv; i++)
			lab_close(runs[i]);
		if (o.on[O_X_PLAN])
			sb_printf(out, "units %d jobs %d parallel 0\n", nv, o.jobs);
		else
			status = bad(err, "--x-units and --x-results apply to --seeds and fidelity", NULL);
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
		int rc = run_to_end(runs[i], &wall[i], i, nv);
		if (rc) {
			sb_printf(err, "lab: %s run failed: %s%s%s\n", vnames[i], lab_strerror(rc),
				  runs[i]->errmsg[0] ? ": " : "", runs[i]->errmsg);
			status = 1;
			break;
		}
		run_sum_take(runs[i], &sum[i]);
		host_progress(i + 1, nv, 0);
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
	sb_free(&o.params);
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

/* The runs behind the published rows, each setup run once: a point row's
 * one run of the deterministic model (seed 1, every source of variation
 * off), a noisy row's FIDELITY_SEEDS seeds with the sources on. Each is
 * units u0 .. u0+nu-1 of the plan. */
typedef struct fid_cache {
	const lab_exp *e;
	const char *variant;
	const char *params;
	int noisy;
	int u0, nu;
	run_sum s;
	seeds_result seeds;
	int rc;
} fid_cache;

static fid_cache *fid_find(fid_cache *c, int *nc, const lab_exp *e, const published_row *row,
			   cli_plan *pl)
{
	for (int i = 0; i < *nc; i++) {
		if (c[i].e == e && !strcmp(c[i].variant, row->variant) && c[i].noisy == row->noisy &&
		    !strcmp(c[i].params ? c[i].params : "", row->params ? row->params : ""))
			return &c[i];
	}
	if (!pl)
		return NULL;
	fid_cache *n = &c[(*nc)++];
	n->e = e;
	n->variant = row->variant;
	n->params = row->params;
	n->noisy = row->noisy;
	n->u0 = pl->n;
	n->nu = row->noisy ? FIDELITY_SEEDS : 1;
	for (int k = 0; k < n->nu; k++)
		plan_add(pl, e, row->variant, row->params ? row->params : "", 1 + (uint64_t)k,
			 !row->noisy);
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

static int cmd_fidelity(const char *only, int json, int md, const cli_opts *o, strbuf *out,
			strbuf *err)
{
	int total = 0;
	for (int i = 0; i < exp_count(); i++)
		total += exp_get(i)->npublished;
	if (only && !exp_find(only))
		return bad(err, "no such experiment (see: lab list)", only);
	fid_cache *cache = lab_calloc((size_t)total + 1, sizeof *cache);
	if (!cache)
		return 1;
	int nc = 0, status = 0, any_noisy = 0;
	/* every run first (the plan: in parallel when the host has workers),
	 * then the rows */
	cli_plan pl = {0};
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		for (int k = 0; (!only || !strcmp(only, e->name)) && k < e->npublished; k++)
			fid_find(cache, &nc, e, &e->published[k], &pl);
	}
	if (plan_exec(&pl, o, 0, &status, out, err)) {
		plan_free(&pl);
		free(cache);
		return status;
	}
	for (int i = 0; i < nc; i++) {
		fid_cache *fc = &cache[i];
		if (fc->noisy) {
			fc->rc = seeds_from_units(&pl, fc->u0, fc->nu, &fc->seeds);
		} else {
			fc->rc = pl.r[fc->u0].rc;
			fc->s = pl.r[fc->u0].s;
		}
	}
	plan_free(&pl);
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
			fid_cache *fc = fid_find(cache, &nc, e, row, NULL);
			int rc = fc->rc;
			const run_sum *r = &fc->s;
			double simv = NAN;
			spread sp = {0};
			if (rc == 0 && row->noisy) {
				for (int m = 0; m < e->nmetrics; m++)
					if (!strcmp(e->metrics[m].name, row->metric))
						seeds_spread(&fc->seeds, m, &sp);
				simv = sp.n ? sp.p50 : NAN;
			} else if (rc == 0) {
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
	for (int i = 0; i < nc; i++)
		seeds_free(&cache[i].seeds);
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
		cli_opts op;
		memset(&op, 0, sizeof op);
		sb_init(&op.params);
		status = parse_opts("list", argc - 2, argv + 2, OBIT(O_JSON), 0, &op, &e);
		sb_free(&op.params);
		if (status == 0)
			status = cmd_list(op.on[O_JSON], &o);
	} else if (!strcmp(argv[1], "run")) {
		status = cmd_run(argc - 2, argv + 2, &o, &e);
	} else if (!strcmp(argv[1], "fidelity")) {
		cli_opts op;
		memset(&op, 0, sizeof op);
		sb_init(&op.params);
		status = parse_opts("fidelity", argc - 2, argv + 2,
				    OBIT(O_JSON) | OBIT(O_MARKDOWN) | OBIT(O_EXPERIMENT) | OBIT(O_JOBS) |
					    X_OPTS,
				    0, &op, &e);
		if (status == 0 && op.on[O_JSON] && op.on[O_MARKDOWN])
			status = bad(&e, "fidelity prints --json or --markdown, not both", NULL);
		if (status == 0)
			status = cmd_fidelity(op.val[O_EXPERIMENT], op.on[O_JSON], op.on[O_MARKDOWN], &op,
					      &o, &e);
		sb_free(&op.params);
	} else {
		status = bad(&e, "unknown command (list, run, fidelity)", argv[1]);
	}
	if (o.oom || e.oom)
		status = 1;
	*out = sb_take(&o);
	*err = sb_take(&e);
	return status;
}
