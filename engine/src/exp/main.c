/*
 * main.c - the native CLI: a thin shell over lab_cli() (cli.c), so the
 * native and WASM builds print the same output. What it adds is what a
 * host has and the engine has not (cli/lab.mjs does the same under Node):
 *  - file access: `--script FILE` is read here and passed on as
 *    `--script-text TEXT`;
 *  - the progress line on a terminal (stderr a tty, or LAB_PROGRESS=1;
 *    LAB_PROGRESS=0 never; from LAB_PROGRESS_AFTER_MS, default 1000 ms);
 *  - `--jobs N`: the plan's units (cli.c, --x-plan) run in N child
 *    processes of this binary (--x-units), and one last call formats all
 *    their results (--x-results): the bytes of a serial run.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "lab.h"

#define SCRIPT_FILE_MAX 65536

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ progress */

static struct {
	int on, drawn, done, total;
	double t0, after_ms, last_draw, frac;
} prog;

static void secs(char *buf, size_t n, double ms)
{
	double s = ms / 1000;
	if (s < 60)
		snprintf(buf, n, "%.1f s", s);
	else
		snprintf(buf, n, "%d min %02d s", (int)(s / 60), (int)(s - 60 * (int)(s / 60)));
}

static void prog_start(void)
{
	const char *f = getenv("LAB_PROGRESS"), *a = getenv("LAB_PROGRESS_AFTER_MS");
	prog.on = (f && !strcmp(f, "1")) || (!(f && !strcmp(f, "0")) && isatty(2));
	prog.after_ms = a && *a ? atof(a) : 1000;
	prog.t0 = now_ms();
	prog.last_draw = -1e300;
}

static void prog_update(int done, int total, double frac)
{
	prog.done = done;
	prog.total = total;
	prog.frac = frac;
	double t = now_ms();
	if (!prog.on || t - prog.t0 < prog.after_ms || t - prog.last_draw < 100)
		return;
	prog.last_draw = t;
	prog.drawn = 1;
	char el[32], left[48];
	secs(el, sizeof el, t - prog.t0);
	double got = done + frac;
	if (got > 0) {
		char l[32];
		secs(l, sizeof l, (t - prog.t0) * (total - got) / got);
		snprintf(left, sizeof left, "about %s left", l);
	} else {
		snprintf(left, sizeof left, "time left not known yet");
	}
	fprintf(stderr, "\rlab: %d of %d run%s done, %s elapsed, %s\x1b[K", done, total,
		total == 1 ? "" : "s", el, left);
	fflush(stderr);
}

static void prog_finish(void)
{
	if (!prog.drawn)
		return;
	char el[32];
	secs(el, sizeof el, now_ms() - prog.t0);
	fprintf(stderr, "\rlab: %d of %d run%s done in %s\x1b[K\n", prog.done, prog.total,
		prog.total == 1 ? "" : "s", el);
}

/* --------------------------------------------------------------- jobs */

/* argv with `extra` (one option and maybe its value) after the command. */
static const char **with_opt(int argc, char **argv, const char *opt, const char *val, int *n)
{
	const char **a = calloc((size_t)argc + 3, sizeof *a);
	if (!a)
		return NULL;
	int k = 0;
	a[k++] = argv[0];
	a[k++] = argv[1];
	a[k++] = opt;
	if (val)
		a[k++] = val;
	for (int i = 2; i < argc; i++)
		a[k++] = argv[i];
	*n = k;
	return a;
}

/* Units 0..units-1 on `jobs` children, child k taking every jobs-th one;
 * their result lines concatenated into *lines. Returns 0, or the exit
 * status of a child that failed (its message already on stderr). */
