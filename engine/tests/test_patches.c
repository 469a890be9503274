/*
 * test_patches.c - the patch table (src/kernel/patches.def) is the one
 * answer to "where is patch X": every entry is well formed and reachable
 * (the simulated kernel asks for each patch that changes the model, and
 * for no other; the experiment of its seed exposes it), each kernel is the
 * list the README documents, the experiments derive their switches and
 * their runs' patch bits from it, and toggling a patch on an experiment's
 * small runs changes the result exactly when the table says it should.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "fs.h"
#include "lab.h"
#include "patches.h"
#include "t.h"

static int is_hex12(const char *s)
{
	if (strlen(s) != 12)
		return 0;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s))
			return 0;
	return 1;
}

/* "3/9", "1/1", "?/23": a place (or ?) within a series of n */
static int series_ok(const char *s)
{
	int k = 0, n = 0;
	if (s[0] == '?' && sscanf(s + 1, "/%d", &n) == 1)
		return n > 0;
	return sscanf(s, "%d/%d", &k, &n) == 2 && k >= 1 && k <= n;
}

/* Whether some experiment exposes patches a and b and declares their
 * switch `param` as its own parameter (lab_exp.switches maps it). */
static int own_switch_of_both(const char *param, patch_id a, patch_id b)
{
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		int has_a = 0, has_b = 0, own = 0;
		for (int j = 0; j < e->npatches; j++) {
			has_a |= e->patches[j] == a;
			has_b |= e->patches[j] == b;
		}
		for (int j = 0; j < e->nparams; j++)
			own |= !strcmp(e->params[j].name, param);
		if (has_a && has_b && own && e->switches)
			return 1;
	}
	return 0;
}

static void test_table_well_formed(void)
{
	CHECK(P_COUNT >= 16);
	CHECK(patch_get(P_NONE) == NULL);
	CHECK(patch_get(P_END) == NULL);
	CHECK(patch_find("P_NO_SUCH") == NULL);
	for (int id = 1; id <= P_COUNT; id++) {
		const patch_info *pi = patch_get(id);
		CHECK(pi != NULL);
		if (!pi)
			continue;
		CHECK_EQ(pi->id, id);
		CHECK(patch_find(pi->name) == pi);
		char prefix[8];
		snprintf(prefix, sizeof prefix, "P_%s_", pi->seed);
		CHECK(strncmp(pi->name, prefix, strlen(prefix)) == 0);
		CHECK(strlen(pi->seed) == 3 && strcmp(pi->seed, "000") >= 0 && strcmp(pi->seed, "004") <= 0);
		CHECK(series_ok(pi->series));
		/* a commit is 12 lowercase hex digits, or "" (not on file) */
		CHECK(!*pi->commit || is_hex12(pi->commit));
		CHECK(*pi->kernel && *pi->subsystem && *pi->title && *pi->help);
		CHECK(pi->effect == PE_MODEL || pi->effect == PE_NONE || pi->effect == PE_NOT_YET);
		/* a patch that changes nothing has no switch */
		CHECK(pi->effect != PE_NONE || !*pi->param);
		CHECK(pi->effect != PE_NONE || strncmp(pi->help, "changes nothing", 15) == 0);
		/* a switch name is one patch's, unless an experiment declares
		 * that switch itself over several patches (untar's flush) */
		for (int j = 1; j < id; j++)
			CHECK(!*pi->param || strcmp(patch_get(j)->param, pi->param) ||
			      own_switch_of_both(pi->param, (patch_id)j, (patch_id)id));
	}
	/* commits on file: the seeds' and mechanisms.md's, nothing guessed */
	CHECK(!strcmp(patch_get(P_000_START_DELALLOC_ROOTS)->commit, "38d715f494f2"));
	CHECK(!strcmp(patch_get(P_000_FLUSH_BY_PAGES)->commit, "e076ab2a2ca7"));
	CHECK(!strcmp(patch_get(P_003_TRUNC_SKIP_SAME_SIZE_WB)->commit, "213e8c5520ed"));
	CHECK(!strcmp(patch_get(P_004_LSEEK_CACHED_STATE)->commit, "3c32c7212f16"));
	CHECK(!*patch_get(P_000_DATA_TICKETS)->commit);
	CHECK(!*patch_get(P_001_PREALLOC_SCRATCH_EB)->commit);
	CHECK(!strcmp(patch_get(P_002_QGROUP_DIRTY_THRESHOLD)->kernel, "RFC"));
	/* sparse-cp's series: 9 entries, 5/9, 7/9 and 8/9 change nothing */
	int n004 = 0;
	for (int id = 1; id <= P_COUNT; id++) {
		const patch_info *pi = patch_get(id);
		if (strcmp(pi->seed, "004"))
			continue;
		n004++;
		int place = atoi(pi->series);
		CHECK_EQ(pi->effect == PE_NONE, place == 5 || place == 7 || place == 8);
	}
	CHECK_EQ(n004, 9);
}

