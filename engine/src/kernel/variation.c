/*
 * variation.c - the sources of run-to-run variation (variation.def) and a
 * run's draws of them. See variation.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "labmem.h"
#include "strbuf.h"
#include "variation.h"

static const var_desc table[V_COUNT] = {
#define VAR(id, nm, kind, dist, a, b, on, tag, varies, source) \
	{ nm, kind, dist, a, b, on, tag, varies, source },
#include "variation.def"
#undef VAR
};

typedef struct var_drive {
	const char *profile;
	double rd, wr;
	const char *source;
} var_drive;

static const var_drive drives[] = {
#define VAR(id, nm, kind, dist, a, b, on, tag, varies, source)
#define VAR_DEVICE(prof, rd, wr, source) { prof, rd, wr, source },
#include "variation.def"
#undef VAR_DEVICE
#undef VAR
	{ NULL, 0, 0, NULL },
};

int var_device_sigma(const char *profile, double *rd, double *wr)
{
	*rd = *wr = 0.0;
	for (const var_drive *d = drives; profile && d->profile; d++)
		if (!strcmp(d->profile, profile)) {
			*rd = d->rd;
			*wr = d->wr;
			return 1;
		}
	return 0;
}

struct variation {
	var_mask on;
	prng rng[V_COUNT];     /* each source's own stream */
	double value[V_COUNT]; /* a level's or a phase's draw for this run */
	uint64_t seed[V_COUNT];
	/* var_ns_n's last n per source and the log-moments it gave: a pure
	 * function of the source's sigma and n, which a caller repeats (the
	 * same 47 write()s per file); 0: none yet */
	uint64_t sum_n[V_COUNT];
	double sum_s2[V_COUNT], sum_sg[V_COUNT];
};

const var_desc *var_desc_get(int id)
{
	return id >= 0 && id < V_COUNT ? &table[id] : NULL;
}

int var_find(const char *name)
{
	for (int i = 0; i < V_COUNT; i++)
		if (!strcmp(table[i].name, name))
			return i;
	return -1;
}

var_mask var_default_mask(void)
{
	var_mask m = 0;
	for (int i = 0; i < V_COUNT; i++)
		if (table[i].on)
			m |= (var_mask)1 << i;
	return m;
}

/* A refusal: msg, then the user's text quoted (strbuf.h sb_quote). */
static int refuse(char *err, size_t errlen, int code, const char *msg, const char *text)
{
	strbuf m;
	sb_init(&m);
	sb_puts(&m, msg);
	sb_quote(&m, text, 40);
	snprintf(err, errlen, "%s", m.buf && !m.oom ? m.buf : "bad variation setting");
	sb_free(&m);
	return code;
}

int var_parse(const char *value, var_mask *mask, char *err, size_t errlen)
{
	var_mask m = var_default_mask();
	const char *p = value;
	if (!*p) {
		snprintf(err, errlen, "variation takes on, off or source names (see: lab list)");
		return LAB_EINVAL;
	}
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char item[48];
		if (n == 0 || n >= sizeof item)
			return refuse(err, errlen, LAB_EINVAL,
				      "variation takes on, off or source names separated by commas, not ",
				      value);
		memcpy(item, p, n);
		item[n] = 0;
		if (!strcmp(item, "on")) {
			m = var_default_mask();
		} else if (!strcmp(item, "off")) {
			m = VAR_ALL_OFF;
		} else {
			int neg = item[0] == '-';
			int id = var_find(item + neg);
			if (id < 0)
				return refuse(err, errlen, LAB_ENOENT,
					      "no source of variation (see: lab list): ", item + neg);
			if (neg)
				m &= ~((var_mask)1 << id);
			else
				m |= (var_mask)1 << id;
		}
		p += n + (comma ? 1 : 0);
		if (comma && !*p)
			return refuse(err, errlen, LAB_EINVAL, "variation ends with a comma: ", value);
	}
	*mask = m;
	return 0;
}

