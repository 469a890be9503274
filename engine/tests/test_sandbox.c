/*
 * test_sandbox.c - the sandbox's command language (exp_sandbox_parse.c)
 * and the `sandbox` experiment: every refusal names its line and what is
 * wrong; a script's per-command record shows what each command changed;
 * a power cut finds what fsync made durable; two runs are identical.
 */
#include <stdlib.h>
#include <string.h>

#include "exp_sandbox.h"
#include "t.h"
#include "t_lab.h"

/* Parse, expect code rc and (rc != 0) a message containing want. */
static void refused(const char *script, int rc, const char *want)
{
	sb_script s;
	char err[200];
	int got = sbs_parse(script, &s, err, sizeof err);
	CHECK_EQ(got, rc);
	if (rc && !strstr(err, want)) {
		fprintf(stderr, "script '%s': message '%s' lacks '%s'\n", script, err, want);
		CHECK(0);
	}
	if (rc)
		CHECK(strchr(err, '\n') == NULL); /* one line */
	sbs_free(&s);
}

static void test_parse(void)
{
	sb_script s;
	char err[200];
	CHECK_EQ(sbs_parse("mkdir /d; touch /d/f\npwrite /d/f 0 64k ; fsync\n# a comment\n"
			   "pwrite 1m 4k # tail\nseek -h 0; truncate 0x2000; mv /d/f /d/g; sync",
			   &s, err, sizeof err), 0);
	CHECK_EQ(s.ncmds, 9);
	CHECK_EQ(s.cmds[2].op, SB_PWRITE);
	CHECK_EQ(s.cmds[2].b, 65536);
	CHECK_EQ(s.cmds[4].op, SB_PWRITE);   /* the open file: /d/f */
	CHECK_EQ(s.cmds[4].ent, s.cmds[2].ent);
	CHECK_EQ(s.cmds[4].a, 1 << 20);
	CHECK_EQ(s.cmds[4].line, 6);         /* lines count ';' and newlines */
	CHECK_EQ(s.cmds[5].hole, 1);
	CHECK_EQ(s.cmds[6].a, 8192);
	CHECK(!strcmp(s.cmds[7].name, "f") && !strcmp(s.cmds[7].name2, "g"));
	CHECK(!strcmp(s.ents[s.cmds[2].ent].path, "/d/g")); /* the rename moved it */
	CHECK_EQ(s.nfiles, 2);
	sbs_free(&s);
	CHECK_EQ(sbs_count("a; b\n\n# c\n d ;"), 3);

	/* snapshots copy the namespace under the new path, read-only */
	CHECK_EQ(sbs_parse("btrfs subvolume create /sv; mkdir /sv/d; touch /sv/d/f; "
			   "btrfs subvolume snapshot /sv /snap; btrfs subvolume delete /sv",
			   &s, err, sizeof err), 0);
	CHECK_EQ(s.nsv, 3);
	CHECK_EQ(s.cmds[3].nnew, 3);
	CHECK_EQ(s.nfiles, 3); /* /snap, /snap/d, /snap/d/f */
	sbs_free(&s);
	CHECK_EQ(sbs_parse("touch -n 2000 /f; touch -n 2000 /g", &s, err, sizeof err), 0);
	CHECK_EQ(s.nfiles, 4000);
	sbs_free(&s);

	refused("mkdir /d; frobnicate /d", LAB_EINVAL, "line 2: frobnicate /d: unknown command");
	refused("touch /f; pwrite /f 0", LAB_EINVAL, "usage: pwrite [PATH] OFF LEN");
	refused("touch /f; pwrite /f 0 32m", LAB_ERANGE, "LEN at most 16 MiB");
	refused("touch /f; pwrite /f 60m 8m", LAB_ERANGE, "files end at 64 MiB");
	refused("touch /f; pwrite /f 0 4q", LAB_EINVAL, "unknown suffix");
	refused("touch /f; pwrite /f zero 4k", LAB_EINVAL, "OFF 'zero' is not a number");
	refused("pwrite 0 4k", LAB_EINVAL, "which file?");
	refused("rm /nope", LAB_ENOENT, "no such file or directory: /nope");
	refused("touch /a/b", LAB_ENOENT, "no directory /a");
	refused("mkdir /d; touch /d/f; rm /d", LAB_EINVAL, "directory not empty");
	refused("touch /f; mkdir /f", LAB_EINVAL, "/f exists");
	refused("touch f", LAB_EINVAL, "paths start with /");
	refused("touch /a//b", LAB_EINVAL, "empty name");
	refused("mkdir /d; mv /d /d/e", LAB_EINVAL, "into itself");
	refused("btrfs subvolume create /s; touch /f; mv /f /s/f", LAB_EINVAL, "EXDEV");
	refused("touch /f; falloc -k /f 0 4k", LAB_ENOTSUP, "past EOF");
	refused("touch /f; ln /f /g", LAB_ENOTSUP, "hard link");
	refused("touch /f; reflink /f /g", LAB_ENOTSUP, "clone");
	refused("touch /f; ln /f /g", LAB_ENOTSUP, "hard link");
	refused("touch /f; powercut; touch /g", LAB_EINVAL, "ended at the powercut");
	refused("btrfs subvolume create /s; touch /s/f; btrfs subvolume snapshot /s /t; pwrite /t/f 0 1",
		LAB_ENOTSUP, "snapshot");
	refused("btrfs subvolume delete /", LAB_EINVAL, "top-level");
	refused("touch /f; seek -x 0", LAB_EINVAL, "-d (data) or -h (hole)");
	refused("touch -n 2001 /f", LAB_ERANGE, "N from 1 to 2000");
	refused("touch -n 2000 /a; touch -n 2000 /b; touch -n 2000 /c; touch -n 2000 /d; "
		"touch -n 2000 /e; touch -n 240 /y; touch /z", LAB_ERANGE, "at most 10240 names");
	/* 257 commands */
	char *many = malloc(257 * 6 + 1);
	many[0] = 0;
	for (int i = 0; i < 257; i++)
		strcat(many, "sync;");
	refused(many, LAB_ERANGE, "at most 256 commands");
	free(many);
}

