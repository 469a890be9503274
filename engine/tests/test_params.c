/*
 * test_params.c - the edges of the public API a hostile caller reaches:
 *   - every declared parameter range is finite, integers within +-2^53 and
 *     printed exactly by `list` (so a value that passes is exact in a
 *     double, every cast of it defined, and the page validates against the
 *     true range);
 *   - one parser: the range is checked after the K/M/G suffix, any number
 *     of digits is an integer (too large is out of range, not a wrap);
 *   - a refusal echoes the user's text quoted and escaped, on one line;
 *   - lab_trace_json refuses NaN, infinities and since >= 2^64, and returns
 *     the events strictly after `since`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "lab.h"
#include "sim.h"
#include "strbuf.h"
#include "t.h"

/* lab_open's code for one setting of an experiment (the run closed). */
static int open_rc(const char *exp, const char *variant, const char *params, char **msg)
{
	lab_run *r = NULL;
	int rc = lab_open(exp, variant, params, 1, 0, &r, msg);
	lab_close(r);
	return rc;
}

/* The value exp_parse_params stores for one setting, or NAN if refused. */
static double parsed(const char *exp, const char *setting, int *rc)
{
	const lab_exp *e = exp_find(exp);
	double p[EXP_MAX_PARAMS];
	char err[200];
	*rc = exp_parse_params(e, setting, p, err, sizeof err);
	if (*rc)
		return NAN;
	const char *eq = strchr(setting, '=');
	for (int i = 0; i < exp_nparams(e); i++)
		if (!strncmp(exp_param_desc(e, i)->name, setting, (size_t)(eq - setting)) &&
		    !exp_param_desc(e, i)->name[eq - setting])
			return p[i];
	return NAN;
}

/* One line of printable text: no control byte at all. */
static int one_clean_line(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

static void registry_ranges(void)
{
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		for (int j = 0; j < exp_nparams(e); j++) {
			const param_desc *d = exp_param_desc(e, j);
			if (d->type == PT_ENUM || d->type == PT_BOOL)
				continue;
			int ok = isfinite(d->min) && isfinite(d->max) && d->min < d->max;
			if (d->type != PT_FLOAT)
				ok = ok && d->min == floor(d->min) && d->max == floor(d->max) &&
				     fabs(d->min) <= 9007199254740992.0 && fabs(d->max) <= 9007199254740992.0;
			/* `list` prints min, max and the default as the engine holds them */
			double v[3] = { d->min, d->max, d->def };
			for (int k = 0; k < 3; k++) {
				strbuf sb;
				sb_init(&sb);
				sb_num(&sb, v[k]);
				if (!(d->type == PT_INT_OR_INF && k == 2 && isinf(v[k])))
					ok = ok && strtod(sb.buf, NULL) == v[k];
				sb_free(&sb);
			}
			if (!ok)
				fprintf(stderr, "%s.%s: range [%g, %g] is not finite, exact and ordered\n",
					e->name, d->name, d->min, d->max);
			CHECK(ok);
		}
	}
}

