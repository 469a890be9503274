/*
 * lab.h - the whole public API of the btrfs patch lab engine.
 *
 * The WASM bridge (web/engine/bridge.ts), the Node CLI (cli/lab.mjs) and the
 * native CLI (engine/src/exp/main.c) use nothing else. Handles are opaque; struct
 * layouts live in the engine/src headers.
 *
 * Error convention: every function that can fail returns an int, 0 on
 * success or a negative LAB_E* code; results come back through out-pointers.
 * lab_strerror() names every code. Strings returned through char **out are
 * allocated by the engine and released with lab_free().
 */
#ifndef LAB_H
#define LAB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every code, once: X(name, value, what lab_strerror says). The enum,
 * lab_strerror and `list --json`'s "errors" (which the web app reads
 * instead of typing the codes again) are made from this list. */
#define LAB_ERRORS(X)                                                          \
	X(LAB_OK, 0, "success")                                                \
	X(LAB_EINVAL, -1, "invalid argument")       /* a bad argument or value */ \
	X(LAB_ENOENT, -2, "no such experiment, variant or parameter")          \
	X(LAB_ENOMEM, -3, "out of memory")          /* simulated or host */   \
	X(LAB_ERANGE, -4, "parameter out of range")                            \
	X(LAB_ESTATE, -5, "not valid in the run's current state")              \
	X(LAB_ECANCELED, -6, "run cancelled")                                  \
	X(LAB_EENGINE, -7, "engine invariant failed") /* a bug */             \
	X(LAB_ENOSPC, -8, "simulated file system out of space")                \
	X(LAB_ENOTSUP, -9, "not supported by this experiment")

enum {
#define LAB_ERROR_ENUM(name, value, text) name = value,
	LAB_ERRORS(LAB_ERROR_ENUM)
#undef LAB_ERROR_ENUM
};

typedef struct lab_run lab_run;

/* Name of an error code ("LAB_EINVAL: invalid argument"). Never NULL. */
const char *lab_strerror(int code);

/* Free a string returned by the engine. */
void lab_free(void *p);

/*
 * The headless CLI, as ../shared/spec/lab-cli.md defines it. argv[0] is the
 * program name. Output for stdout and stderr comes back in *out and *err
 * (either may be an empty string). Returns the process exit status: 0 ok,
 * 1 engine failure, 2 bad arguments. Native main() and the Node CLI both
 * call this, so they print the same thing for the same arguments.
 */
int lab_cli(int argc, const char *const *argv, char **out, char **err);

/* Native hosts only (WASM: Module.labProgress): called as lab_cli's runs
 * progress, with runs done of total and the current one's progress in
 * [0,1], so a host on a terminal can draw a progress line. NULL: none. */
#ifndef __EMSCRIPTEN__
void lab_cli_set_progress(void (*fn)(int done, int total, double frac));
#endif

/* The experiment registry as JSON (the `list --json` document, plus each
 * experiment's published rows and parameter help for the front end), the
 * patch table and kernels (engine/src/kernel/patches.def) and the error
 * codes. */
int lab_list_json(char **out);

/*
 * Open a run. `params` is a list of "KEY=VALUE" settings separated by '\n'
 * (NULL or "" for all defaults); each is validated against the experiment's
 * parameter table. `variant` is "before", "after" or "base".
 * On error, *errmsg (if not NULL) receives a one-line explanation.
 */
int lab_open(const char *experiment, const char *variant, const char *params,
	     uint32_t seed_lo, uint32_t seed_hi, lab_run **out, char **errmsg);

/*
 * The work a run with these settings would do, in the experiment's own
 * unit (`list` names it: work_unit), from the parameters alone (nothing is
 * set up or run), and the work of its defaults: a front end asks before
 * running a setting much larger than the default unasked. Errors as
 * lab_open's parameter errors (*errmsg likewise).
 */
int lab_estimate(const char *experiment, const char *params, double *work,
		 double *default_work, char **errmsg);

/*
 * Advance a run by at most max_events simulated events. *done becomes 1 when
 * the run has finished. Runs can be stepped in slices so a worker can report
 * progress and honour cancellation between slices.
 */
int lab_step(lab_run *run, uint32_t max_events, int *done);

