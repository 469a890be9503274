/*
 * sim.c - the discrete-event core (see sim.h for the time model).
 *
 * Events live in a binary heap ordered by (time, sequence number): the
 * sequence number makes ties deterministic, so the same seed always gives
 * the same interleaving on every build.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "sim.h"
#include "strbuf.h"
#include "labmem.h"

typedef struct event {
	simtime_t t;
	uint64_t seq;
	event_fn fn;
	void *arg;
} event;

#define SERIES_CAP 1024   /* points kept per series before decimation */
#define MAX_NAMED 128     /* counters, series, trace kinds: each */
_Static_assert(MAX_NAMED == 128, "sim.h's sim_rec_skipped bounds kind ids by 128");
#define NAME_HINTS 64
#define MAX_DUMPERS 16    /* structures listed when a recording starts */

/* A busy CPU: when it is free, and the task that ran on it last. */
typedef struct cpu_ent {
	simtime_t t;
	task *owner;
} cpu_ent;

typedef struct series {
	char name[40];
	uint32_t n;         /* points; the sampling is in sim->gate */
	double t[SERIES_CAP];
	double v[SERIES_CAP];
} series;

struct sim {
	sim_hot hot; /* first: sim.h's inline functions read it */
	uint64_t seq;
	uint64_t nevents;
	int stopped;
	prng rng;

	event *heap;
	size_t nheap, capheap;
	/* With nfront, the earliest pending event, kept out of the heap (it
	 * is before every heap event): a task's step that reschedules itself
	 * is mostly the next to run, and then neither goes into the heap nor
	 * comes out. The order of events is the heap's order. */
	event front;
	int nfront;

	task **tasks;
	int ntasks, captasks;

	int ncpus;
	cpu_ent *cpu_free;    /* busy CPUs by free time, a min-heap */
	int nbusy, nidle;     /* nidle CPUs are free since before `now` */

	char counter_names[MAX_NAMED][40];
	int64_t counters[MAX_NAMED];

	series *series[MAX_NAMED];
	sim_series_gate gate[MAX_NAMED];
	/* the id a name's address last resolved to, checked with one strcmp
	 * (hot paths ask for their counter by name on every call) */
	uint8_t counter_hint[NAME_HINTS], series_hint[NAME_HINTS];

	/* recording (sim.h): kinds, then the events as words: the time;
	 * kind | (task + 1) << 16 | nargs << 32; the arguments */
	char kind_names[MAX_NAMED][32];
	const char *kind_args[MAX_NAMED];
	int nkinds;
	struct variation *var; /* variation.h */
	uint64_t *rec;
	size_t rec_len, rec_cap;    /* words */
	uint64_t rec_kept, rec_unkept, rec_max;
	simtime_t rec_from;         /* starts here; SIMTIME_MAX: not armed */
	simtime_t rec_t0;           /* when it started (or is to start) */
	simtime_t rec_last;         /* latest time kept */
	int rec_state;              /* 0 never, 1 armed, 2 on, 3 stopped */
	int rec_short;              /* stopped for want of memory */
	/* armed by an operation (sim_record_at_op): its name, kind once
	 * registered (-1 before), ordinal, and the ones of it seen so far */
	char rec_op[32];
	int rec_op_kind;
	uint64_t rec_op_nth, rec_op_seen;
	/* kinds kept (sim_record_only): the names, and per kind id 1 = skip */
	char rec_only[1024];
	uint8_t rec_skip[MAX_NAMED]; /* sim.h's sim_rec_skipped reads it (128 kinds) */
	struct { sim_dump_fn fn; void *ctx; } dumpers[MAX_DUMPERS];
	int ndumpers;
	int64_t next_fsno, next_handle;
	const task *cur;            /* the task whose step runs (recording) */
};

/* ------------------------------------------------------------------ PRNG */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void prng_seed(prng *p, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		p->s[i] = splitmix64(&x);
}