static void parser_table(void)
{
	int rc;
	/* the silent wrap: refused, never 0 or 2^64 mod anything */
	CHECK(isnan(parsed("qgroup-drop", "threshold=17179869184G", &rc)));
	CHECK_EQ(rc, LAB_ERANGE);
	CHECK(isnan(parsed("qgroup-drop", "threshold=9223372036854775808", &rc)));
	CHECK_EQ(rc, LAB_ERANGE); /* an integer, too large: not "not an integer" */
	CHECK(isnan(parsed("qgroup-drop", "threshold=99999999999999999999999999999999999999", &rc)));
	CHECK_EQ(rc, LAB_ERANGE);
	CHECK(parsed("qgroup-drop", "threshold=9007199254740991", &rc) == 9007199254740991.0);
	CHECK(isnan(parsed("qgroup-drop", "threshold=9007199254740992", &rc)));
	CHECK(isnan(parsed("qgroup-drop", "threshold=16000000000G", &rc)));
	CHECK_EQ(rc, LAB_ERANGE);
	CHECK(parsed("qgroup-drop", "threshold=4K", &rc) == 4096);
	CHECK(parsed("qgroup-drop", "threshold=8388607G", &rc) == 8388607.0 * 1073741824.0);
	CHECK(isnan(parsed("qgroup-drop", "threshold=8388608G", &rc))); /* 2^53 */
	CHECK(isinf(parsed("qgroup-drop", "threshold=inf", &rc)));
	CHECK(isinf(parsed("qgroup-drop", "threshold=infinity", &rc)));
	CHECK(isnan(parsed("qgroup-drop", "threshold=Inf", &rc)));
	CHECK_EQ(rc, LAB_EINVAL);
	/* the range after the suffix: 1K > files' 8192? no; 9K is */
	CHECK(parsed("qgroup-drop", "files=8K", &rc) == 8192);
	CHECK(isnan(parsed("qgroup-drop", "files=9K", &rc)));
	CHECK_EQ(rc, LAB_ERANGE);
	/* 16G of a 64-bit overflow in the suffix, then the sign */
	CHECK(isnan(parsed("qgroup-drop", "files=-17179869184G", &rc)));
	CHECK_EQ(rc, LAB_ERANGE);
	CHECK(parsed("qgroup-drop", "max_inline=-0", &rc) == 0 && rc == 0);
	CHECK(!signbit(parsed("qgroup-drop", "max_inline=-0", &rc)));
	CHECK(parsed("qgroup-drop", "max_inline=+12", &rc) == 12);
	CHECK(parsed("qgroup-drop", "max_inline=0000000000000000000000000000000000000000012", &rc) == 12);
	/* no spaces, no hex, no trailing junk, no empty value */
	const char *bad_int[] = { "files= 12", "files=12 ", "files=0x10", "files=1.0", "files=1e3",
				  "files=12KB", "files=K", "files=", "files=--1", "files=1_000" };
	for (size_t i = 0; i < sizeof bad_int / sizeof *bad_int; i++) {
		CHECK(isnan(parsed("qgroup-drop", bad_int[i], &rc)));
		CHECK_EQ(rc, LAB_EINVAL);
	}
	/* floats: the grammar, overflow as out of range, the open minimum */
	CHECK(parsed("qgroup-drop", "shared_fraction=.5", &rc) == 0.5);
	CHECK(parsed("qgroup-drop", "shared_fraction=5e-1", &rc) == 0.5);
	CHECK(parsed("qgroup-drop", "shared_fraction=1.", &rc) == 1);
	CHECK(parsed("qgroup-drop", "shared_fraction=1e-400", &rc) == 0);
	const char *bad_float[] = { "shared_fraction=0x1p-1", "shared_fraction=nan", "shared_fraction=inf",
				    "shared_fraction=.", "shared_fraction=1e", "shared_fraction= 1",
				    "shared_fraction=1,5" };
	for (size_t i = 0; i < sizeof bad_float / sizeof *bad_float; i++) {
		CHECK(isnan(parsed("qgroup-drop", bad_float[i], &rc)));
		CHECK_EQ(rc, LAB_EINVAL);
	}
	CHECK(isnan(parsed("qgroup-drop", "shared_fraction=1e999", &rc)));
	CHECK_EQ(rc, LAB_ERANGE);
	CHECK(isnan(parsed("qgroup-drop", "shared_fraction=-1e999", &rc)));
	CHECK_EQ(rc, LAB_ERANGE);
	CHECK(isnan(parsed("sparse-cp", "wb_interval_s=0", &rc)));
	CHECK_EQ(rc, LAB_ERANGE);
	/* a setting of any length parses: many digits are a range error */
	char longv[600];
	snprintf(longv, sizeof longv, "files=%0500d", 7);
	CHECK(parsed("qgroup-drop", longv, &rc) == 7);
	memset(longv, '9', sizeof longv - 1);
	longv[sizeof longv - 1] = 0;
	memcpy(longv, "files=", 6);
	CHECK(isnan(parsed("qgroup-drop", longv, &rc)));
	CHECK_EQ(rc, LAB_ERANGE);
}

