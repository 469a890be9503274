/*
 * spawn-jitter.c - measures what variation.def's proc_start says: how much
 * the CPU cost of one process start (fork + exec + dynamic linking + exit)
 * varies from one start to the next.
 *
 *   cc -O2 -o /tmp/spawn-jitter engine/tools/spawn-jitter.c
 *   /tmp/spawn-jitter 3000 /usr/bin/stat -c %s /etc/hostname
 *
 * Each start's CPU time is the parent's and the child's rusage (user +
 * system) around it, so the time a loaded host keeps it waiting for a CPU
 * is not counted; wall time is printed beside it for comparison. Prints
 * the mean, the coefficient of variation, quantiles and the log-sd.
 * Native only, not part of the engine.
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double us(struct timeval t) { return t.tv_sec * 1e6 + t.tv_usec; }

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void summary(const char *what, double *v, int n)
{
	double sum = 0, ss = 0, sl = 0, sl2 = 0;
	for (int i = 0; i < n; i++)
		sum += v[i];
	double mean = sum / n;
	int m = 0;
	for (int i = 0; i < n; i++) {
		ss += (v[i] - mean) * (v[i] - mean);
		if (v[i] > 0) {
			sl += log(v[i]);
			sl2 += log(v[i]) * log(v[i]);
			m++;
		}
	}
	qsort(v, (size_t)n, sizeof *v, cmp);
	printf("%-5s mean %8.1f us  CoV %.3f  p5 %.0f p50 %.0f p95 %.0f p99 %.0f  log-sd %.3f\n", what,
	       mean, sqrt(ss / n) / mean, v[n / 20], v[n / 2], v[n * 19 / 20], v[n * 99 / 100],
	       sqrt(sl2 / m - (sl / m) * (sl / m)));
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: spawn-jitter N PROGRAM [ARGS...]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	if (n < 20)
		n = 20;
	double *cpu = malloc(sizeof(double) * (size_t)n), *wall = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n; i++) {
		struct rusage s0, c0, s1, c1;
		struct timespec w0, w1;
		getrusage(RUSAGE_SELF, &s0);
		getrusage(RUSAGE_CHILDREN, &c0);
		clock_gettime(CLOCK_MONOTONIC, &w0);
		pid_t p = fork();
		if (p == 0) {
			int fd = open("/dev/null", O_WRONLY);
			dup2(fd, 1);
			execv(argv[2], argv + 2);
			_exit(127);
		}
		int st;
		waitpid(p, &st, 0);
		clock_gettime(CLOCK_MONOTONIC, &w1);
		getrusage(RUSAGE_SELF, &s1);
		getrusage(RUSAGE_CHILDREN, &c1);
		cpu[i] = us(s1.ru_utime) + us(s1.ru_stime) - us(s0.ru_utime) - us(s0.ru_stime) +
			 us(c1.ru_utime) + us(c1.ru_stime) - us(c0.ru_utime) - us(c0.ru_stime);
		wall[i] = (double)(w1.tv_sec - w0.tv_sec) * 1e6 + (double)(w1.tv_nsec - w0.tv_nsec) / 1e3;
	}
	summary("cpu", cpu, n);
	summary("wall", wall, n);
	free(cpu);
	free(wall);
	return 0;
}