static int run_children(int argc, char **argv, int units, int jobs, char **lines)
{
	int *fd = calloc((size_t)jobs, sizeof *fd);
	pid_t *pid = calloc((size_t)jobs, sizeof *pid);
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	if (!fd || !pid || !buf)
		return 1;
	fflush(NULL);
	for (int k = 0; k < jobs; k++) {
		int p[2];
		if (pipe(p))
			return 1;
		pid[k] = fork();
		if (pid[k] < 0)
			return 1;
		if (pid[k] == 0) {
#ifdef __linux__
			/* a parent stopped (Ctrl-C, kill) takes its workers along */
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() == 1)
				_exit(1);
#endif
			close(p[0]);
			for (int i = k; i < units; i += jobs) {
				char range[48];
				snprintf(range, sizeof range, "%d-%d", i, i + 1);
				int n;
				const char **a = with_opt(argc, argv, "--x-units", range, &n);
				char *out = NULL, *err = NULL;
				int st = a ? lab_cli(n, a, &out, &err) : 1;
				if (err)
					fputs(err, stderr);
				if (st)
					_exit(st);
				size_t ol = strlen(out), w = 0;
				while (w < ol) {
					ssize_t r = write(p[1], out + w, ol - w);
					if (r <= 0)
						_exit(1);
					w += (size_t)r;
				}
				lab_free(out);
				lab_free(err);
				free(a);
			}
			_exit(0);
		}
		close(p[1]);
		fd[k] = p[0];
	}
	struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
	if (!pf)
		return 1;
	int open_fds = jobs, done = 0;
	while (open_fds > 0) {
		for (int k = 0; k < jobs; k++) {
			pf[k].fd = fd[k];
			pf[k].events = POLLIN;
		}
		if (poll(pf, (nfds_t)jobs, 200) < 0)
			break;
		for (int k = 0; k < jobs; k++) {
			if (fd[k] < 0 || !(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (cap - len < 4096) {
				char *nb = realloc(buf, cap *= 2);
				if (!nb)
					return 1;
				buf = nb;
			}
			ssize_t r = read(fd[k], buf + len, cap - len - 1);
			if (r <= 0) {
				close(fd[k]);
				fd[k] = -1;
				pf[k].fd = -1;
				open_fds--;
				continue;
			}
			for (ssize_t i = 0; i < r; i++)
				done += buf[len + (size_t)i] == '\n';
			len += (size_t)r;
		}
		prog_update(done, units, 0);
	}
	int status = 0;
	for (int k = 0; k < jobs; k++) {
		int ws = 0;
		waitpid(pid[k], &ws, 0);
		int st = WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
		if (st && !status)
			status = st;
	}
	buf[len] = 0;
	*lines = buf;
	free(fd);
	free(pid);
	free(pf);
	return status;
}

int main(int argc, char **argv)
{
	char *out = NULL, *err = NULL, **texts = calloc((size_t)argc + 1, sizeof *texts);
	if (!texts)
		return 1;
	/* every --script is read: a second one is refused as given twice */
	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--script"))
			continue;
		FILE *f = fopen(argv[i + 1], "rb");
		char *text = f ? calloc(1, SCRIPT_FILE_MAX + 1) : NULL;
		size_t n = text ? fread(text, 1, SCRIPT_FILE_MAX + 1, f) : 0;
		if (f)
			fclose(f);
		if (!text || n > SCRIPT_FILE_MAX) {
			fprintf(stderr, "lab: --script %s: %s\n", argv[i + 1],
				!f ? "cannot read the file" : "longer than 64 KiB");
			free(text);
			return 2;
		}
		text[n] = 0;
		texts[i] = text;
		argv[i] = "--script-text";
		argv[i + 1] = text;
		i++;
	}
	prog_start();
	int status = -1;
	/* a call that is itself the protocol's (a test, a debugging session)
	 * goes straight to the engine */
	int protocol = 0;
	for (int i = 2; i < argc; i++)
		protocol |= !strncmp(argv[i], "--x-", 4);
	if (argc > 1 && !protocol && (!strcmp(argv[1], "run") || !strcmp(argv[1], "fidelity"))) {
		/* the plan: every argument validated, as the call itself would */
		int n, units = 0, jobs = 0, parallel = 0;
		const char **a = with_opt(argc, argv, "--x-plan", NULL, &n);
		status = a ? lab_cli(n, a, &out, &err) : 1;
		free(a);
		if (status == 0 && sscanf(out, "units %d jobs %d parallel %d", &units, &jobs, &parallel) != 3)
			status = 1;
		if (status == 0) {
			lab_free(out);
			lab_free(err);
			out = err = NULL;
			long cores = sysconf(_SC_NPROCESSORS_ONLN);
			if (!jobs)
				jobs = cores > 0 ? (int)cores : 1;
			if (jobs > units)
				jobs = units;
			status = -1;
			if (parallel && jobs > 1) {
				char *lines = NULL;
				status = run_children(argc, argv, units, jobs, &lines);
				prog_finish();
				if (status == 0) {
					a = with_opt(argc, argv, "--x-results", lines, &n);
					status = a ? lab_cli(n, a, &out, &err) : 1;
					free(a);
				}
				free(lines);
			}
		}
	}
	if (status < 0) {
		lab_cli_set_progress(prog_update);
		status = lab_cli(argc, (const char *const *)argv, &out, &err);
		prog_finish();
	}
	if (out)
		fputs(out, stdout);
	if (err)
		fputs(err, stderr);
	lab_free(out);
	lab_free(err);
	for (int i = 0; i < argc; i++)
		free(texts[i]);
	free(texts);
	return status;
}