static void quoting(void)
{
	char *msg = NULL;
	CHECK_EQ(open_rc("qgroup-drop", "after", "device=a\x1b[31mb\r\t\x7f", &msg), LAB_EINVAL);
	CHECK(msg && one_clean_line(msg));
	CHECK(msg && strstr(msg, "'a\\x1b[31mb\\r\\t\\x7f'"));
	lab_free(msg);
	msg = NULL;
	/* C1 controls, bidi overrides and invalid UTF-8 are escaped; é is not */
	CHECK_EQ(open_rc("fio", "base", "rw=\xc2\x9b" "1m\xe2\x80\xae\xff\xc3\xa9", &msg), LAB_EINVAL);
	CHECK(msg && strstr(msg, "'\\u{009b}1m\\u{202e}\\xff\xc3\xa9'"));
	lab_free(msg);
	msg = NULL;
	CHECK_EQ(open_rc("no\nsuch", "base", "", &msg), LAB_ENOENT);
	CHECK(msg && one_clean_line(msg) && strstr(msg, "'no\\nsuch'"));
	lab_free(msg);
	msg = NULL;
	CHECK_EQ(open_rc("fio", "b'a\\se", "", &msg), LAB_EINVAL);
	CHECK(msg && strstr(msg, "'b\\'a\\\\se'"));
	lab_free(msg);
	msg = NULL;
	CHECK_EQ(open_rc("fio", "base", "no_such\x1b=1", &msg), LAB_ENOENT);
	CHECK(msg && one_clean_line(msg));
	lab_free(msg);
	msg = NULL;
	/* a long value is cut, and says so */
	char longv[400];
	memset(longv, 'x', sizeof longv - 1);
	longv[sizeof longv - 1] = 0;
	memcpy(longv, "rw=", 3);
	CHECK_EQ(open_rc("fio", "base", longv, &msg), LAB_EINVAL);
	CHECK(msg && strlen(msg) < 200 && strstr(msg, "'..."));
	lab_free(msg);

	/* the CLI: one line, nothing raw */
	const char *argv[] = { "lab", "run", "fio", "--set", "rw=\x1b]0;pwned\x07" };
	char *out = NULL, *err = NULL;
	CHECK_EQ(lab_cli(5, argv, &out, &err), 2);
	CHECK(err && strlen(err) > 1 && err[strlen(err) - 1] == '\n');
	if (err && *err)
		err[strlen(err) - 1] = 0;
	CHECK(err && one_clean_line(err));
	lab_free(out);
	lab_free(err);
	const char *argv2[] = { "lab", "frob\nnicate" };
	CHECK_EQ(lab_cli(2, argv2, &out, &err), 2);
	CHECK(err && strchr(err, '\n') == err + strlen(err) - 1);
	lab_free(out);
	lab_free(err);
	/* bare `lab`: one line that names lab --help */
	CHECK_EQ(lab_cli(1, argv, &out, &err), 2);
	CHECK(err && strchr(err, '\n') == err + strlen(err) - 1 && strstr(err, "lab --help"));
	CHECK(out && !*out);
	lab_free(out);
	lab_free(err);
}

