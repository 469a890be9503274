/*
 * sim.h - the discrete-event core: a simulated nanosecond clock, an event
 * heap, simulated tasks (threads) with CPU time and waits, a seeded PRNG,
 * counters, sampled time series and a bounded trace buffer.
 *
 * Time model. Every event runs at sim->now. A task runs in steps: its step
 * function is called at sim->now == task->clock, does one unit of work (one
 * file create, one reclaim cycle...), charging CPU with task_cpu() and
 * known-duration waits with task_wait_until(), which advance task->clock.
 * When the step returns TASK_RUN the task is rescheduled at its clock, so
 * other tasks interleave at step granularity. A task that must wait for
 * something whose end time is not yet known (a ticket, an ordered extent)
 * parks on a waitq and returns TASK_BLOCKED; waitq_wake*() reschedules it.
 *
 * Shared resources that hold for a known time (a tree lock held for a
 * search, a device channel busy for a service time) are modelled as
 * reservations on a timeline (see simlock_*): the waiter's clock jumps to
 * the release time and the difference is counted as wait time. This keeps
 * the engine deterministic and fast; its approximation is that a step that
 * runs "ahead" may reserve a resource before a task whose clock is earlier
 * but whose step runs later, so steps are kept small.
 */
#ifndef SIM_H
#define SIM_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t simtime_t; /* nanoseconds of simulated time */

#define NS_PER_US 1000ull
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
#define SIMTIME_MAX UINT64_MAX

typedef struct sim sim;
typedef struct task task;
typedef void (*event_fn)(sim *s, void *arg);

/* ---- PRNG: xoshiro256**, seeded by splitmix64. Same seed, same stream. */
typedef struct prng {
	uint64_t s[4];
} prng;

void prng_seed(prng *p, uint64_t seed);

static inline uint64_t prng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman & Vigna): fast, 256-bit state, passes BigCrush.
 * Inline: the device model draws one or two per request. */
static inline uint64_t prng_next(prng *p)
{
	uint64_t *s = p->s;
	uint64_t r = prng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = prng_rotl(s[3], 45);
	return r;
}

static inline double prng_unit(prng *p) /* [0,1) */
{
	return (double)(prng_next(p) >> 11) * 0x1.0p-53;
}

/* [0,n), unbiased; n>0. Lemire's rejection method: unbiased for every n.
 * Inline: the device model draws one per 4 KiB op of a scattered read. */
static inline uint64_t prng_below(prng *p, uint64_t n)
{
	for (;;) {
		uint64_t r = prng_next(p);
		/* the threshold 2^64 mod n is below n: a draw >= n passes
		 * without the division that computes it (nearly every draw) */
		if (r >= n || r >= (0 - n) % n)
			return r % n;
	}
}
/* prng_below for many draws with one n: the divisor with 2^64 / n
 * (prng_div_make), so that each draw's r % n is a multiply, not a 64-bit
 * division (some 10-40 cycles, and WASM has only the division; the
 * device model draws one per 4 KiB op of a scattered read). The same
 * draws and the same results as prng_below(p, n). */
typedef struct prng_div {
	uint64_t n, m; /* m = floor((2^64 - 1) / n) */
} prng_div;

static inline prng_div prng_div_make(uint64_t n) /* n > 0 */
{
	prng_div d = { n, UINT64_MAX / n };
	return d;
}

/* The high 64 bits of a * b. */
static inline uint64_t prng_mulhi(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__) && !defined(__wasm__)
	return (uint64_t)(((unsigned __int128)a * b) >> 64);
#else
	/* wasm32 has no 64x64->128 multiply (clang would call __multi3) */
	uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
	return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

/* r % d->n: q = mulhi(r, m) is floor(r / n) or one less (m is 2^64 / n
 * rounded down, by less than 1), so r - q * n is below 2n. */
static inline uint64_t prng_mod(uint64_t r, const prng_div *d)
{
	uint64_t u = r - prng_mulhi(r, d->m) * d->n;
	return u >= d->n ? u - d->n : u;
}