/* ---------------------------------------------- reachable from the code */

/* Does any file of dir (suffix .c or .h, not patches.*) name `word`? */
static int source_names(const char *dir, const char *word)
{
	DIR *d = opendir(dir);
	CHECK(d != NULL);
	if (!d)
		return 0;
	int found = 0;
	struct dirent *de;
	char path[512];
	while (!found && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n < 3 || (strcmp(de->d_name + n - 2, ".c") && strcmp(de->d_name + n - 2, ".h")) ||
		    !strncmp(de->d_name, "patches.", 8))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		char line[1024];
		while (!found && fgets(line, sizeof line, f)) {
			const char *p = line;
			while ((p = strstr(p, word))) {
				char c = p[strlen(word)];
				if (!(isalnum((unsigned char)c) || c == '_')) {
					found = 1;
					break;
				}
				p++;
			}
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * Reachable: the simulated kernel asks for every patch that changes the
 * model, and for none that the table says changes nothing (yet): a patch
 * wired into the kernel must say so. And once a seed has its experiment,
 * that experiment exposes every patch of the seed that changes the model.
 * (make test runs this from engine/.)
 */
static void test_reachable(void)
{
	for (int id = 1; id <= P_COUNT; id++) {
		const patch_info *pi = patch_get(id);
		int asked = source_names("src/kernel", pi->name);
		if (asked != (pi->effect == PE_MODEL))
			fprintf(stderr, "%s: effect %s but the kernel %s it\n", pi->name,
				patch_effect_name(pi->effect), asked ? "asks for" : "never asks for");
		CHECK_EQ(asked, pi->effect == PE_MODEL);
		const lab_exp *owner = NULL;
		for (int i = 0; i < exp_count(); i++)
			if (!strcmp(exp_get(i)->seed, pi->seed))
				owner = exp_get(i);
		int exposed = 0;
		for (int j = 0; owner && j < owner->npatches; j++)
			exposed |= owner->patches[j] == pi->id;
		if (owner && pi->effect == PE_MODEL)
			CHECK(exposed);
		if (!owner)
			printf("  %s: seed %s has no experiment yet\n", pi->name, pi->seed);
		/* every patch is in some kernel, but the RFC in none of mainline */
		int in_some = 0;
		for (int k = 0; k < patch_kernel_count(); k++) {
			patchset ps;
			CHECK_EQ(patch_kernel(patch_kernel_get(k)->name, &ps), 0);
			in_some |= patch_on(&ps, pi->id);
		}
		CHECK(in_some);
	}
}

/* ------------------------------------------------ kernels, as documented */

/* README.md, "Where is patch X?", lists each kernel's patches; so does
 * this table (what base adds to, plus its own). */
static const struct {
	const char *name;
	patch_id ids[20];
} documented[] = {
	{ "4.16", { P_NONE } },
	{ "4.17", { P_003_TRUNC_SKIP_SAME_SIZE_WB } },
	{ "5.9", { P_003_TRUNC_SKIP_SAME_SIZE_WB } },
	{ "5.10", { P_003_TRUNC_SKIP_SAME_SIZE_WB, P_000_DATA_TICKETS, P_000_START_DELALLOC_ROOTS,
		    P_000_TICKET_CHECK_AFTER_WAIT } },
	{ "5.10+fix", { P_003_TRUNC_SKIP_SAME_SIZE_WB, P_000_DATA_TICKETS,
			P_000_START_DELALLOC_ROOTS, P_000_TICKET_CHECK_AFTER_WAIT,
			P_000_FLUSH_BY_PAGES } },
	{ "5.10+rfc", { P_003_TRUNC_SKIP_SAME_SIZE_WB, P_000_DATA_TICKETS,
			P_000_START_DELALLOC_ROOTS, P_000_TICKET_CHECK_AFTER_WAIT,
			P_002_QGROUP_DIRTY_THRESHOLD } },
	{ "6.1", { P_003_TRUNC_SKIP_SAME_SIZE_WB, P_000_DATA_TICKETS, P_000_START_DELALLOC_ROOTS,
		   P_000_TICKET_CHECK_AFTER_WAIT, P_000_FLUSH_BY_PAGES } },
	{ "6.2", { P_003_TRUNC_SKIP_SAME_SIZE_WB, P_000_DATA_TICKETS, P_000_START_DELALLOC_ROOTS,
		   P_000_TICKET_CHECK_AFTER_WAIT, P_000_FLUSH_BY_PAGES,
		   P_004_NO_HOLE_UPTODATE, P_004_DELALLOC_EARLY_EXIT, P_004_SKIP_DELALLOC_SEARCHES,
		   P_004_ORDERED_SEARCH, P_004_RM_NEXT_EXTENT_MAP, P_004_COUNT_RANGE_BITS_CACHED,
		   P_004_COUNT_RANGE_BITS_COMMENT, P_004_FIEMAP_CACHED_STATE,
		   P_004_LSEEK_CACHED_STATE } },
	{ "6.8", { P_003_TRUNC_SKIP_SAME_SIZE_WB, P_000_DATA_TICKETS, P_000_START_DELALLOC_ROOTS,
		   P_000_TICKET_CHECK_AFTER_WAIT, P_000_FLUSH_BY_PAGES,
		   P_004_NO_HOLE_UPTODATE, P_004_DELALLOC_EARLY_EXIT, P_004_SKIP_DELALLOC_SEARCHES,
		   P_004_ORDERED_SEARCH, P_004_RM_NEXT_EXTENT_MAP, P_004_COUNT_RANGE_BITS_CACHED,
		   P_004_COUNT_RANGE_BITS_COMMENT, P_004_FIEMAP_CACHED_STATE,
		   P_004_LSEEK_CACHED_STATE } },
	{ "6.9", { P_003_TRUNC_SKIP_SAME_SIZE_WB, P_000_DATA_TICKETS, P_000_START_DELALLOC_ROOTS,
		   P_000_TICKET_CHECK_AFTER_WAIT, P_000_FLUSH_BY_PAGES,
		   P_004_NO_HOLE_UPTODATE, P_004_DELALLOC_EARLY_EXIT, P_004_SKIP_DELALLOC_SEARCHES,
		   P_004_ORDERED_SEARCH, P_004_RM_NEXT_EXTENT_MAP, P_004_COUNT_RANGE_BITS_CACHED,
		   P_004_COUNT_RANGE_BITS_COMMENT, P_004_FIEMAP_CACHED_STATE,
		   P_004_LSEEK_CACHED_STATE, P_001_PREALLOC_SCRATCH_EB } },
};

static void test_kernels_documented(void)
{
	int n = (int)(sizeof documented / sizeof documented[0]);
	CHECK_EQ(patch_kernel_count(), n);
	for (int i = 0; i < n; i++) {
		const patch_kernel_info *k = patch_kernel_get(i);
		CHECK(k && !strcmp(k->name, documented[i].name));
		patchset want = { 0 }, got;
		for (int j = 0; documented[i].ids[j] != P_NONE; j++)
			patch_set(&want, documented[i].ids[j], 1);
		CHECK_EQ(patch_kernel(documented[i].name, &got), 0);
		if (got.bits != want.bits)
			fprintf(stderr, "kernel %s: %llx, documented %llx\n", documented[i].name,
				(unsigned long long)got.bits, (unsigned long long)want.bits);
		CHECK_EQ(got.bits, want.bits);
		/* a base comes earlier in the table */
		int base_before = !*k->base;
		for (int j = 0; j < i; j++)
			base_before |= !strcmp(patch_kernel_get(j)->name, k->base);
		CHECK(base_before);
	}
	patchset ps = { 123 };
	CHECK_EQ(patch_kernel("7.0", &ps), LAB_ENOENT);
	CHECK_EQ(ps.bits, 0);
	CHECK_EQ(patch_kernel(NULL, &ps), LAB_ENOENT);
	/* the default kernel: every merged patch (all but the RFC) */
	CHECK_EQ(patch_kernel(PATCH_DEFAULT_KERNEL, &ps), 0);
	for (int id = 1; id <= P_COUNT; id++)
		CHECK_EQ(patch_on(&ps, id), strcmp(patch_get(id)->kernel, "RFC") != 0);
	/* and a file system mounts with it */
	fs_opts o;
	fs_opts_default(&o);
	CHECK_EQ(o.patches.bits, ps.bits);
}

/* ------------------------------------------------- experiments derive */

static void test_experiments_derive(void)
{
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		/* the patched run: after, or the one base run */
		int var = e->has_variants ? VAR_AFTER : VAR_BASE;
		patchset before, after;
		CHECK_EQ(patch_kernel(exp_kernel(e, VAR_BEFORE), &before), 0);
		CHECK_EQ(patch_kernel(exp_kernel(e, var), &after), 0);
		if (e->has_variants) {
			/* it exposes (at least) what its two kernels differ by */
			uint64_t exposed = 0;
			for (int j = 0; j < e->npatches; j++)
				exposed |= 1ull << e->patches[j];
			CHECK_EQ((before.bits ^ after.bits) & ~exposed, 0);
			CHECK(before.bits != after.bits);
		} else {
			CHECK_EQ(e->npatches, 0);
		}
		/* one switch per exposed patch that changes the model and has a
		 * param name; default: applied in `after` */
		int switches = 0;
		for (int j = 0; j < exp_nparams(e); j++) {
			const param_desc *d = exp_param_desc(e, j);
			if (d->patch == P_NONE)
				continue;
			switches++;
			const patch_info *pi = patch_get(d->patch);
			CHECK(pi && pi->effect == PE_MODEL && !strcmp(d->name, pi->param));
			CHECK_EQ(d->type, PT_BOOL);
			CHECK_EQ(d->def, patch_on(&after, d->patch));
			CHECK(j >= e->nparams); /* after the experiment's own */
		}
		/* a patch whose switch the experiment declares itself gets
		 * none from the registry: the experiment maps it (switches) */
		int want = 0;
		for (int j = 0; j < e->npatches; j++) {
			const patch_info *pi = patch_get(e->patches[j]);
			if (pi->effect != PE_MODEL || !*pi->param)
				continue;
			int own = 0;
			for (int k = 0; k < e->nparams; k++)
				own |= !strcmp(e->params[k].name, pi->param);
			if (own)
				CHECK(e->switches != NULL);
			else
				want++;
		}
		CHECK_EQ(switches, want);
		/* the runs' bits: before is its kernel whatever the switches
		 * say; after (or base) with every switch off lacks those */
		double p[EXP_MAX_PARAMS];
		char err[200];
		CHECK_EQ(exp_parse_params(e, NULL, p, err, sizeof err), 0);
		for (int j = e->nparams; j < exp_nparams(e); j++)
			p[j] = 0;
		patchset b, a;
		CHECK_EQ(exp_run_patches(e, VAR_BEFORE, p, &b), 0);
		CHECK_EQ(exp_run_patches(e, var, p, &a), 0);
		CHECK_EQ(b.bits, before.bits);
		for (int j = e->nparams; j < exp_nparams(e); j++)
			patch_set(&after, exp_param_desc(e, j)->patch, 0);
		CHECK_EQ(a.bits, after.bits);
	}
	/* sparse-cp keeps the switch names its lessons and links use */
	const lab_exp *sc = exp_find("sparse-cp");
	const char *names[] = { "p1_no_hole_uptodate", "p2_early_exit", "p3_skip_searches",
				"p4_ordered_search", "p6_cached_state", "p9_file_cache" };
	CHECK_EQ(exp_nparams(sc) - sc->nparams, 6);
	for (int j = 0; j < 6; j++)
		CHECK(!strcmp(exp_param_desc(sc, sc->nparams + j)->name, names[j]));
}

/* ------------------------------------------- toggling changes the result */

/* The whole result (metrics and details) of a run with the given bits. */
static char *result_of(const lab_exp *e, const small_run *sr, const patchset *ps)
{
	lab_run *r = NULL;
	char *err = NULL, *json = NULL;
	CHECK_EQ(lab_open_patched(e->name, sr->variant, sr->params, 1, ps, &r, &err), 0);
	lab_free(err);
	if (!r)
		return NULL;
	int done = 0;
	while (!done && lab_step(r, 1u << 20, &done) == 0)
		;
	CHECK_EQ(done, 1);
	CHECK_EQ(lab_result_json(r, &json), 0);
	lab_close(r);
	return json;
}

/*
 * Patches that change the model but not any run of the experiment that
 * exposes them. 3/9 saves an io_tree search on the second round of a
 * hole range's delalloc search, after a round that found none; a second
 * round follows only contiguous ordered extents, which cp's file (extents
 * between holes) never has (test_lseek's test_p3_skip shows the saving).
 * P_000_DATA_TICKETS changes what happens when a data reservation does
 * not fit the data chunks; untar's small runs (a few hundred files) never
 * fill the first one (at full scale the archive does, once:
 * test_space_fs's test_data_tickets shows the switch's two sides).
 * If a change of the model makes one show, take it off this list.
 */
static const patch_id invisible[] = { P_004_SKIP_DELALLOC_SEARCHES, P_000_DATA_TICKETS };

static int is_invisible(patch_id id)
{
	for (size_t i = 0; i < sizeof invisible / sizeof invisible[0]; i++)
		if (invisible[i] == id)
			return 1;
	return 0;
}

/*
 * On every small run of the patched kernel (after or base), take each
 * exposed patch out: one that changes the model must change the result
 * of at least one small run, one that changes nothing must change none.
 */
static void test_toggles(void)
{
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		for (int j = 0; j < e->npatches; j++) {
			const patch_info *pi = patch_get(e->patches[j]);
			int runs = 0, changed = 0;
			for (int k = 0; k < e->nsmall; k++) {
				const small_run *sr = &e->small[k];
				if (!strcmp(sr->variant, "before"))
					continue;
				lab_run *r = NULL;
				char *err = NULL;
				CHECK_EQ(lab_open(e->name, sr->variant, sr->params, 1, 0, &r, &err), 0);
				lab_free(err);
				if (!r)
					continue;
				patchset with = r->patches, without = r->patches;
				lab_close(r);
				if (!patch_on(&with, pi->id))
					continue;
				patch_set(&without, pi->id, 0);
				char *a = result_of(e, sr, &with), *b = result_of(e, sr, &without);
				runs++;
				changed += a && b && strcmp(a, b) != 0;
				lab_free(a);
				lab_free(b);
			}
			printf("  %s %s (%s, %s): changed %d of %d small runs\n", e->name, pi->series,
			       pi->name, patch_effect_name(pi->effect), changed, runs);
			CHECK(runs > 0);
			if (pi->effect == PE_MODEL && !is_invisible(pi->id))
				CHECK(changed > 0);
			else
				CHECK_EQ(changed, 0);
		}
	}
}

