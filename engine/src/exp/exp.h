/*
 * exp.h - the experiment registry: what an experiment declares (parameters,
 * metrics, variants, the kernels they run and the patches it exposes,
 * published rows) and the hooks the engine calls.
 *
 * Adding an experiment: write engine/src/exp/exp_NAME.c defining a
 * `const lab_exp exp_NAME`, and add one line to engine/src/exp/experiments.def.
 *
 * Patches (engine/src/kernel/patches.def). An experiment names the kernels
 * its variants run (`kernel`) and the patches it exposes (`patches`). The
 * registry derives the rest from that list: one PT_BOOL switch parameter
 * per exposed patch that changes the model (PE_MODEL) and has a param
 * name, after the experiment's own parameters, default 1 when the `after`
 * kernel has it; the run's patch bits (lab_run.patches = its variant's
 * kernel, with the switches applied to `after` or `base`; `before` runs its
 * kernel as it is); and what `list --json` says. Setup hands r->patches to
 * the file systems it mounts (fs_opts.patches).
 */
#ifndef EXP_H
#define EXP_H

#include <stddef.h>
#include <stdint.h>

#include "patches.h"
#include "sim.h"
#include "strbuf.h"

#define EXP_MAX_PARAMS 24
#define EXP_MAX_METRICS 48

typedef enum ptype {
	PT_INT,        /* integer in [min,max] */
	PT_FLOAT,      /* real in [min,max] (min exclusive if min_open) */
	PT_ENUM,       /* one of values[]; stored as its index */
	PT_INT_OR_INF, /* integer in [min,max], or "inf" (stored as INFINITY) */
	PT_BOOL,       /* 0/1, true/false */
} ptype;

typedef struct param_desc {
	const char *name;
	ptype type;
	double def;                /* default (enum: index) */
	double min, max;           /* range, finite (ints within +-2^53); unused
				    * for enum/bool */
	int min_open;              /* PT_FLOAT: min itself is not allowed */
	const char *const *values; /* PT_ENUM: NULL-terminated */
	const char *unit;          /* "MiB", "files", ... or NULL */
	const char *help;          /* one line for `list` and the UI */
	double multiple_of;        /* PT_INT: values must be multiples (0: any) */
	patch_id patch;            /* a patch switch (the registry makes them
				    * from lab_exp.patches): its patch */
} param_desc;

typedef struct metric_desc {
	const char *name;
	const char *unit; /* "s", "ms", "count", ... */
	const char *help;
} metric_desc;

/* A published figure the lab reproduces (fidelity table). */
typedef struct published_row {
	const char *variant;  /* "before" / "after" / "base" */
	const char *params;   /* "KEY=VALUE\n..." settings on top of defaults */
	const char *metric;
	double value;
	const char *source;   /* where it comes from, e.g. "seed 002, table row inf" */
	double tolerance;     /* accepted |simulated/published - 1|, asserted by
			       * the CLI tests: e.g. 0.25; 0 = must match exactly
			       * (counts); negative = reported only (a held-out
			       * point, or a row judged by a ratio test elsewhere) */
	int noisy;            /* 1: the figure is one run of a noisy quantity (a
			       * max latency, a race with writeback): `lab
			       * fidelity` judges it inside the 5-95% range of
			       * FIDELITY_SEEDS seeds with every source of
			       * variation at its default (seeds.h, variation.def);
			       * tolerance >= 0 asserts "inside", < 0 reports it.
			       * 0: compared with one run of the deterministic
			       * model (seed 1, every source of variation off). */
	int fit;              /* 1: a constant was fitted on this row (costs.h,
			       * a device profile, a FIT input): `lab fidelity`
			       * tags it FIT; 0: the row is a prediction */
	double sd;            /* the published standard deviation of the figure
			       * over `runs` runs (a mean's row); 0: none */
	int runs;
} published_row;

struct lab_run;

/* A small run of an experiment: a variant ("before", "after", "base") and
 * settings on top of the defaults, finishing in milliseconds. Tests that
 * must cover every experiment run its small runs: test_labmem fails each
 * allocation in turn, test_cancel closes them part-way, test_patches
 * toggles the patches on them. Together they should reach every path the
 * experiment has (each state, mix, variant). (The design test and the
 * bench take every experiment from the registry too, at its defaults.) */
typedef struct small_run {
	const char *variant;
	const char *params;
} small_run;