static inline uint64_t prng_below_by(prng *p, const prng_div *d)
{
	for (;;) {
		uint64_t r = prng_next(p);
		/* as prng_below: the threshold only for a draw below n */
		if (r >= d->n || r >= (0 - d->n) % d->n)
			return prng_mod(r, d);
	}
}

double prng_normal(prng *p);                 /* N(0,1), Marsaglia polar */
double prng_lognormal(prng *p, double mu, double sigma);
double prng_exponential(prng *p, double mean);

/* ---- Deterministic math. libm differs between glibc (native) and musl
 * (WASM) in the last ulp, which would break "same seed, same metrics", so
 * the engine uses these portable implementations everywhere. */
double dm_exp(double x);
double dm_log(double x);
double dm_pow(double x, double y); /* x > 0 */
double dm_log2(double x);

/* ---- Tasks */
enum task_ret {
	TASK_RUN = 0,     /* reschedule at task->clock */
	TASK_BLOCKED = 1, /* parked on a waitq; a wake reschedules it */
	TASK_DONE = 2,    /* finished; the task is retired */
};

typedef int (*task_step_fn)(sim *s, task *t);

struct task {
	int id;
	const char *name;
	task_step_fn step;
	void *ctx;          /* owner's state */
	int state;          /* owner's state machine label */
	simtime_t clock;    /* the task's own time, >= sim->now inside a step */
	uint64_t cpu_ns;    /* CPU time charged */
	uint64_t wait_ns;   /* time spent waiting (locks, IO, waitqs) */
	uint64_t runq_ns;   /* time spent waiting for a CPU */
	int done;
	int queued;         /* an event is pending for it */
	simtime_t parked_at;
	struct task *wq_next; /* link while parked on a waitq */
	int cpu_slot;       /* with a CPU limit: its CPU in the busy heap + 1
			     * (0: none) */
};

/* A FIFO of parked tasks. */
typedef struct waitq {
	task *head, *tail;
	int len;
} waitq;

/* A lock as a timeline reservation: shared holders extend read_until,
 * exclusive holders extend write_until. A holder that waits has the wait
 * counted on its task (wait_ns). (Per-lock counts of acquisitions and
 * waits were kept once and read by nobody; every inode and tree block
 * carries a lock, so they went.) */
typedef struct simlock {
	simtime_t read_until;  /* last shared hold ends */
	simtime_t write_until; /* last exclusive hold ends */
} simlock;

/* ---- The simulator */
sim *sim_create(uint64_t seed, int ncpus /* 0 = unlimited */);
/* Change the CPU count before any task runs (experiments' `cpus`). */
void sim_set_ncpus(sim *s, int ncpus);
void sim_destroy(sim *s);

static inline simtime_t sim_now(const sim *s);
prng *sim_prng(sim *s);
uint64_t sim_events(const sim *s);
/* The run's sources of variation (variation.h); the simulator owns and
 * frees them. NULL: every source off. */
struct variation;
void sim_set_variation(sim *s, struct variation *v);
struct variation *sim_variation(const sim *s);
/* Multiply every CPU charge (task_cpu) from now on by `level`, the run's
 * build speed (variation.def cpu_build): each charge is ns x level plus
 * what earlier charges' roundings owe, so many small charges sum to the
 * scaled total. Level 1: charges as they are (the fitted build). */
void sim_set_cpu_level(sim *s, double level);
uint64_t sim_cpu_scale(sim *s, uint64_t ns);

/* Schedule fn(arg) at an absolute time (>= now). Returns 0 or LAB_ENOMEM. */
int sim_at(sim *s, simtime_t when, event_fn fn, void *arg);

/* A trace kind's registered name ("?" if none; test_record_window). */
const char *sim_trace_kind_name(const sim *s, int kind);

/* Process at most max_events events, none later than `until`.
 * Returns 1 when the queue is empty or sim_stop() was called, else 0. */
int sim_run(sim *s, uint64_t max_events, simtime_t until);
void sim_stop(sim *s);
/* Undo sim_stop: the events still queued run on at the next sim_run (a
 * run that waits for more input: the sandbox's lab_append). */