void var_mask_str(var_mask mask, strbuf *out)
{
	if (mask == var_default_mask()) {
		sb_puts(out, "on");
		return;
	}
	sb_puts(out, "off");
	for (int i = 0; i < V_COUNT; i++)
		if (mask & ((var_mask)1 << i))
			sb_printf(out, ",%s", table[i].name);
}

/* The first draw of a source's stream, as the run's level or phase. */
/* sqrt of a positive double by Newton's method (libm's sqrt is exact
 * everywhere, but the engine keeps to its own math: detmath.c) */
static double sqrt_pos(double x)
{
	double r = x > 1 ? x : 1;
	for (int i = 0; i < 60; i++) {
		double nr = 0.5 * (r + x / r);
		if (nr == r)
			break;
		r = nr;
	}
	return r;
}

static double first_draw(const var_desc *d, prng *p)
{
	switch (d->dist) {
	case VD_UNIFORM:
		/* 2^20 steps: the timer's phase was drawn this way (as a jiffy
		 * count below 2^20) before it was a source */
		return d->a + (d->b - d->a) * ((double)prng_below(p, 1u << 20) / (double)(1u << 20));
	case VD_LOGNORMAL:
		return d->a * dm_exp(d->b * prng_normal(p));
	case VD_LOGNORMAL_M1:
		return dm_exp(d->b * prng_normal(p) - 0.5 * d->b * d->b);
	case VD_PER_DRIVE:
		return prng_normal(p);
	case VD_MECHANISM:
		break;
	}
	return 1.0;
}

/* A mix of the build's bits (splitmix64's finaliser): two patch sets that
 * differ in one bit key unrelated streams. */
