/* test_observe.c - the queue-length series the front end reads through
 * lab_trace_json: ordered extents in flight rise during writeback and are
 * back to 0 once the file is synced; the space tickets series is there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "t.h"

/* The last value of series `name` in a lab_trace_json document, or -1. */
static double last_value(const char *doc, const char *name, double *max)
{
	char key[64];
	snprintf(key, sizeof key, "\"%s\":{\"t\":[", name);
	const char *p = strstr(doc, key);
	if (!p)
		return -1;
	p = strstr(p, "\"v\":[");
	if (!p)
		return -1;
	p += 5;
	double last = -1;
	*max = 0;
	while (*p && *p != ']') {
		char *end;
		double v = strtod(p, &end);
		if (end == p)
			return -1;
		last = v;
		if (v > *max)
			*max = v;
		p = *end == ',' ? end + 1 : end;
	}
	return last;
}

int main(void)
{
	lab_run *r = NULL;
	char *err = NULL;
	int rc = lab_open("sparse-cp", "after", "file_mib=2\nstate=cached", 1, 0, &r, &err);
	CHECK_EQ(rc, 0);
	int done = 0;
	while (rc == 0 && !done)
		rc = lab_step(r, 100000, &done);
	CHECK_EQ(rc, 0);
	char *doc = NULL;
	CHECK_EQ(lab_trace_json(r, 0, &doc), 0);
	double max = 0;
	double last = last_value(doc, "ordered_extents", &max);
	CHECK(max >= 1);      /* writeback had ordered extents in flight */
	CHECK_EQ(last, 0);    /* and every one finished by the sync */
	CHECK(last_value(doc, "delalloc_extents", &max) >= 0);
	/* the space reservation series of the file system (space_fs.h) are
	 * exposed with the others; a run with plenty of space queues no
	 * ticket, so they have no point (test_space_fs sees them move) */
	CHECK(strstr(doc, "\"space_tickets\":{\"t\":[]") != NULL);
	CHECK(strstr(doc, "\"space_data_tickets\":{") != NULL);
	CHECK(strstr(doc, "\"space_meta_may_use\":{") != NULL);
	lab_free(doc);
	lab_free(err);
	lab_close(r);
	T_DONE();
}