void sim_resume(sim *s);

/* Tasks. The task is first stepped at `start`. */
task *task_spawn(sim *s, const char *name, task_step_fn step, void *ctx,
		 simtime_t start);
/* Charge CPU time; with a limited CPU count this may also queue. Inline
 * (below, after sim_hot): the engine's most frequent call, and without a
 * CPU limit it is two additions. */
static inline void task_cpu(sim *s, task *t, uint64_t ns);
void task_cpu_limited(sim *s, task *t, uint64_t ns);
/* Wait for something that ends at a known time (IO completion...). */
static inline void task_wait_until(task *t, simtime_t when)
{
	if (when > t->clock) {
		t->wait_ns += when - t->clock;
		t->clock = when;
	}
}
/* Park on a waitq; the step must then return TASK_BLOCKED. */
void task_park(task *t, waitq *q);
/* Wake the first / all parked tasks at time `at` (>= now). */
int waitq_wake_one(sim *s, waitq *q, simtime_t at);
int waitq_wake_all_slow(sim *s, waitq *q, simtime_t at);
/* inline: most calls find the queue empty */
static inline int waitq_wake_all(sim *s, waitq *q, simtime_t at)
{
	return q->head ? waitq_wake_all_slow(s, q, at) : 0;
}
/* Reschedule a task that returned TASK_BLOCKED without a waitq. */
void task_wake(sim *s, task *t, simtime_t at);

/* Timeline locks. Each returns the time the lock was obtained (>= t->clock)
 * and advances t->clock to it; the caller later calls *_release with the
 * time the hold ends. (Inline: every tree block visit takes one.) */
static inline simtime_t simlock_read(simlock *l, task *t)
{
	simtime_t start = t->clock > l->write_until ? t->clock : l->write_until;
	task_wait_until(t, start);
	return start;
}

static inline void simlock_read_release(simlock *l, simtime_t until)
{
	if (until > l->read_until)
		l->read_until = until;
}

static inline simtime_t simlock_write(simlock *l, task *t)
{
	simtime_t start = t->clock;
	if (l->write_until > start)
		start = l->write_until;
	if (l->read_until > start)
		start = l->read_until;
	task_wait_until(t, start);
	return start;
}

static inline void simlock_write_release(simlock *l, simtime_t until)
{
	if (until > l->write_until)
		l->write_until = until;
}

/* ---- Counters and sampled series, always kept (bounded memory). */
/* A named counter; ids are small ints assigned on first use. */
int sim_counter_id(sim *s, const char *name);
static inline void sim_count(sim *s, int id, int64_t delta);
int64_t sim_counter(const sim *s, const char *name); /* 0 if unknown */

/* A time series (e.g. "tickets", "dirty_extents"). Memory is bounded: when
 * the buffer fills, every other point is dropped and the sampling stride
 * doubles, so the series always covers the whole run. */
int sim_series_id(sim *s, const char *name);
static inline void sim_series_add(sim *s, int id, simtime_t t, double v);
void sim_series_put(sim *s, int id, simtime_t t, double v); /* (its slow path) */

/* ---- Recording: a bounded trace of structured events for the front end.
 *
 * Off unless a run asks for it (lab_record). Every call site tests
 * sim_recording() first, an inline load, so a run that does not record
 * pays a predictable branch per site and nothing else. Recording never
 * changes the simulation: it charges no time, draws no random number, and
 * its buffer is not one of the run's counted allocations (labmem.h
 * lab_try_realloc): a recording that cannot grow stops keeping events.
 *
 * An event is a time (the acting task's clock, else now), a kind (the
 * table in trace_kinds.def, plus any registered with sim_trace_kind), the
 * task id and up to SIM_REC_MAXARGS integer arguments. Events are kept in
 * the order the engine did them, which is the order the structures
 * changed in; their times are not monotonic across tasks, since a task's
 * step runs ahead of the others' (see the time model above).
 *
 * A recording starts at a simulated time: the registered dumpers then list
 * the structures as they are (trees block by block, io_trees record by
 * record), so that a reader rebuilds every picture from the events alone.
 * It keeps at most max_events; after that it counts the events it did not
 * keep, and the JSON says the trace is a window ("complete": false).
 */