static uint64_t build_key(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

int var_attach_build(sim *s, uint64_t seed, var_mask mask, uint64_t build)
{
	struct variation *v = lab_calloc(1, sizeof *v);
	if (!v)
		return LAB_ENOMEM;
	v->on = mask;
	for (int i = 0; i < V_COUNT; i++) {
		const var_desc *d = &table[i];
		int on = (mask >> i) & 1;
		/* off: the stream seed 1 has, so every run draws alike */
		v->seed[i] = (on ? seed : 1) ^ d->tag;
		if (d->kind == VK_BUILD)
			v->seed[i] ^= build_key(build);
		prng_seed(&v->rng[i], v->seed[i]);
		if (d->kind == VK_LEVEL || d->kind == VK_BUILD) {
			/* seed 1 is the fitted run: the median level (z = 0) */
			double med = d->dist == VD_PER_DRIVE ? 0.0 : d->a;
			v->value[i] = on && seed != 1 ? first_draw(d, &v->rng[i])
						      : (on || d->dist == VD_PER_DRIVE ? med : 1.0);
		} else if (d->kind == VK_PHASE) {
			v->value[i] = first_draw(d, &v->rng[i]);
		}
	}
	sim_set_variation(s, v);
	if ((mask >> V_CPU_BUILD) & 1)
		sim_set_cpu_level(s, v->value[V_CPU_BUILD]);
	return 0;
}

int var_attach(sim *s, uint64_t seed, var_mask mask)
{
	return var_attach_build(s, seed, mask, 0);
}

/* The run's draws, or NULL for a simulator without sources (all off). */
static struct variation *get(const sim *s)
{
	return s ? sim_variation(s) : NULL;
}

var_mask var_mask_of(const sim *s)
{
	struct variation *v = get(s);
	return v ? v->on : VAR_ALL_OFF;
}

int var_on(const sim *s, var_id id)
{
	return (int)((var_mask_of(s) >> id) & 1);
}

double var_level(const sim *s, var_id id)
{
	struct variation *v = get(s);
	return v && ((v->on >> id) & 1) ? v->value[id] : 1.0;
}

double var_z(const sim *s, var_id id)
{
	struct variation *v = get(s);
	return v && ((v->on >> id) & 1) ? v->value[id] : 0.0;
}

double var_phase(const sim *s, var_id id)
{
	struct variation *v = get(s);
	if (v)
		return v->value[id];
	prng p;
	prng_seed(&p, 1 ^ table[id].tag);
	return first_draw(&table[id], &p);
}

uint64_t var_ns(sim *s, var_id id, uint64_t ns)
{
	struct variation *v = get(s);
	if (!v || !((v->on >> id) & 1))
		return ns;
	double x = (double)ns * first_draw(&table[id], &v->rng[id]);
	return (uint64_t)(x + 0.5);
}

uint64_t var_ns_n(sim *s, var_id id, uint64_t ns, uint64_t n)
{
	struct variation *v = get(s);
	if (!v || !((v->on >> id) & 1) || n == 0)
		return ns * n;
	const var_desc *d = &table[id];
	if (d->dist != VD_LOGNORMAL_M1 || n == 1)
		return var_ns(s, id, ns * n);
	/* the mean of n draws of mean 1 and log-sd b: mean 1, variance
	 * (e^{b^2} - 1) / n, as a lognormal of those two moments */
	if (v->sum_n[id] != n) {
		double cv2 = (dm_exp(d->b * d->b) - 1.0) / (double)n;
		double s2 = dm_log(1.0 + cv2);
		v->sum_s2[id] = s2;
		v->sum_sg[id] = s2 > 0 ? sqrt_pos(s2) : 0.0;
		v->sum_n[id] = n;
	}
	double s2 = v->sum_s2[id], sg = v->sum_sg[id];
	double x = (double)(ns * n) * dm_exp(sg * prng_normal(&v->rng[id]) - 0.5 * s2);
	return (uint64_t)(x + 0.5);
}

uint64_t var_seed(const sim *s, var_id id)
{
	struct variation *v = get(s);
	return v ? v->seed[id] : 1 ^ table[id].tag;
}

static const char *kind_name(int k)
{
	switch (k) {
	case VK_LEVEL: return "level";
	case VK_JITTER: return "jitter";
	case VK_PHASE: return "phase";
	case VK_STREAM: return "stream";
	case VK_BUILD: return "build";
	}
	return "?";
}

static const char *dist_name(int d)
{
	switch (d) {
	case VD_UNIFORM: return "uniform";
	case VD_LOGNORMAL: return "lognormal";
	case VD_LOGNORMAL_M1: return "lognormal-mean1";
	case VD_MECHANISM: return "mechanism";
	case VD_PER_DRIVE: return "per-drive";
	}
	return "?";
}

void var_table_json(strbuf *out)
{
	js_arr(out);
	for (int i = 0; i < V_COUNT; i++) {
		const var_desc *d = &table[i];
		js_obj(out);
		js_kstr(out, "name", d->name);
		js_kstr(out, "kind", kind_name(d->kind));
		js_kstr(out, "dist", dist_name(d->dist));
		if (d->dist == VD_UNIFORM) {
			js_knum(out, "min", d->a);
			js_knum(out, "max", d->b);
		} else if (d->dist == VD_PER_DRIVE) {
			js_key(out, "drives");
			js_arr(out);
			for (const var_drive *dr = drives; dr->profile; dr++) {
				js_obj(out);
				js_kstr(out, "profile", dr->profile);
				js_knum(out, "read_sigma", dr->rd);
				js_knum(out, "write_sigma", dr->wr);
				js_kstr(out, "source", dr->source);
				js_obj_end(out);
			}
			js_arr_end(out);
		} else if (d->dist != VD_MECHANISM) {
			if (d->dist == VD_LOGNORMAL)
				js_knum(out, "median", d->a);
			js_knum(out, "sigma", d->b);
		}
		js_kbool(out, "on", d->on);
		js_kstr(out, "varies", d->varies);
		js_kstr(out, "source", d->source);
		js_obj_end(out);
	}
	js_arr_end(out);
}