/* prng_next, prng_unit, prng_below: inline, in sim.h */

/* Marsaglia's polar method: needs only sqrt and log, both portable here
 * (sqrt is correctly rounded by IEEE 754; log is dm_log). */
double prng_normal(prng *p)
{
	for (;;) {
		double a = 2.0 * prng_unit(p) - 1.0, b = 2.0 * prng_unit(p) - 1.0;
		double q = a * a + b * b;
		if (q > 0.0 && q < 1.0)
			return a * sqrt(-2.0 * dm_log(q) / q);
	}
}

double prng_lognormal(prng *p, double mu, double sigma)
{
	return dm_exp(mu + sigma * prng_normal(p));
}

double prng_exponential(prng *p, double mean)
{
	double u = prng_unit(p);
	return -mean * dm_log(1.0 - u);
}

/* ------------------------------------------------------------- the heap */

static int ev_less(const event *a, const event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int heap_push(sim *s, event e)
{
	if (s->nheap == s->capheap) {
		size_t cap = s->capheap ? s->capheap * 2 : 256;
		event *h = lab_realloc(s->heap, cap * sizeof *h);
		if (!h)
			return LAB_ENOMEM;
		s->heap = h;
		s->capheap = cap;
	}
	size_t i = s->nheap++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!ev_less(&e, &s->heap[parent]))
			break;
		s->heap[i] = s->heap[parent];
		i = parent;
	}
	s->heap[i] = e;
	return 0;
}

static event heap_pop(sim *s)
{
	event top = s->heap[0];
	event last = s->heap[--s->nheap];
	size_t i = 0, n = s->nheap;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const event *best = &last;
		if (l < n && ev_less(&s->heap[l], best)) {
			m = l;
			best = &s->heap[l];
		}
		if (r < n && ev_less(&s->heap[r], best))
			m = r;
		if (m == i)
			break;
		s->heap[i] = s->heap[m];
		i = m;
	}
	if (n)
		s->heap[i] = last;
	return top;
}

static void rec_begin(sim *s);

/* -------------------------------------------------------- the simulator */

sim *sim_create(uint64_t seed, int ncpus)
{
	sim *s = lab_calloc(1, sizeof *s);
	if (!s)
		return NULL;
	prng_seed(&s->rng, seed);
	s->hot.counters = s->counters;
	s->hot.gate = s->gate;
	s->hot.rec_skip = s->rec_skip;
	s->rec_from = SIMTIME_MAX;
	s->rec_op_kind = -1;
	static const char *const names[] = {
#define K(id, name, args) name,
#include "trace_kinds.def"
#undef K
	};
	static const char *const args[] = {
#define K(id, name, args) args,
#include "trace_kinds.def"
#undef K
	};
	for (int i = 0; i < TK_NKINDS; i++)
		sim_trace_kind_args(s, names[i], args[i]);
	sim_set_ncpus(s, ncpus);
	return s;
}

void sim_set_ncpus(sim *s, int ncpus)
{
	free(s->cpu_free);
	s->cpu_free = NULL;
	s->ncpus = 0;
	s->nbusy = s->nidle = 0;
	if (ncpus > 0) {
		s->cpu_free = lab_calloc((size_t)ncpus, sizeof *s->cpu_free);
		if (s->cpu_free) {
			s->ncpus = ncpus;
			s->nidle = ncpus;
		}
	}
	s->hot.cpu_limited = s->ncpus > 0;
}

void sim_destroy(sim *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->ntasks; i++)
		free(s->tasks[i]);
	free(s->tasks);
	free(s->heap);
	free(s->cpu_free);
	for (int i = 0; i < s->hot.nseries; i++)
		free(s->series[i]);
	free(s->rec);
	free(s->var);
	free(s);
}

prng *sim_prng(sim *s) { return &s->rng; }
struct variation *sim_variation(const sim *s) { return s->var; }