#define SIM_REC_MAXARGS 12

enum sim_trace_kinds {
#define K(id, name, args) TK_##id,
#include "trace_kinds.def"
#undef K
	TK_NKINDS
};

/* A series' sampling: one point in stride (a power of two) is kept. */
typedef struct sim_series_gate {
	uint32_t stride, skip;
} sim_series_gate;

/* The first member of struct sim, so that inline functions read it:
 * sim_recording()'s test and task_cpu()'s. */
typedef struct sim_hot {
	int rec_on;      /* recording */
	/* recording, or waiting for an operation to start it
	 * (sim_record_at_op): the sites that mark an operation's start test
	 * this one (SIM_REC_OP) */
	int rec_ops;
	/* per kind id, 1: not kept (sim_record_only); SIM_REC skips the call */
	const uint8_t *rec_skip;
	int cpu_limited; /* a CPU count is set (sim_set_ncpus) */
	int cpu_scaled;  /* CPU charges are multiplied by cpu_level */
	double cpu_level; /* the build's speed level (variation.def cpu_build) */
	double cpu_carry; /* the fraction of a ns the scaled charges owe */
	simtime_t now;
	int ncounters;
	int nseries;
	int64_t *counters;     /* struct sim's array of them */
	sim_series_gate *gate; /* and of the series' sampling */
} sim_hot;

static inline simtime_t sim_now(const sim *s)
{
	return ((const sim_hot *)(const void *)s)->now;
}

/* Most samples are skipped (a long run's stride is large): the test is
 * inline, the point kept out of line. */
static inline void sim_series_add(sim *s, int id, simtime_t t, double v)
{
	sim_hot *h = (sim_hot *)(void *)s;
	if (id < 0 || id >= h->nseries)
		return;
	sim_series_gate *g = &h->gate[id];
	if (g->skip++ & (g->stride - 1))
		return;
	sim_series_put(s, id, t, v);
}

static inline void sim_count(sim *s, int id, int64_t delta)
{
	sim_hot *h = (sim_hot *)(void *)s;
	if (id >= 0 && id < h->ncounters)
		h->counters[id] += delta;
}

static inline int sim_recording(const sim *s)
{
	return s && ((const sim_hot *)(const void *)s)->rec_on;
}

/* A kind the recording does not keep (sim_record_only): its sites skip
 * building the event at all. */
static inline int sim_rec_skipped(const sim *s, int kind)
{
	const sim_hot *h = (const sim_hot *)(const void *)s;
	return kind >= 0 && kind < 128 && h->rec_skip[kind];
}

/* Recording, or waiting for the operation that starts the recording: an
 * operation's start ("op:NAME" kinds) is recorded under this test. */
static inline int sim_recording_ops(const sim *s)
{
	return s && ((const sim_hot *)(const void *)s)->rec_ops;
}

static inline void task_cpu(sim *s, task *t, uint64_t ns)
{
	if (((const sim_hot *)(const void *)s)->cpu_scaled)
		ns = sim_cpu_scale(s, ns);
	if (((const sim_hot *)(const void *)s)->cpu_limited) {
		task_cpu_limited(s, t, ns);
		return;
	}
	t->clock += ns;
	t->cpu_ns += ns;
}

/* Register a kind (args: its argument names, "a,b,c"), or look one up by
 * name (args may then be NULL). Returns its id, or -1 when the table is
 * full. */
int sim_trace_kind(sim *s, const char *name);
int sim_trace_kind_args(sim *s, const char *name, const char *args);

/* Keep an event (when recording). t: the acting task (its clock is the
 * time) or NULL: the task whose step is running, if any, else now. */