/* Run a script to the end through the public API; its result JSON. */
static char *run_script(const char *variant, const char *script, lab_run **keep)
{
	char params[4096];
	snprintf(params, sizeof params, "script=%s", script);
	lab_run *r = t_open("sandbox", variant, params, 1);
	if (!r)
		return NULL;
	int done = 0, rc = 0;
	while (!done && rc == 0)
		rc = lab_step(r, 1000, &done);
	CHECK_EQ(rc, 0);
	CHECK_EQ(lab_check(r), 0);
	char *js = NULL;
	CHECK_EQ(lab_result_json(r, &js), 0);
	if (keep)
		*keep = r;
	else
		lab_close(r);
	return js;
}

/* The number after "key": in the n-th command's object of the JSON. */
static double cmd_num(const char *js, int n, const char *key)
{
	const char *p = strstr(js, "\"commands\":[");
	for (int i = 0; p && i <= n; i++)
		p = strstr(p + 1, "{\"line\":");
	if (!p)
		return -1e300;
	const char *end = strstr(p + 1, "{\"line\":");
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *q = strstr(p, k);
	if (!q || (end && q > end))
		return -1e300;
	return strtod(q + strlen(k), NULL);
}

static void test_run(void)
{
	const char *script = "mkdir /d; touch /d/f; pwrite /d/f 0 64k; fsync; pwrite 1m 4k; "
			     "truncate 8k; seek -h 0; pread 0 8k; mv /d/f /d/g; sync; pwrite /d/g 0 4k; "
			     "fsync /d/g; touch /d/new; powercut";
	lab_run *r = NULL;
	char *a = run_script("after", script, &r);
	CHECK(a != NULL);
	if (!a)
		return;
	t_res m;
	memcpy(m.m, r->m, sizeof m.m);
	m.e = r->exp;
	lab_close(r);
	CHECK_EQ(t_metric(&m, "commands"), 14);
	CHECK_EQ(t_metric(&m, "check_failures"), 0);
	CHECK_EQ(t_metric(&m, "powercut_kept"), 1);
	CHECK_EQ(t_metric(&m, "powercut_lost"), 0);
	CHECK_EQ(t_metric(&m, "commits"), 1);
	/* mkdir: the fs tree's leaf COWed once in this transaction, items
	 * for the directory (inode, ref, dir item, dir index) */
	CHECK_EQ(cmd_num(a, 0, "fs"), 1);
	/* pwrite 64k: 16 dirty pages, no extent item yet (delalloc) */
	CHECK_EQ(cmd_num(a, 2, "dirty_pages"), 16);
	CHECK_EQ(cmd_num(a, 2, "pages_written"), 0);
	/* fsync: the pages written, the inode and its extent logged */
	CHECK_EQ(cmd_num(a, 3, "pages_written"), 16);
	CHECK(cmd_num(a, 3, "log_items") > 0);
	CHECK_EQ(cmd_num(a, 3, "log_commits"), 1);
	CHECK_EQ(cmd_num(a, 3, "dirty_pages"), 0);
	/* seek -h 0 on 8k of data: the hole at 8192 (the file ends there) */
	CHECK_EQ(cmd_num(a, 6, "result"), 8192);
	CHECK_EQ(cmd_num(a, 7, "result"), 8192);
	/* sync: a commit frees the log */
	CHECK_EQ(cmd_num(a, 9, "commits"), 1);
	CHECK_EQ(cmd_num(a, 9, "log_items"), 0);
	CHECK(strstr(a, "\"path\":\"/d/g\"") && strstr(a, "\"verdict\":\"as fsynced\""));
	CHECK(strstr(a, "\"path\":\"/d/new\"") && strstr(a, "not fsynced"));
	/* the same script again: the same result, byte for byte */
	char *b = run_script("after", script, NULL);
	CHECK(b && !strcmp(a, b));
	free(b);
	free(a);

	/* subvolumes, a snapshot and its deletion, quota, many files */
	a = run_script("before", "btrfs quota enable; btrfs subvolume create /sv; touch /sv/a; "
		       "pwrite /sv/a 0 16k; btrfs subvolume snapshot /sv /snap; sync; "
		       "btrfs subvolume delete /snap; sync; touch -n 300 /f; fsync /; "
		       "fdatasync /sv/a; powercut", NULL);
	CHECK(a != NULL);
	if (a) {
		CHECK(strstr(a, "\"check_failures\":0"));
		CHECK(strstr(a, "\"quota\":1"));
		CHECK(cmd_num(a, 8, "items\":{\"fs") >= 300 * 4); /* 300 files, four items each at least */
		CHECK(strstr(a, "\"powercut_lost\":0"));
	}
	free(a);

	/* a refused script never starts: one line naming it */
	lab_run *bad = NULL;
	char *err = NULL;
	int rc = lab_open("sandbox", "after", "script=touch /f; rm /g", 1, 0, &bad, &err);
	CHECK_EQ(rc, LAB_ENOENT);
	CHECK(bad == NULL);
	CHECK(err && !strcmp(err, "line 2: rm /g: no such file or directory: /g"));
	lab_free(err);
	/* other experiments take no script */
	rc = lab_open("torture", "base", "script=sync", 1, 0, &bad, &err);
	CHECK_EQ(rc, LAB_ENOENT);
	lab_free(err);
	/* the estimate counts the mkfs and the commands (~2 events each) */
	double w = 0, dw = 0;
	CHECK_EQ(lab_estimate("sandbox", "script=sync; sync; touch /a", &w, &dw, NULL), 0);
	CHECK_EQ(w, 8);
	CHECK_EQ(dw, 2);
}

int main(void)
{
	test_parse();
	test_run();
	T_DONE();
}
