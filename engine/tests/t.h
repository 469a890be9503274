/*
 * t.h - the engine's minimal unit-test harness. Each test program ends with
 * T_DONE(), which prints "N passed, N failed" and returns non-zero on any
 * failure.
 */
#ifndef T_H
#define T_H
#include <math.h>
#include <stdio.h>
#include <string.h>

static int t_pass, t_fail;
#define CHECK(cond) do { if (cond) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	if (_a == _b) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, _a, _b); } } while (0)
#define CHECK_NEAR(a, b, rel) do { double _a = (a), _b = (b); \
	if (fabs(_a - _b) <= (rel) * fabs(_b)) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: %s ~ %s failed: %g vs %g\n", __FILE__, __LINE__, #a, #b, _a, _b); } } while (0)
#define T_DONE() do { printf("%s: %d passed, %d failed\n", __FILE__, t_pass, t_fail); \
	return t_fail ? 1 : 0; } while (0)
#endif
