/*
 * variation.h - what a seed draws: the named sources of run-to-run
 * variation of variation.def, each with its distribution, its physical
 * source and a switch.
 *
 * A run's sources are attached to its simulator (var_attach, done by
 * lab_open from the run's `variation=` setting). Kernel code asks the
 * simulator it runs on; a simulator without them (a unit test's) answers
 * as if every source were off, i.e. the deterministic model. Each source
 * draws from its own PRNG stream (run seed ^ its tag), never from the
 * simulator's: switching one source leaves every other draw in place, and
 * `before` and `after` of one seed see the same levels and the same k-th
 * jitter.
 */
#ifndef VARIATION_H
#define VARIATION_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

struct strbuf;

typedef enum var_id {
#define VAR(id, name, kind, dist, a, b, on, tag, varies, source) V_##id,
#include "variation.def"
#undef VAR
	V_COUNT
} var_id;

enum var_kind { VK_LEVEL, VK_JITTER, VK_PHASE, VK_STREAM, VK_BUILD };
enum var_dist { VD_UNIFORM, VD_LOGNORMAL, VD_LOGNORMAL_M1, VD_MECHANISM, VD_PER_DRIVE };

typedef struct var_desc {
	const char *name;
	int kind, dist;
	double a, b;
	int on;          /* the default switch */
	uint64_t tag;
	const char *varies, *source;
} var_desc;

const var_desc *var_desc_get(int id); /* NULL past V_COUNT */
int var_find(const char *name);       /* id or -1 */

/* A set of sources switched on, one bit per var_id. */
typedef uint32_t var_mask;
var_mask var_default_mask(void);
#define VAR_ALL_OFF ((var_mask)0)

/* Parse the value of a run's `variation=` setting: comma-separated items,
 * each "on" (every source at its default switch), "off" (every source
 * off), NAME (this one on) or -NAME (this one off), applied left to right
 * from the defaults. Returns 0, or LAB_EINVAL / LAB_ENOENT with a one-line
 * message. */
int var_parse(const char *value, var_mask *mask, char *err, size_t errlen);
/* The mask as a `variation=` value: "on", "off", or "off,NAME,...". */
void var_mask_str(var_mask mask, struct strbuf *out);

/* Attach the sources of `mask` to a run's simulator, drawing each level
 * and phase once. `build` names the kernel build (its patch set's bits):
 * a VK_BUILD source draws from (seed ^ tag ^ a hash of build), so the two
 * kernels of one seed are two builds. When cpu_build is on, the simulator
 * multiplies every CPU charge by its level (sim_set_cpu_level). Returns 0
 * or LAB_ENOMEM. var_attach is var_attach_build with build 0. */
int var_attach_build(sim *s, uint64_t seed, var_mask mask, uint64_t build);
int var_attach(sim *s, uint64_t seed, var_mask mask);
var_mask var_mask_of(const sim *s); /* VAR_ALL_OFF without var_attach */
int var_on(const sim *s, var_id id);

/* VK_LEVEL, VK_BUILD: the run's multiplier (1 when off, and at seed 1). */
double var_level(const sim *s, var_id id);
/* VD_PER_DRIVE: the run's standard normal draw (0 when off, and at seed 1). */
double var_z(const sim *s, var_id id);
/* The device state's sigmas of a calibrated drive (variation.def
 * VAR_DEVICE), by profile name; 0 and 0 for a drive without a line.
 * Returns 1 when the drive has a line. */
int var_device_sigma(const char *profile, double *read_sigma, double *write_sigma);
/* VK_PHASE: the run's phase in [0, 1) (seed 1's when off). */
double var_phase(const sim *s, var_id id);
/* VK_JITTER: ns times a fresh draw of the source (exactly ns when off). */
uint64_t var_ns(sim *s, var_id id, uint64_t ns);
/* VK_JITTER: the sum of n events of ns each, in one draw (exactly n * ns
 * when off): a lognormal with the mean and variance of the sum of n
 * independent draws (for a loop of n identical calls, e.g. bonnie's 47
 * write()s of a file). */
uint64_t var_ns_n(sim *s, var_id id, uint64_t ns, uint64_t n);
/* VK_STREAM: the seed for the mechanism's own PRNG (seed 1's when off). */
uint64_t var_seed(const sim *s, var_id id);

/* The table as a JSON array, for `list --json` and the front end. */
void var_table_json(struct strbuf *out);

#endif /* VARIATION_H */