typedef struct lab_exp {
	const char *name;   /* CLI name, e.g. "qgroup-drop" */
	const char *seed;   /* "002" or "-" */
	const char *title;  /* one line */
	int has_variants;   /* 1: before/after; 0: a single "base" run */
	/* The kernel each variant runs, by VAR_* (a patches.def KERNEL name;
	 * NULL: PATCH_DEFAULT_KERNEL). */
	const char *kernel[3];
	/* The patches it exposes, in the order its page shows them: at least
	 * every patch its before and after kernels differ by (test_patches). */
	const patch_id *patches;
	int npatches;
	/* Optional: switches the experiment declares itself. An exposed
	 * patch whose patches.def param names one of the experiment's own
	 * parameters gets no one-bit switch from the registry; instead this
	 * hook maps the parameters to the run's bits (an enum over several
	 * patches, a switch whose 1 is a patch off, a kernel preset). Called
	 * for `after` and `base` with *ps holding the variant's kernel;
	 * `before` runs its kernel as it is. p: every parameter by index
	 * (exp_param_index). */
	void (*switches)(const struct lab_exp *e, const double *p, patchset *ps);
	/* Its own parameters. Read parameters through exp_nparams /
	 * exp_param_desc: they add the patch switches. */
	const param_desc *params;
	int nparams;
	const metric_desc *metrics;
	int nmetrics;
	const published_row *published;
	int npublished;
	/* Rows left out of this build (the web's engine, LAB_WEB_BUILD: the
	 * fio device's 1,038 measured rows would be a sixth of its download);
	 * the list says how many, and the page loads them from the
	 * published.json the build writes beside it when a page needs them. */
	int npublished_separate;
	const small_run *small;
	int nsmall;
	/* Build the simulation for r->variant and r->params into r->sim and
	 * r->ctx. Return 0 or a LAB_E* code (with exp_fail() for a message). */
	int (*setup)(struct lab_run *r);
	/* Called after each lab_step slice; return progress in [0,1]. */
	double (*progress)(struct lab_run *r);
	/* The run finished: set every metric with exp_metric(). */
	int (*collect)(struct lab_run *r);
	/* Optional: experiment-specific JSON for the front end (an object). */
	void (*details)(struct lab_run *r, strbuf *out);
	/* Optional: snapshot of a named structure (an object). */
	int (*snapshot)(struct lab_run *r, const char *what, strbuf *out);
	/* Optional: invariant check; returns failures found. */
	int (*check)(struct lab_run *r);
	/* Free r->ctx (r->sim is freed by the engine). */
	void (*teardown)(struct lab_run *r);
	/* The run's work from its parameters alone (r->p set, no simulation),
	 * in the experiment's own unit (work_unit: "operations", "IOs"...):
	 * the page compares a link's with the default setup's before running
	 * it unasked (lab_estimate). Every experiment declares one. */
	double (*estimate)(const struct lab_run *r);
	const char *work_unit;
	/* Optional: the limits between parameters (each value is in its own
	 * range already), from r->p alone, before anything is built: 0, or
	 * exp_fail(r, LAB_ERANGE, ...) with one line that names the parameter
	 * and why. lab_open and lab_estimate call it, so a setting that
	 * cannot run is refused before it runs (the CLI's exit 2, the page's
	 * message at the field), never by a run that fails part-way. */
	int (*validate)(struct lab_run *r);
	/* 1: the experiment takes a text input, a `script=` setting of
	 * lab_open (one line: commands separated by ';'), in r->script
	 * (the sandbox). Others refuse the setting as an unknown parameter. */
	int takes_script;
	/* Optional (takes_script): lab_append. `text` is the script so far
	 * and the new commands after it; the hook checks it, and either
	 * changes nothing and returns a LAB_E* code with a one-line message
	 * in err, or takes the new commands so that the stopped simulation
	 * (sim_stop after the last command, the task's next step still
	 * queued) runs them once resumed, exactly as one run of the whole
	 * text would have. */
	int (*append)(struct lab_run *r, const char *text, char *err, size_t errlen);
} lab_exp;

enum { VAR_BASE = 0, VAR_BEFORE = 1, VAR_AFTER = 2 };

struct lab_run {
	const lab_exp *exp;
	int variant;                     /* VAR_* */
	double p[EXP_MAX_PARAMS];        /* parameter values, by index */
	patchset patches;                /* the kernel this run simulates */
	uint64_t seed;
	sim *sim;
	void *ctx;                       /* experiment state */
	double m[EXP_MAX_METRICS];       /* metric values, by index */
	unsigned char m_set[EXP_MAX_METRICS];
	int finished;
	int failed;                      /* a LAB_E* code once failed */
	char errmsg[200];
	char *script;                    /* the `script=` setting (takes_script), or NULL */
};

/* The index of parameter `name` of e (its own or a switch), -1 if none. */
int exp_param_index(const lab_exp *e, const char *name);
/* Parameter access by name (asserts the name exists: a programming error). */
double exp_param(const struct lab_run *r, const char *name);
int exp_param_enum(const struct lab_run *r, const char *name); /* index */
const char *exp_param_enum_name(const struct lab_run *r, const char *name);
/* Set a metric by name (asserts the name is declared). */
void exp_metric(struct lab_run *r, const char *name, double v);
/* Record a failure message; returns code. */
int exp_fail(struct lab_run *r, int code, const char *fmt, ...);

/* Fill p[] with defaults, then apply "KEY=VALUE\n..." settings, validating
 * each (type, range, allowed values). On error returns LAB_ENOENT (unknown
 * key) or LAB_EINVAL/LAB_ERANGE with a one-line message in err. */
int exp_parse_params(const lab_exp *e, const char *text, double *p,
		     char *err, size_t errlen);
/* Write the parameter values as a JSON object (enums by name, inf as "inf"). */
void exp_params_json(const lab_exp *e, const double *p, strbuf *out);
/* The experiment's metadata as a JSON object (an element of `list`). */
void exp_describe_json(const lab_exp *e, strbuf *out);

/* Registry */
int exp_count(void);
const lab_exp *exp_get(int i);
const lab_exp *exp_find(const char *name);

/* All parameters of e: its own, then its patch switches. */
int exp_nparams(const lab_exp *e);
const param_desc *exp_param_desc(const lab_exp *e, int i);
/* The kernel (patches.def name) variant VAR_* of e runs. */
const char *exp_kernel(const lab_exp *e, int variant);
/* The patch bits of a run of e: the variant's kernel, then (after, base)
 * the switches in p. 0, or LAB_ENOENT (e names an unknown kernel). */
int exp_run_patches(const lab_exp *e, int variant, const double *p, patchset *out);
/* One patch of the table as JSON (an element of list's "patches"). */
void exp_patch_json(const patch_info *pi, strbuf *out);

/* lab_open, with the run's patch bits given instead of derived (NULL:
 * derived, as lab_open does): for tests that toggle a patch no switch
 * exposes. */
int lab_open_patched(const char *experiment, const char *variant, const char *params,
		     uint64_t seed, const patchset *patches, struct lab_run **out,
		     char **errmsg);


#endif /* EXP_H */
