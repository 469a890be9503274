/*
 * fitdrv.c - run the engine's fio experiment on a candidate device profile,
 * for engine/tools/fit-device.mjs. The fit searches with the engine itself
 * (bdev.c driven by exp_fio.c), so what it optimises is what
 * engine/tests/test_fio_fidelity.c checks: there is no second copy of the
 * device model to keep in step.
 *
 * stdin, one command per line:
 *   profile NAME KEY=VALUE ...   candidate: the compiled profile NAME with
 *                                these fields replaced (bdev_profile.h)
 *   tail rd|wr N Q1 M1 ... QN MN its service-time quantile table
 *   run RW BS IODEPTH NUMJOBS IOS SEED
 * Each run prints "IOPS P50_US P99_US" on stdout. Anything malformed ends
 * the driver with one line on stderr and exit 2.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdev_profile.h"
#include "exp.h"
#include "lab.h"

enum { F_INT, F_U32, F_DBL };

#define FIELD(name, kind) { #name, kind, offsetof(bdev_profile, name) }
static const struct {
	const char *name;
	int kind;
	size_t off;
} fields[] = {
	FIELD(max_queue, F_INT), FIELD(link_ns, F_DBL), FIELD(link_byte_ns, F_DBL),
	FIELD(nunits, F_INT), FIELD(chunk_bytes, F_U32), FIELD(rd_op_ns, F_DBL),
	FIELD(rd_byte_ns, F_DBL), FIELD(wr_op_ns, F_DBL), FIELD(wr_byte_ns, F_DBL),
	FIELD(rd_part_bytes, F_U32), FIELD(rd_page_op_ns, F_DBL),
	FIELD(rd_busy_frac, F_DBL), FIELD(planes, F_INT), FIELD(seq_op_ns, F_DBL),
	FIELD(seq_scatter, F_INT), FIELD(wcache, F_INT), FIELD(wr_ns, F_DBL),
	FIELD(wr_serial, F_INT), FIELD(cache_bytes, F_DBL), FIELD(drain_byte_ns, F_DBL),
	FIELD(seg_bytes, F_DBL), FIELD(gc_valid, F_DBL), FIELD(drain_sigma, F_DBL),
	FIELD(wr_link_ns, F_DBL),
	FIELD(defer_ns, F_DBL), FIELD(defer_max_ns, F_DBL), FIELD(defer_spread, F_DBL),
	FIELD(plp, F_INT),
	FIELD(flush_p50_ns, F_DBL), FIELD(flush_p99_ns, F_DBL), FIELD(host_ns, F_DBL),
};

static bdev_profile cand;
static char cand_name[64];
static double tq[2][256], tm[2][256];

static void die(const char *what, const char *tok)
{
	fprintf(stderr, "fitdrv: %s%s%s\n", what, tok ? ": " : "", tok ? tok : "");
	exit(2);
}

static double num(const char *tok)
{
	char *end;
	double v = strtod(tok ? tok : "", &end);
	if (!tok || end == tok || *end)
		die("not a number", tok);
	return v;
}

static void set_field(const char *kv)
{
	const char *eq = strchr(kv, '=');
	if (!eq)
		die("expected KEY=VALUE", kv);
	size_t n = (size_t)(eq - kv);
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		if (strlen(fields[i].name) != n || strncmp(fields[i].name, kv, n) != 0)
			continue;
		double v = num(eq + 1);
		char *at = (char *)&cand + fields[i].off;
		if (fields[i].kind == F_INT)
			*(int *)at = (int)v;
		else if (fields[i].kind == F_U32)
			*(uint32_t *)at = (uint32_t)v;
		else
			*(double *)at = v;
		return;
	}
	die("unknown profile field", kv);
}

static void cmd_profile(char *save)
{
	const char *name = strtok_r(NULL, " \t", &save);
	const bdev_profile *base = name ? bdev_profile_find(name) : NULL;
	if (!base)
		die("unknown profile", name);
	bdev_profile_override(NULL);
	cand = *base;
	snprintf(cand_name, sizeof cand_name, "%s", name);
	cand.name = cand_name;
	for (const char *kv; (kv = strtok_r(NULL, " \t", &save));)
		set_field(kv);
	bdev_profile_override(&cand);
}

static void cmd_tail(char *save)
{
	const char *which = strtok_r(NULL, " \t", &save);
	int w = which && strcmp(which, "rd") == 0 ? 0 : which && strcmp(which, "wr") == 0 ? 1 : -1;
	if (w < 0)
		die("tail: expected rd or wr", which);
	int n = (int)num(strtok_r(NULL, " \t", &save));
	if (n < 0 || n > 256)
		die("tail: bad length", NULL);
	for (int i = 0; i < n; i++) {
		tq[w][i] = num(strtok_r(NULL, " \t", &save));
		tm[w][i] = num(strtok_r(NULL, " \t", &save));
	}
	bdev_qtable t = { n, n ? tq[w] : NULL, n ? tm[w] : NULL };
	if (w == 0)
		cand.rd_tail = t;
	else
		cand.wr_tail = t;
}

static double metric(const lab_run *r, const char *name)
{
	for (int i = 0; i < r->exp->nmetrics; i++)
		if (strcmp(r->exp->metrics[i].name, name) == 0)
			return r->m_set[i] ? r->m[i] : -1;
	return -1;
}

static void cmd_run(char *save)
{
	const char *f[6];
	for (int i = 0; i < 6; i++)
		if (!(f[i] = strtok_r(NULL, " \t", &save)))
			die("run: expected RW BS IODEPTH NUMJOBS IOS SEED", NULL);
	if (!cand.name)
		die("run before profile", NULL);
	char params[256];
	/* the fit is of the deterministic model: no per-run drive state
	 * (variation.def), which the replicate runs measure apart */
	snprintf(params, sizeof params,
		 "device=%s\nrw=%s\nbs=%s\niodepth=%s\nnumjobs=%s\nios=%s\nvariation=off",
		 cand.name, f[0], f[1], f[2], f[3], f[4]);
	lab_run *r = NULL;
	char *msg = NULL;
	if (lab_open("fio", "base", params, (uint32_t)num(f[5]), 0, &r, &msg) != 0)
		die("run", msg ? msg : "lab_open failed");
	int done = 0;
	while (!done)
		if (lab_step(r, 1u << 22, &done) != 0)
			die("run: lab_step failed", NULL);
	printf("%.17g %.17g %.17g\n", metric(r, "iops"), metric(r, "clat_p50_us"),
	       metric(r, "clat_p99_us"));
	lab_close(r);
}

int main(void)
{
	char line[16384];
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\r\n")] = 0;
		char *save = NULL;
		const char *cmd = strtok_r(line, " \t", &save);
		if (!cmd)
			continue;
		if (strcmp(cmd, "profile") == 0)
			cmd_profile(save);
		else if (strcmp(cmd, "tail") == 0)
			cmd_tail(save);
		else if (strcmp(cmd, "run") == 0)
			cmd_run(save);
		else
			die("unknown command", cmd);
	}
	return 0;
}