/* A switch is the public way to the same bits: sparse-cp after with
 * p1_no_hole_uptodate=0 is the run whose kernel lacks 1/9. */
static void test_switch_is_the_bit(void)
{
	const lab_exp *e = exp_find("sparse-cp");
	small_run off = { "after", "file_mib=1\nstate=cold\np1_no_hole_uptodate=0" };
	lab_run *r = NULL;
	char *err = NULL;
	CHECK_EQ(lab_open(e->name, off.variant, off.params, 1, 0, &r, &err), 0);
	lab_free(err);
	CHECK_EQ(patch_on(&r->patches, P_004_NO_HOLE_UPTODATE), 0);
	CHECK_EQ(patch_on(&r->patches, P_004_DELALLOC_EARLY_EXIT), 1);
	patchset ps = r->patches;
	lab_close(r);
	small_run plain = { "after", "file_mib=1\nstate=cold" };
	char *a = result_of(e, &off, NULL), *b = result_of(e, &plain, &ps);
	CHECK(a && b && strcmp(a, b) == 0);
	lab_free(a);
	lab_free(b);
	/* the before kernel ignores switches */
	CHECK_EQ(lab_open(e->name, "before", "p1_no_hole_uptodate=1", 1, 0, &r, &err), 0);
	lab_free(err);
	CHECK_EQ(patch_on(&r->patches, P_004_NO_HOLE_UPTODATE), 0);
	lab_close(r);
}