/* Progress in [0,1], the experiment's own estimate. */
double lab_progress(const lab_run *run);

/*
 * Give a finished run more input: for an experiment that takes a script
 * (the sandbox), `text` (commands, ';' or newlines between them) is added
 * to the end of its script and the run goes on from where it stopped, as
 * if the longer script had been given to lab_open (same result, same
 * recording: the recording goes on too, lab_trace_json's since picks up
 * the new events). lab_step then runs the new commands. A text the
 * experiment refuses changes nothing (the run stays finished, its result
 * as it was) and returns the code with a one-line message in *errmsg.
 * LAB_ENOTSUP for an experiment without a script, LAB_ESTATE before the
 * run finished or after it failed.
 */
int lab_append(lab_run *run, const char *text, char **errmsg);

/* Simulated time so far, in ns, and events processed. */
double lab_sim_ns(const lab_run *run);
double lab_events(const lab_run *run);

/* Result of a finished run: {"metrics":{...},"sim_ns":..,"events":..,
 * "details":{...}}. details are experiment-specific, for the front end. */
int lab_result_json(lab_run *run, char **out);

/*
 * Record the run (call before it finishes; recording never changes its
 * result): the events its pictures are drawn from, in the order the engine
 * did them. Tree blocks listed, visited, COWed, split, moved and freed;
 * block locks taken and released; io_tree records inserted, split, changed
 * and removed; ordered extents; tickets and reclaim cycles; commits and
 * their phases; device requests; operations (engine/src/kernel/
 * trace_kinds.def lists every kind and its arguments). Recording starts at
 * simulated time from_ns (0: now), where every structure is first listed
 * as it is, and keeps at most max_events (1 .. LAB_RECORD_MAX); a longer
 * run is recorded as that window, and the trace says so.
 * LAB_EINVAL for a bad argument, LAB_ESTATE once finished or already
 * recording, LAB_ENOMEM if the first buffer cannot be had.
 */
#define LAB_RECORD_MAX 1000000
int lab_record(lab_run *run, double from_ns, uint32_t max_events);

/*
 * lab_record with options, one KEY=VALUE a line (lab_open's form):
 *   max_events=N   as lab_record (default LAB_RECORD_MAX)
 *   from_ns=T      as lab_record (default 0)
 *   from_op=KIND   start instead when the run's nth operation of KIND
 *   nth=N          ("op:lseek", "op:drop"... trace_kinds.def) starts, N
 *                  from 0 (default 0): the structures are listed at that
 *                  moment and that operation is the first event after the
 *                  listing, so a window can sit where a page's story is
 *                  without knowing its time; the same rule gives both
 *                  kernels the same moment of their own runs
 *   only=a,b,c     keep only these kinds (the listing's included); the
 *                  others are neither kept nor counted as left out
 * LAB_EINVAL for an unknown key or a bad value; otherwise as lab_record.
 */
int lab_record_opts(lab_run *run, const char *opts);

/* Where a recording is: 0 not asked, 1 waiting for its start (a time or
 * an operation), 2 recording, 3 full (the window is complete: a caller
 * that wants only the recording can stop stepping). */
int lab_record_state(const lab_run *run);

/*
 * The recording from its event number `since` on, plus the sampled time
 * series and counters: {"trace":{"recording","from_ns","complete","kept",
 * "unkept","max_events","last_ns","kinds":[{"name","args"}],"tasks":[..],
 * "next","events":[[t_ns, kind, task, args...],...]},"series":{...},
 * "counters":{...},"sim_ns","progress"}. Events are numbered from 1: the
 * ones after `since` come back (0: all), and "next" is the last one's
 * number, the next call's since. since must be a number in [0, 2^64)
 * (LAB_EINVAL otherwise: NaN, infinities). Without lab_record, no events.
 */
int lab_trace_json(lab_run *run, double since, char **out);

/* A snapshot of a simulated structure for the front end, by name
 * ("tree:fs", "iotree", ... as the experiment defines). */
int lab_snapshot_json(lab_run *run, const char *what, char **out);

/* Walk every simulated structure and check its invariants. Returns the
 * number of failures found (0 = consistent) or a negative error. */
int lab_check(lab_run *run);

void lab_close(lab_run *run);

#ifdef __cplusplus
}
#endif
#endif /* LAB_H */