void sim_rec(sim *s, int kind, const task *t, int n, const int64_t *args);
/* The same at an explicit time (a device request's submission). */
void sim_rec_at(sim *s, int kind, int taskid, simtime_t at, int n, const int64_t *args);
/* SIM_REC(s, TK_X, task, args...): the call with its test. */
#define SIM_REC(s, kind, t, ...)                                               \
	do {                                                                   \
		if (sim_recording(s) && !sim_rec_skipped((s), (kind))) {       \
			const int64_t rec_args_[] = { __VA_ARGS__ };           \
			sim_rec((s), (kind), (t),                              \
				(int)(sizeof rec_args_ / sizeof rec_args_[0]), \
				rec_args_);                                    \
		}                                                              \
	} while (0)
/* The same for an operation's start (an "op:NAME" kind): seen while a
 * recording waits for its n-th operation (sim_record_at_op) too. */
#define SIM_REC_OP(s, kind, t, ...)                                            \
	do {                                                                   \
		if (sim_recording_ops(s)) {                                    \
			const int64_t rec_args_[] = { __VA_ARGS__ };           \
			sim_rec((s), (kind), (t),                              \
				(int)(sizeof rec_args_ / sizeof rec_args_[0]), \
				rec_args_);                                    \
		}                                                              \
	} while (0)
/* Three arguments (the older call sites). */
void sim_trace(sim *s, int kind, int task, int64_t a, int64_t b, int64_t c);

/* Start recording at simulated time `from` (now or later; the dumpers run
 * then), keeping at most max_events. 0, LAB_EINVAL (max_events 0), LAB_ESTATE
 * (already recording or recorded) or LAB_ENOMEM. */
int sim_record_start(sim *s, simtime_t from, uint64_t max_events);
/* Start recording when the run's nth (from 0) operation of kind `op`
 * ("op:drop"...) starts: the dumpers list the structures at that moment,
 * in the middle of the step that starts it (an operation's start event
 * comes before it changes anything), and that event is the first one
 * after the listing. Until then only the operation sites are seen
 * (SIM_REC_OP): a run waiting for its operation pays a test per site
 * and a call per operation start. Same returns as sim_record_start. */
int sim_record_at_op(sim *s, const char *op, uint64_t nth, uint64_t max_events);
/* Keep only the kinds named in `names` (comma-separated; NULL or "": all),
 * the listing's included; the others are neither kept nor counted as
 * left out. A name not registered yet applies when it is. 0, LAB_EINVAL
 * (too long), LAB_ESTATE (recording already). */
int sim_record_only(sim *s, const char *names);
/* 0 not asked, 1 waiting for its start, 2 recording, 3 full (counting
 * what it leaves out). */
int sim_record_state(const sim *s);

/* A dumper lists a structure's current state as events; a subsystem that
 * owns structures registers one for as long as they live. */
typedef void (*sim_dump_fn)(sim *s, void *ctx);
int sim_rec_dumper(sim *s, sim_dump_fn fn, void *ctx); /* 0 or LAB_ENOMEM */
void sim_rec_dumper_remove(sim *s, void *ctx);
/* Identities for events: a number per file system instance (fs, dfs), a
 * handle per tree. Handed out whether or not the run records. */
int64_t sim_rec_fsno(sim *s);
int64_t sim_rec_handle(sim *s);

/* Reading a recording back (tests; the JSON below). */
typedef struct sim_rec_ev {
	simtime_t t;
	int kind, task, n;
	int64_t a[SIM_REC_MAXARGS];
} sim_rec_ev;
typedef struct sim_rec_it {
	size_t pos;
} sim_rec_it;
/* The next kept event after *it (zeroed to start): 1, or 0 at the end. */
int sim_rec_next(const sim *s, sim_rec_it *it, sim_rec_ev *ev);
uint64_t sim_rec_kept(const sim *s);
uint64_t sim_rec_unkept(const sim *s);

/* Iterators for serialisation (exp.c / lab.c). */
struct strbuf;
/* The recording from event number `since` on (sim.c documents the
 * document's shape). */
void sim_trace_json(const sim *s, uint64_t since, struct strbuf *out);
void sim_series_json(const sim *s, struct strbuf *out);
void sim_counters_json(const sim *s, struct strbuf *out);

#endif /* SIM_H */