/* list --json carries the table, the kernels, each experiment's patches
 * and the error codes */
static void test_list_json(void)
{
	char *s = NULL;
	CHECK_EQ(lab_list_json(&s), 0);
	CHECK(s && strstr(s, "\"patch\":\"P_004_NO_HOLE_UPTODATE\""));
	CHECK(s && strstr(s, "\"id\":\"P_004_LSEEK_CACHED_STATE\",\"seed\":\"004\",\"series\":\"9/9\","
			     "\"commit\":\"3c32c7212f16\",\"kernel\":\"6.2\""));
	CHECK(s && strstr(s, "\"commit\":null"));
	CHECK(s && strstr(s, "\"kernels\":{\"before\":\"6.1\",\"after\":\"6.2\"}"));
	CHECK(s && strstr(s, "\"errors\":{\"LAB_OK\":0,\"LAB_EINVAL\":-1,"));
	CHECK(s && strstr(s, "\"LAB_ENOTSUP\":-9}"));
	lab_free(s);
	CHECK(!strcmp(lab_strerror(LAB_ECANCELED), "LAB_ECANCELED: run cancelled"));
	CHECK(!strcmp(lab_strerror(42), "LAB_E?: unknown error code"));
}

int main(void)
{
	test_table_well_formed();
	test_reachable();
	test_kernels_documented();
	test_experiments_derive();
	test_switch_is_the_bit();
	test_list_json();
	test_toggles();
	T_DONE();
}
