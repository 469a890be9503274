/*
 * detmath.c - portable exp/log/pow.
 *
 * Why: the native build links glibc's libm and the WASM build musl's; they
 * may differ in the last bit for exp/log/pow, and one differing bit in a
 * sampled latency changes event order, so "same seed, same metrics" would
 * break. These use only +, -, *, / and frexp/ldexp (all exact or correctly
 * rounded under IEEE 754), so both builds compute the same bits. Accuracy
 * is ~1e-15 relative, plenty for a simulator.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sim.h"

static const double LN2_HI = 6.93147180369123816490e-01; /* exact in 32 bits */
static const double LN2_LO = 1.90821492927058770002e-10;
static const double LN2 = 0.69314718055994530942;

/* 2^k as a double, for the normal exponents (-1022 <= k <= 1023) */
static double pow2(int k)
{
	uint64_t b = (uint64_t)(k + 1023) << 52;
	double d;
	memcpy(&d, &b, sizeof d);
	return d;
}

/*
 * e^x: reduce x = k*ln2 + r with |r| <= ln2/2, sum the Taylor series of e^r
 * (17 terms: the remainder is below 1e-20 for |r| <= 0.35), scale by 2^k.
 */
double dm_exp(double x)
{
	if (x != x)
		return x;
	if (x > 709.782712893384)
		return HUGE_VAL;
	if (x < -745.1332191019412)
		return 0.0;
	double kf = floor(x / LN2 + 0.5);
	int k = (int)kf;
	double r = (x - kf * LN2_HI) - kf * LN2_LO;
	double term = 1.0, sum = 1.0;
	for (int i = 1; i < 18; i++) {
		term = term * r / (double)i;
		/* Once |term| < sum * 2^-55 (below half the spacing of the
		 * doubles around sum, sum >= 0.65 here), adding it leaves sum
		 * as it is, and so does every later term (each is smaller):
		 * stopping gives the same bits as the 17 terms. */
		if (fabs(term) < sum * 0x1p-55)
			break;
		sum += term;
	}
	/* sum * 2^k with 2^k a double is x * 2^k rounded once, as ldexp
	 * gives it (a libm call in the WASM build) */
	return k >= -1022 && k <= 1023 ? sum * pow2(k) : ldexp(sum, k);
}

/*
 * ln x: x = m * 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s),
 * s = (m-1)/(m+1), |s| < 0.1716, summed to s^31 (remainder < 1e-24).
 */
double dm_log(double x)
{
	if (x != x || x < 0.0)
		return NAN;
	if (x == 0.0)
		return -HUGE_VAL;
	if (isinf(x))
		return x;
	int e;
	double m; /* x = m * 2^e, m in [0.5, 1) */
	uint64_t b;
	memcpy(&b, &x, sizeof b);
	if (b >> 52) {
		/* normal: frexp's result read off the bits, without the call */
		e = (int)(b >> 52) - 1022;
		b = (b & ((1ull << 52) - 1)) | (1022ull << 52);
		memcpy(&m, &b, sizeof m);
	} else {
		m = frexp(x, &e);
	}
	if (m < 0.70710678118654752440) {
		m *= 2.0;
		e -= 1;
	}
	double s = (m - 1.0) / (m + 1.0);
	double s2 = s * s, term = s, sum = 0.0;
	for (int i = 1; i < 32; i += 2) {
		double t = term / (double)i;
		/* as in dm_exp: a term below half the spacing of the doubles
		 * around sum (every later one is smaller, all have sum's
		 * sign) changes nothing from here on */
		if (fabs(t) < fabs(sum) * 0x1p-55)
			break;
		sum += t;
		term *= s2;
	}
	return (double)e * LN2_HI + ((double)e * LN2_LO + 2.0 * sum);
}

double dm_log2(double x)
{
	return dm_log(x) / LN2;
}

/* x^y for x > 0 (the engine never needs negative bases). */
double dm_pow(double x, double y)
{
	if (x == 1.0 || y == 0.0)
		return 1.0;
	if (x <= 0.0)
		return x == 0.0 && y > 0 ? 0.0 : NAN;
	return dm_exp(y * dm_log(x));
}