static void trace_edges(void)
{
	lab_run *r = NULL;
	char *doc = NULL;
	CHECK_EQ(lab_open("fio", "base", "ios=100", 1, 0, &r, NULL), 0);
	if (!r)
		return;
	double bad[] = { NAN, -NAN, INFINITY, -INFINITY, -1, -0.5, 18446744073709551616.0, 1e300 };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		doc = NULL;
		CHECK_EQ(lab_trace_json(r, bad[i], &doc), LAB_EINVAL);
		CHECK(doc == NULL);
	}
	/* the largest double below 2^64 is a valid (if empty) since */
	CHECK_EQ(lab_trace_json(r, 18446744073709549568.0, &doc), 0);
	CHECK(doc && strstr(doc, "\"events\":[]"));
	lab_free(doc);
	/* three events: numbered 1, 2, 3; since = k gives those after k */
	CHECK_EQ(lab_record(r, 0, 5), 0);
	int kind = sim_trace_kind(r->sim, "probe");
	for (int i = 0; i < 3; i++)
		sim_trace(r->sim, kind, -1, 10 + i, 0, 0);
	char want[4][40];
	for (int k = 0; k < 3; k++)
		snprintf(want[k], sizeof want[k], "[[0,%d,-1,%d,0,0]", kind, 10 + k);
	snprintf(want[3], sizeof want[3], "[]");
	for (int since = 0; since <= 3; since++) {
		CHECK_EQ(lab_trace_json(r, since, &doc), 0);
		const char *ev = doc ? strstr(doc, "\"events\":") : NULL;
		CHECK(ev && !strncmp(ev + 9, want[since], strlen(want[since])));
		CHECK(doc && strstr(doc, "\"next\":3,"));
		lab_free(doc);
	}
	/* a fraction: strictly after it */
	CHECK_EQ(lab_trace_json(r, 1.5, &doc), 0);
	CHECK(doc && strstr(doc, want[1])); /* event 2 */
	lab_free(doc);
	/* past the recording's bound: the rest is counted, not kept */
	for (int i = 0; i < 20000; i++)
		sim_trace(r->sim, kind, -1, i, 0, 0);
	CHECK_EQ(lab_trace_json(r, 0, &doc), 0);
	CHECK(doc && strstr(doc, "\"next\":5,"));
	CHECK(doc && strstr(doc, "\"unkept\":19998,"));
	CHECK(doc && strstr(doc, "\"complete\":false,"));
	lab_free(doc);
	CHECK_EQ(lab_trace_json(r, 4, &doc), 0);
	CHECK(doc && strstr(doc, "\"events\":[[0,") && strstr(doc, ",1,0,0]]"));
	lab_free(doc);
	lab_close(r);
}

/* lab_estimate: every experiment says what a run's work is, from its
 * parameters alone, and refuses bad parameters as lab_open does. */
static void estimates(void)
{
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		double w = -1, d = -1;
		CHECK(e->estimate != NULL && e->work_unit != NULL);
		CHECK_EQ(lab_estimate(e->name, "", &w, &d, NULL), 0);
		CHECK(w == d && d > 0);
	}
	double w, d;
	char *msg = NULL;
	CHECK_EQ(lab_estimate("torture", "ops=200000", &w, &d, NULL), 0);
	/* in events (test_estimate.c holds them to the runs): 10x the
	 * operations, about 10x the events */
	CHECK_NEAR(w / d, 10, 0.01);
	CHECK_EQ(lab_estimate("qgroup-drop", "subvols=64\nfiles=2K", &w, &d, NULL), 0);
	CHECK_NEAR(w / d, 16, 0.05);
	double w2;
	CHECK_EQ(lab_estimate("torture", "variation=off\nops=40000", &w2, &d, NULL), 0);
	CHECK_NEAR(w2 / d, 2, 0.01);
	/* every parameter that scales the events counts */
	CHECK_EQ(lab_estimate("torture", "ops=40000\nmix=all", &w, &d, NULL), 0);
	CHECK(w > 1.1 * w2);
	CHECK_EQ(lab_estimate("torture", "ops=0", &w, &d, &msg), LAB_ERANGE);
	CHECK(msg && strstr(msg, "'ops'"));
	lab_free(msg);
	CHECK_EQ(lab_estimate("nope\x1b", "", &w, &d, &msg), LAB_ENOENT);
	CHECK(msg && one_clean_line(msg));
	lab_free(msg);
	CHECK_EQ(lab_estimate("torture", "", NULL, &d, NULL), LAB_EINVAL);
}

int main(void)
{
	estimates();
	registry_ranges();
	parser_table();
	quoting();
	trace_edges();
	T_DONE();
}