void sim_set_variation(sim *s, struct variation *v)
{
	free(s->var);
	s->var = v;
}
void sim_set_cpu_level(sim *s, double level)
{
	s->hot.cpu_level = level;
	s->hot.cpu_carry = 0.0;
	s->hot.cpu_scaled = level != 1.0;
}

uint64_t sim_cpu_scale(sim *s, uint64_t ns)
{
	double x = (double)ns * s->hot.cpu_level + s->hot.cpu_carry;
	uint64_t out = x > 0.0 ? (uint64_t)x : 0;
	s->hot.cpu_carry = x - (double)out;
	return out;
}

uint64_t sim_events(const sim *s) { return s->nevents; }
void sim_stop(sim *s) { s->stopped = 1; }
void sim_resume(sim *s) { s->stopped = 0; }

int sim_at(sim *s, simtime_t when, event_fn fn, void *arg)
{
	assert(when >= s->hot.now);
	event e = {when, s->seq++, fn, arg};
	if (!s->nfront) {
		if (s->nheap && !ev_less(&e, &s->heap[0]))
			return heap_push(s, e);
		s->front = e;
		s->nfront = 1;
		return 0;
	}
	if (!ev_less(&e, &s->front))
		return heap_push(s, e);
	/* e comes first: the front event goes back with the others */
	int rc = heap_push(s, s->front);
	if (rc)
		return rc;
	s->front = e;
	return 0;
}

int sim_run(sim *s, uint64_t max_events, simtime_t until)
{
	/* an allocation that failed during an event (labmem.h) ends the call
	 * after that event: the run's caller fails it */
	uint64_t oom0 = lab_oom_events;
	for (uint64_t n = 0; n < max_events; n++) {
		if (lab_oom_events != oom0)
			return 0;
		if (s->stopped || (s->nheap == 0 && !s->nfront))
			return 1;
		simtime_t next = s->nfront ? s->front.t : s->heap[0].t;
		if (next > until)
			return 0;
		if (next >= s->rec_from)
			rec_begin(s);
		event e;
		if (s->nfront) {
			e = s->front;
			s->nfront = 0;
		} else {
			e = heap_pop(s);
		}
		s->hot.now = e.t;
		s->nevents++;
		e.fn(s, e.arg);
	}
	return s->stopped || (s->nheap == 0 && !s->nfront);
}

/* ------------------------------------------------------------------ tasks */

static void task_event(sim *s, void *arg)
{
	task *t = arg;
	t->queued = 0;
	if (t->done)
		return;
	if (t->clock < s->hot.now)
		t->clock = s->hot.now;
	s->cur = t;
	int r = t->step(s, t);
	s->cur = NULL;
	if (r == TASK_RUN) {
		t->queued = 1;
		sim_at(s, t->clock, task_event, t);
	} else if (r == TASK_DONE) {
		t->done = 1;
	}
	/* TASK_BLOCKED: a waitq or task_wake() reschedules it. */
}

task *task_spawn(sim *s, const char *name, task_step_fn step, void *ctx,
		 simtime_t start)
{
	if (s->ntasks == s->captasks) {
		int cap = s->captasks ? s->captasks * 2 : 16;
		task **v = lab_realloc(s->tasks, (size_t)cap * sizeof *v);
		if (!v)
			return NULL;
		s->tasks = v;
		s->captasks = cap;
	}
	task *t = lab_calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->id = s->ntasks;
	t->name = name;
	t->step = step;
	t->ctx = ctx;
	t->clock = start < s->hot.now ? s->hot.now : start;
	s->tasks[s->ntasks++] = t;
	t->queued = 1;
	if (sim_at(s, t->clock, task_event, t) != 0)
		return NULL;
	return t;
}

/*
 * Charge ns of CPU to a task. With a CPU limit the task takes the CPU that
 * frees up first; the delay before it gets one is runqueue time.
 */
/* The busy CPUs' heap. An entry names the task running on it while that
 * is the task's current CPU, and the task knows the entry's place
 * (cpu_slot - 1). */
static void cpu_put(sim *s, int i, cpu_ent e)
{
	s->cpu_free[i] = e;
	if (e.owner)
		e.owner->cpu_slot = i + 1;
}

static void cpu_sift_down(sim *s, int i)
{
	cpu_ent *h = s->cpu_free, v = h[i];
	int n = s->nbusy;
	for (;;) {
		int l = 2 * i + 1;
		if (l >= n)
			break;
		int m = l + 1 < n && h[l + 1].t < h[l].t ? l + 1 : l;
		if (h[m].t >= v.t)
			break;
		cpu_put(s, i, h[m]);
		i = m;
	}
	cpu_put(s, i, v);
}

/* Take the earliest CPU out of the heap. */
static void cpu_pop(sim *s)
{
	cpu_ent *h = s->cpu_free;
	if (h[0].owner)
		h[0].owner->cpu_slot = 0;
	cpu_ent last = h[--s->nbusy];
	if (s->nbusy) {
		h[0] = last;
		cpu_sift_down(s, 0);
	}
}

/* t runs on a CPU until v: its current CPU. */
static void cpu_push(sim *s, task *t, simtime_t v)
{
	cpu_ent *h = s->cpu_free;
	int i = s->nbusy++;
	while (i > 0 && h[(i - 1) / 2].t > v) {
		cpu_put(s, i, h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	cpu_put(s, i, (cpu_ent){v, t});
}

/*
 * Charge ns of CPU to a task. With a CPU limit, a task that keeps
 * computing keeps its CPU; one that comes back from a wait takes the CPU
 * that frees up first, from max(its clock, that time); the delay is
 * runqueue time. A CPU free since before `now` is as good as any other
 * such (every task's clock is at least `now`): those are only counted
 * (nidle); the busy ones are a min-heap.
 */
void task_cpu_limited(sim *s, task *t, uint64_t ns)
{
	assert(s->ncpus > 0);
	assert(t->clock >= s->hot.now);
	while (s->nbusy && s->cpu_free[0].t <= s->hot.now) {
		cpu_pop(s);
		s->nidle++;
	}
	t->cpu_ns += ns;
	int k = t->cpu_slot - 1;
	if (k >= 0 && s->cpu_free[k].t == t->clock) {
		/* still on its CPU: it is busy longer */
		t->clock += ns;
		s->cpu_free[k].t = t->clock;
		cpu_sift_down(s, k);
		return;
	}
	if (k >= 0) {
		/* it waited: that CPU is no longer its own */
		s->cpu_free[k].owner = NULL;
		t->cpu_slot = 0;
	}
	simtime_t start = t->clock;
	if (s->nidle) {
		s->nidle--;
	} else {
		if (s->cpu_free[0].t > start) {
			t->runq_ns += s->cpu_free[0].t - start;
			start = s->cpu_free[0].t;
		}
		cpu_pop(s);
	}
	t->clock = start + ns;
	cpu_push(s, t, t->clock);
}

void task_park(task *t, waitq *q)
{
	assert(!t->wq_next && q->tail != t);
	t->parked_at = t->clock;
	t->wq_next = NULL;
	if (q->tail)
		q->tail->wq_next = t;
	else
		q->head = t;
	q->tail = t;
	q->len++;
}

void task_wake(sim *s, task *t, simtime_t at)
{
	if (t->done || t->queued)
		return;
	if (at < s->hot.now)
		at = s->hot.now;
	task_wait_until(t, at);
	t->queued = 1;
	sim_at(s, t->clock, task_event, t);
}

int waitq_wake_one(sim *s, waitq *q, simtime_t at)
{
	task *t = q->head;
	if (!t)
		return 0;
	q->head = t->wq_next;
	if (!q->head)
		q->tail = NULL;
	t->wq_next = NULL;
	q->len--;
	task_wake(s, t, at);
	return 1;
}

int waitq_wake_all_slow(sim *s, waitq *q, simtime_t at)
{
	int n = 0;
	while (waitq_wake_one(s, q, at))
		n++;
	return n;
}

/* Timeline locks and task_wait_until are inline, in sim.h. */

/* ------------------------------------------------ counters, series, trace */

static uint8_t *name_hint(uint8_t *hints, const char *name)
{
	uintptr_t a = (uintptr_t)name;
	return &hints[(a ^ (a >> 6) ^ (a >> 12)) % NAME_HINTS];
}

static int name_index(char (*names)[40], int *n, const char *name, uint8_t *hints)
{
	uint8_t *h = name_hint(hints, name);
	if (*h < *n && strcmp(names[*h], name) == 0)
		return *h;
	for (int i = 0; i < *n; i++)
		if (strcmp(names[i], name) == 0) {
			*h = (uint8_t)i;
			return i;
		}
	if (*n >= MAX_NAMED)
		return -1;
	snprintf(names[*n], 40, "%s", name);
	*h = (uint8_t)*n;
	return (*n)++;
}

int sim_counter_id(sim *s, const char *name)
{
	return name_index(s->counter_names, &s->hot.ncounters, name, s->counter_hint);
}

int64_t sim_counter(const sim *s, const char *name)
{
	for (int i = 0; i < s->hot.ncounters; i++)
		if (strcmp(s->counter_names[i], name) == 0)
			return s->counters[i];
	return 0;
}

int sim_series_id(sim *s, const char *name)
{
	uint8_t *h = name_hint(s->series_hint, name);
	if (*h < s->hot.nseries && strcmp(s->series[*h]->name, name) == 0)
		return *h;
	for (int i = 0; i < s->hot.nseries; i++)
		if (strcmp(s->series[i]->name, name) == 0) {
			*h = (uint8_t)i;
			return i;
		}
	if (s->hot.nseries >= MAX_NAMED)
		return -1;
	series *se = lab_calloc(1, sizeof *se);
	if (!se)
		return -1;
	snprintf(se->name, sizeof se->name, "%s", name);
	s->gate[s->hot.nseries] = (sim_series_gate){ .stride = 1, .skip = 0 };
	*h = (uint8_t)s->hot.nseries;
	s->series[s->hot.nseries] = se;
	return s->hot.nseries++;
}

/* Keep one point in `stride` (sim_series_add's test); when full, halve
 * the points and double the stride, so a series always spans the run in
 * bounded memory. */
void sim_series_put(sim *s, int id, simtime_t t, double v)
{
	series *se = s->series[id];
	sim_series_gate *g = &s->gate[id];
	if (se->n == SERIES_CAP) {
		uint32_t j = 0;
		for (uint32_t i = 0; i < se->n; i += 2, j++) {
			se->t[j] = se->t[i];
			se->v[j] = se->v[i];
		}
		se->n = j;
		g->stride *= 2;
		g->skip = 1;
	}
	se->t[se->n] = (double)t;
	se->v[se->n] = v;
	se->n++;
}

/* Whether `name` is one of the comma-separated `list`. */
static int name_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && strncmp(p, name, n) == 0)
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

int sim_trace_kind_args(sim *s, const char *name, const char *args)
{
	for (int i = 0; i < s->nkinds; i++)
		if (strcmp(s->kind_names[i], name) == 0)
			return i;
	if (s->nkinds >= MAX_NAMED)
		return -1;
	snprintf(s->kind_names[s->nkinds], 32, "%s", name);
	s->kind_args[s->nkinds] = args ? args : "a,b,c";
	s->rec_skip[s->nkinds] = (uint8_t)(s->rec_only[0] && !name_listed(s->rec_only, name));
	if (s->rec_op[0] && strcmp(s->rec_op, name) == 0)
		s->rec_op_kind = s->nkinds;
	return s->nkinds++;
}

int sim_trace_kind(sim *s, const char *name)
{
	return sim_trace_kind_args(s, name, NULL);
}

const char *sim_trace_kind_name(const sim *s, int kind)
{
	return kind >= 0 && kind < s->nkinds ? s->kind_names[kind] : "?";
}

int64_t sim_rec_fsno(sim *s) { return ++s->next_fsno; }
int64_t sim_rec_handle(sim *s) { return ++s->next_handle; }
uint64_t sim_rec_kept(const sim *s) { return s->rec_kept; }
uint64_t sim_rec_unkept(const sim *s) { return s->rec_unkept; }

int sim_rec_dumper(sim *s, sim_dump_fn fn, void *ctx)
{
	if (s->ndumpers >= MAX_DUMPERS)
		return LAB_ENOMEM;
	s->dumpers[s->ndumpers].fn = fn;
	s->dumpers[s->ndumpers].ctx = ctx;
	s->ndumpers++;
	return 0;
}

void sim_rec_dumper_remove(sim *s, void *ctx)
{
	for (int i = 0; i < s->ndumpers; i++)
		if (s->dumpers[i].ctx == ctx) {
			memmove(&s->dumpers[i], &s->dumpers[i + 1],
				(size_t)(s->ndumpers - i - 1) * sizeof s->dumpers[0]);
			s->ndumpers--;
			return;
		}
}

/* The recording's start: on, then every structure listed as it is. */
static void rec_begin(sim *s)
{
	s->rec_from = SIMTIME_MAX;
	if (s->rec_state != 1)
		return;
	s->rec_state = 2;
	s->hot.rec_on = 1;
	s->hot.rec_ops = 1;
	/* the listing belongs to no task, even when an operation's start
	 * begins it in the middle of a task's step */
	const task *cur = s->cur;
	s->cur = NULL;
	for (int i = 0; i < s->ndumpers; i++)
		s->dumpers[i].fn(s, s->dumpers[i].ctx);
	s->cur = cur;
}

int sim_record_start(sim *s, simtime_t from, uint64_t max_events)
{
	if (max_events == 0)
		return LAB_EINVAL;
	if (s->rec_state)
		return LAB_ESTATE;
	size_t words = 4096;
	s->rec = lab_try_realloc(NULL, words * sizeof *s->rec);
	if (!s->rec)
		return LAB_ENOMEM;
	s->rec_cap = words;
	s->rec_max = max_events;
	s->rec_state = 1;
	s->rec_from = from;
	s->rec_t0 = from > s->hot.now ? from : s->hot.now;
	if (from <= s->hot.now)
		rec_begin(s);
	return 0;
}

int sim_record_at_op(sim *s, const char *op, uint64_t nth, uint64_t max_events)
{
	if (!op || strncmp(op, "op:", 3) != 0 || strlen(op) >= sizeof s->rec_op)
		return LAB_EINVAL;
	int rc = sim_record_start(s, SIMTIME_MAX, max_events);
	if (rc)
		return rc;
	s->rec_t0 = 0; /* until it starts */
	snprintf(s->rec_op, sizeof s->rec_op, "%s", op);
	s->rec_op_kind = -1;
	for (int i = 0; i < s->nkinds; i++)
		if (strcmp(s->kind_names[i], op) == 0)
			s->rec_op_kind = i;
	s->rec_op_nth = nth;
	s->rec_op_seen = 0;
	s->hot.rec_ops = 1;
	return 0;
}

int sim_record_only(sim *s, const char *names)
{
	if (s->rec_state >= 2)
		return LAB_ESTATE;
	if (names && strlen(names) >= sizeof s->rec_only)
		return LAB_EINVAL;
	snprintf(s->rec_only, sizeof s->rec_only, "%s", names ? names : "");
	for (int i = 0; i < s->nkinds; i++)
		s->rec_skip[i] = (uint8_t)(s->rec_only[0] && !name_listed(s->rec_only, s->kind_names[i]));
	return 0;
}

int sim_record_state(const sim *s)
{
	return s->rec_state;
}

/* The recording is full (or out of memory): from now on, count only. */
static void rec_stop(sim *s, int short_of_memory)
{
	s->rec_state = 3;
	s->rec_short = short_of_memory;
}

void sim_rec_at(sim *s, int kind, int taskid, simtime_t at, int n, const int64_t *args)
{
	if (kind < 0)
		return;
	if (!s->hot.rec_on) {
		/* waiting for an operation: this may be it */
		if (s->rec_state != 1 || kind != s->rec_op_kind || s->rec_op_seen++ != s->rec_op_nth)
			return;
		s->rec_t0 = s->hot.now;
		rec_begin(s);
	}
	if (kind < MAX_NAMED && s->rec_skip[kind])
		return;
	if (s->rec_state != 2) {
		s->rec_unkept++;
		return;
	}
	if (n > SIM_REC_MAXARGS)
		n = SIM_REC_MAXARGS;
	if (s->rec_kept >= s->rec_max) {
		rec_stop(s, 0);
		s->rec_unkept++;
		return;
	}
	size_t need = s->rec_len + 2 + (size_t)n;
	if (need > s->rec_cap) {
		size_t cap = s->rec_cap * 2;
		while (cap < need)
			cap *= 2;
		uint64_t *r = lab_try_realloc(s->rec, cap * sizeof *r);
		if (!r) {
			rec_stop(s, 1);
			s->rec_unkept++;
			return;
		}
		s->rec = r;
		s->rec_cap = cap;
	}
	uint64_t *w = &s->rec[s->rec_len];
	w[0] = at;
	w[1] = (uint64_t)(uint16_t)kind | (uint64_t)(uint16_t)(taskid + 1) << 16 |
	       (uint64_t)n << 32;
	for (int i = 0; i < n; i++)
		w[2 + i] = (uint64_t)args[i];
	s->rec_len = need;
	s->rec_kept++;
	if (at > s->rec_last)
		s->rec_last = at;
}

void sim_rec(sim *s, int kind, const task *t, int n, const int64_t *args)
{
	if (!t)
		t = s->cur; /* code that was given no task runs in this one's step */
	simtime_t at = t && t->clock > s->hot.now ? t->clock : s->hot.now;
	sim_rec_at(s, kind, t ? t->id : -1, at, n, args);
}

void sim_trace(sim *s, int kind, int taskid, int64_t a, int64_t b, int64_t c)
{
	if (!sim_recording(s))
		return;
	const int64_t args[3] = { a, b, c };
	simtime_t at = s->hot.now;
	if (taskid >= 0 && taskid < s->ntasks && s->tasks[taskid]->clock > at)
		at = s->tasks[taskid]->clock;
	sim_rec_at(s, kind, taskid, at, 3, args);
}

int sim_rec_next(const sim *s, sim_rec_it *it, sim_rec_ev *ev)
{
	if (it->pos >= s->rec_len)
		return 0;
	const uint64_t *w = &s->rec[it->pos];
	ev->t = w[0];
	ev->kind = (int)(w[1] & 0xffff);
	ev->task = (int)((w[1] >> 16) & 0xffff) - 1;
	ev->n = (int)(w[1] >> 32);
	for (int i = 0; i < ev->n; i++)
		ev->a[i] = (int64_t)w[2 + i];
	it->pos += 2 + (size_t)ev->n;
	return 1;
}

/* An integer written at p, fast (a recording is millions of them);
 * returns the end. */
static char *put_int(char *p, int64_t v)
{
	char b[24];
	int i = 24;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		b[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*p++ = '-';
	memcpy(p, b + i, (size_t)(24 - i));
	return p + (24 - i);
}

/*
 * {"recording":bool, "from_ns", "complete":bool, "kept", "unkept",
 *  "max_events", "last_ns", "short_of_memory":bool,
 *  "kinds":[{"name","args":[..]}], "tasks":[name by id],
 *  "next": events kept so far, "events":[[t, kind, task, args...],...]}:
 * the events numbered after `since` (from 1: since = 0 gives all), next =
 * the last one's number, to pass as the next call's since.
 */
void sim_trace_json(const sim *s, uint64_t since, strbuf *out)
{
	js_obj(out);
	js_kbool(out, "recording", s->rec_state >= 2);
	js_kint(out, "from_ns", (int64_t)s->rec_t0);
	js_kbool(out, "complete", s->rec_state >= 2 && s->rec_unkept == 0);
	js_kint(out, "kept", (int64_t)s->rec_kept);
	js_kint(out, "unkept", (int64_t)s->rec_unkept);
	js_kint(out, "max_events", (int64_t)s->rec_max);
	js_kint(out, "last_ns", (int64_t)s->rec_last);
	js_kbool(out, "short_of_memory", s->rec_short);
	js_key(out, "kinds");
	js_arr(out);
	for (int i = 0; i < s->nkinds; i++) {
		js_obj(out);
		js_kstr(out, "name", s->kind_names[i]);
		js_key(out, "args");
		js_arr(out);
		const char *a = s->kind_args[i];
		while (*a) {
			char nm[40];
			size_t k = 0;
			while (*a && *a != ',' && k + 1 < sizeof nm)
				nm[k++] = *a++;
			nm[k] = 0;
			js_str(out, nm);
			if (*a == ',')
				a++;
		}
		js_arr_end(out);
		js_obj_end(out);
	}
	js_arr_end(out);
	js_key(out, "tasks");
	js_arr(out);
	for (int i = 0; i < s->ntasks; i++)
		js_str(out, s->tasks[i]->name ? s->tasks[i]->name : "task");
	js_arr_end(out);
	js_kint(out, "next", (int64_t)s->rec_kept);
	js_key(out, "events");
	js_arr(out);
	sim_rec_it it = {0};
	sim_rec_ev ev;
	for (uint64_t q = 0; sim_rec_next(s, &it, &ev); q++) {
		if (q < since)
			continue;
		/* one row, built here and appended at once */
		char row[(SIM_REC_MAXARGS + 3) * 22 + 4], *p = row;
		*p++ = '[';
		p = put_int(p, (int64_t)ev.t);
		*p++ = ',';
		p = put_int(p, ev.kind);
		*p++ = ',';
		p = put_int(p, ev.task);
		for (int i = 0; i < ev.n; i++) {
			*p++ = ',';
			p = put_int(p, ev.a[i]);
		}
		*p++ = ']';
		*p = 0;
		js_raw(out, row);
	}
	js_arr_end(out);
	js_obj_end(out);
}

/* {"name":{"t":[..ns..],"v":[..]},...} */
void sim_series_json(const sim *s, strbuf *out)
{
	js_obj(out);
	for (int i = 0; i < s->hot.nseries; i++) {
		const series *se = s->series[i];
		js_key(out, se->name);
		js_obj(out);
		js_key(out, "t");
		js_arr(out);
		for (uint32_t j = 0; j < se->n; j++)
			js_num(out, se->t[j]);
		js_arr_end(out);
		js_key(out, "v");
		js_arr(out);
		for (uint32_t j = 0; j < se->n; j++)
			js_num(out, se->v[j]);
		js_arr_end(out);
		js_obj_end(out);
	}
	js_obj_end(out);
}

void sim_counters_json(const sim *s, strbuf *out)
{
	js_obj(out);
	for (int i = 0; i < s->hot.ncounters; i++)
		js_kint(out, s->counter_names[i], s->counters[i]);
	js_obj_end(out);
}
