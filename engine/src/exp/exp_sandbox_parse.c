/*
 * exp_sandbox_parse.c - the sandbox's command language: parse a script and
 * check it against a model of the namespace it builds (exp_sandbox.h), so
 * that a bad line is refused before anything runs.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exp_sandbox.h"
#include "lab.h"
#include "labmem.h"

const char *const sb_op_names[SB_NOPS] = {
	"pwrite", "pread", "truncate", "fsync", "fdatasync", "seek",
	"mkdir", "touch", "rm", "mv", "sync",
	"subvolume create", "subvolume snapshot", "subvolume delete", "quota enable", "powercut",
	"falloc",
};

typedef struct pstate {
	sb_script *s;
	char *err;
	size_t errlen;
	int line;
	const char *text;   /* the command being parsed */
	int cur;            /* the entry the last xfs_io command named, -1 */
	int powercut;       /* a powercut was seen */
} pstate;

static int fail(pstate *ps, int code, const char *fmt, ...)
{
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->errlen, "line %d: %.60s: %s", ps->line, ps->text, msg);
	return code;
}

/* Copy a string, clipped to n - 1 bytes (a path is checked for length
 * before it is kept; a command's text is kept clipped). */
static void set_str(char *dst, size_t n, const char *src)
{
	size_t k = strlen(src);
	if (k >= n)
		k = n - 1;
	memcpy(dst, src, k);
	dst[k] = 0;
}

/* ---- the namespace model ------------------------------------------------ */

static uint32_t path_hash(const char *p)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

static void hash_put(sb_script *s, int i)
{
	uint32_t m = (uint32_t)s->hcap - 1, k = path_hash(s->ents[i].path) & m;
	while (s->hash[k])
		k = (k + 1) & m;
	s->hash[k] = i + 1;
	s->hn++;
}

/* Index entry i under its path now; LAB_ENOMEM if the table cannot grow. */
static int ns_index(sb_script *s, int i)
{
	if ((s->hn + 1) * 2 > s->hcap) {
		int nc = s->hcap ? s->hcap * 2 : 256;
		while (s->nents * 2 > nc)
			nc *= 2;
		int *h = lab_calloc((size_t)nc, sizeof *h);
		if (!h)
			return LAB_ENOMEM;
		free(s->hash);
		s->hash = h;
		s->hcap = nc;
		s->hn = 0;
		for (int j = 0; j < s->nents; j++)
			if (j != i && s->ents[j].live)
				hash_put(s, j);
	}
	hash_put(s, i);
	return 0;
}

/* The live entry of that path (the newest, as a scan from the end finds). */
static int ns_find(const sb_script *s, const char *path)
{
	if (!s->hcap)
		return -1;
	uint32_t m = (uint32_t)s->hcap - 1, k = path_hash(path) & m;
	int best = -1;
	for (; s->hash[k]; k = (k + 1) & m) {
		int i = s->hash[k] - 1;
		if (i > best && s->ents[i].live && !strcmp(s->ents[i].path, path))
			best = i;
	}
	return best;
}

static int ns_add(pstate *ps, const char *path, int kind, int sv)
{
	sb_script *s = ps->s;
	if (s->nfiles >= SB_MAX_ENTS)
		return fail(ps, LAB_ERANGE, "at most %d names in the file system", SB_MAX_ENTS);
	if (s->nents == s->cap) {
		int nc = s->cap ? s->cap * 2 : 64;
		sb_ent *e = lab_realloc(s->ents, (size_t)nc * sizeof *e);
		if (!e)
			return fail(ps, LAB_ENOMEM, "out of memory");
		s->ents = e;
		s->cap = nc;
	}
	sb_ent *e = &s->ents[s->nents++];
	memset(e, 0, sizeof *e);
	set_str(e->path, sizeof e->path, path);
	e->kind = kind;
	e->sv = sv;
	e->parent_sv = sv;
	e->src = -1;
	e->live = 1;
	if (ns_index(s, s->nents - 1))
		return fail(ps, LAB_ENOMEM, "out of memory");
	s->nfiles++;
	if (s->nfiles > s->max_live)
		s->max_live = s->nfiles;
	return 0;
}

/* Whether path a is b or below it. */
static int below(const char *a, const char *b)
{
	size_t n = strlen(b);
	if (!strcmp(b, "/"))
		return 1;
	return !strncmp(a, b, n) && (a[n] == '/' || a[n] == 0);
}

static int has_children(const sb_script *s, int d)
{
	for (int i = 0; i < s->nents; i++)
		if (i != d && s->ents[i].live && below(s->ents[i].path, s->ents[d].path))
			return 1;
	return 0;
}

/* The directory part of path into dir ("/" for a top-level name). */
static void dirname_of(const char *path, char *dir)
{
	const char *sl = strrchr(path, '/');
	size_t n = sl && sl != path ? (size_t)(sl - path) : 1;
	memcpy(dir, path, n);
	dir[n] = 0;
}

/* A well-formed absolute path: "/", or /name[/name...] of [A-Za-z0-9._-]. */
static int check_path(pstate *ps, const char *p)
{
	if (p[0] != '/')
		return fail(ps, LAB_EINVAL, "'%.40s': paths start with / (the file system's top)", p);
	if (strlen(p) >= SB_MAX_PATH)
		return fail(ps, LAB_ERANGE, "path longer than %d characters", SB_MAX_PATH - 1);
	if (!strcmp(p, "/"))
		return 0;
	const char *c = p + 1;
	for (;;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		if (n == 0)
			return fail(ps, LAB_EINVAL, "'%.40s': empty name in the path", p);
		if (n > SB_MAX_NAME)
			return fail(ps, LAB_ERANGE, "a name longer than %d characters", SB_MAX_NAME);
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return fail(ps, LAB_EINVAL, "'%.40s': . and .. are not supported", p);
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)c[i]) && c[i] != '.' && c[i] != '_' && c[i] != '-')
				return fail(ps, LAB_EINVAL, "'%.40s': names use letters, digits, . _ -", p);
		if (!e)
			return 0;
		c = e + 1;
	}
}

/* The parent directory of a new name: it must exist and be a directory or
 * a subvolume; *sv gets the subvolume the name will live in. */
static int new_name(pstate *ps, const char *path, int *sv, int *dir_out)
{
	if (!strcmp(path, "/"))
		return fail(ps, LAB_EINVAL, "/ exists");
	if (ns_find(ps->s, path) >= 0)
		return fail(ps, LAB_EINVAL, "%.60s exists", path);
	char dir[SB_MAX_PATH];
	dirname_of(path, dir);
	int d = ns_find(ps->s, dir);
	if (d < 0)
		return fail(ps, LAB_ENOENT, "no directory %.60s", dir);
	const sb_ent *de = &ps->s->ents[d];
	if (de->kind == SB_FILE)
		return fail(ps, LAB_EINVAL, "%.60s is a file, not a directory", dir);
	if (de->snapshot)
		return fail(ps, LAB_EINVAL, "%.60s is in a snapshot: snapshots are read-only here", dir);
	*sv = de->sv;
	if (dir_out)
		*dir_out = d;
	return 0;
}

/* path's last name into name. */
static void basename_of(const char *path, char *name, size_t n)
{
	const char *sl = strrchr(path, '/');
	snprintf(name, n, "%s", sl ? sl + 1 : path);
}

/* The directory entry an existing path lives in, and its last name. */
static void locate(pstate *ps, const char *path, int *dir, char *name, size_t n)
{
	char d[SB_MAX_PATH];
	dirname_of(path, d);
	*dir = ns_find(ps->s, d);
	basename_of(path, name, n);
}

/* An existing name of one of the kinds in mask (bit per SB_*). */
static int existing(pstate *ps, const char *path, unsigned mask, int *out)
{
	int i = ns_find(ps->s, path);
	if (i < 0)
		return fail(ps, LAB_ENOENT, "no such file or directory: %.60s", path);
	int k = ps->s->ents[i].kind;
	if (!(mask & (1u << k)))
		return fail(ps, LAB_EINVAL, "%.60s is a %s", path,
			    k == SB_FILE ? "file" : k == SB_DIR ? "directory" : "subvolume");
	*out = i;
	return 0;
}

/* ---- lexing ------------------------------------------------------------- */

#define MAXW 8
typedef struct words {
	char w[MAXW][SB_MAX_PATH + 8];
	int n;
} words;

static int split_words(pstate *ps, const char *cmd, words *ws)
{
	ws->n = 0;
	const char *c = cmd;
	while (*c) {
		while (*c == ' ' || *c == '\t')
			c++;
		if (!*c)
			break;
		const char *e = c;
		while (*e && *e != ' ' && *e != '\t')
			e++;
		if (ws->n == MAXW)
			return fail(ps, LAB_EINVAL, "too many words");
		size_t n = (size_t)(e - c);
		if (n >= sizeof ws->w[0])
			return fail(ps, LAB_ERANGE, "a word longer than %d characters", SB_MAX_PATH);
		memcpy(ws->w[ws->n], c, n);
		ws->w[ws->n][n] = 0;
		ws->n++;
		c = e;
	}
	return 0;
}

/* A size as xfs_io reads it: decimal or 0x hex, optional k/m/g (binary)
 * or b (bytes) suffix. */
static int parse_num(pstate *ps, const char *what, const char *w, uint64_t *v)
{
	const char *c = w;
	int base = 10;
	if (c[0] == '0' && (c[1] == 'x' || c[1] == 'X'))
		base = 16, c += 2;
	if (!isxdigit((unsigned char)*c) || (base == 10 && !isdigit((unsigned char)*c)))
		return fail(ps, LAB_EINVAL, "%s '%.20s' is not a number", what, w);
	uint64_t x = 0;
	for (; *c && (base == 16 ? isxdigit((unsigned char)*c) : isdigit((unsigned char)*c)); c++) {
		int d = isdigit((unsigned char)*c) ? *c - '0' : (tolower((unsigned char)*c) - 'a' + 10);
		if (x > (UINT64_C(1) << 50))
			return fail(ps, LAB_ERANGE, "%s '%.20s' is too large", what, w);
		x = x * (uint64_t)base + (uint64_t)d;
	}
	int sh = 0;
	if (*c) {
		switch (tolower((unsigned char)*c)) {
		case 'b': sh = 0; break;
		case 'k': sh = 10; break;
		case 'm': sh = 20; break;
		case 'g': sh = 30; break;
		default:
			return fail(ps, LAB_EINVAL, "%s '%.20s': unknown suffix (k, m, g)", what, w);
		}
		if (c[1] && !((c[1] == 'i' || c[1] == 'I') && (c[2] == 'b' || c[2] == 'B') && !c[3]))
			return fail(ps, LAB_EINVAL, "%s '%.20s': unknown suffix (k, m, g)", what, w);
	}
	if (x > (UINT64_C(1) << 40))
		return fail(ps, LAB_ERANGE, "%s '%.20s' is too large", what, w);
	*v = x << sh;
	return 0;
}

static int human(char *buf, size_t n, uint64_t v)
{
	if (v >= (1u << 20) && v % (1u << 20) == 0)
		return snprintf(buf, n, "%llu MiB", (unsigned long long)(v >> 20));
	return snprintf(buf, n, "%llu bytes", (unsigned long long)v);
}

/* ---- one command ---------------------------------------------------------- */

/* The file an xfs_io command acts on: words[1] if it is a path (it
 * becomes the open file), else the open file. *at: the first argument's
 * word. */
static int xfs_file(pstate *ps, words *ws, sb_cmd *c, int *at)
{
	if (ws->n > 1 && ws->w[1][0] == '/') {
		int rc = check_path(ps, ws->w[1]);
		if (!rc)
			rc = existing(ps, ws->w[1], (1u << SB_FILE) | (c->op == SB_FSYNC || c->op == SB_FDATASYNC
							? (1u << SB_DIR) | (1u << SB_SUBVOL) : 0), &c->ent);
		if (rc)
			return rc;
		*at = 2;
	} else {
		if (ps->cur < 0 || !ps->s->ents[ps->cur].live)
			return fail(ps, LAB_EINVAL, "which file? name it (%s /f ...) or touch one first",
				    sb_op_names[c->op]);
		c->ent = ps->cur;
		*at = 1;
	}
	set_str(c->path, sizeof c->path, ps->s->ents[c->ent].path);
	if (ps->s->ents[c->ent].snapshot && c->op != SB_FSYNC && c->op != SB_FDATASYNC)
		return fail(ps, LAB_ENOTSUP, "%.60s is in a snapshot: its files are not opened here",
			    c->path);
	if (ps->s->ents[c->ent].kind == SB_FILE)
		ps->cur = c->ent;
	return 0;
}

static int nargs(pstate *ps, const words *ws, int at, int want, const char *usage)
{
	if (ws->n - at != want)
		return fail(ps, LAB_EINVAL, "usage: %s", usage);
	return 0;
}

static int parse_xfs(pstate *ps, words *ws, sb_cmd *c)
{
	/* FALLOC_FL_KEEP_SIZE leaves extents past EOF, which the engine's data
	 * path never has (its checker refuses them) */
	if (c->op == SB_FALLOC && ws->n > 1 && ws->w[1][0] == '-')
		return fail(ps, LAB_ENOTSUP, "falloc %.8s is not modelled (the engine keeps no extent past EOF): "
					     "falloc [PATH] OFF LEN", ws->w[1]);
	int at = 1, rc = xfs_file(ps, ws, c, &at);
	if (rc)
		return rc;
	char h[32];
	switch (c->op) {
	case SB_PWRITE:
	case SB_PREAD:
		if ((rc = nargs(ps, ws, at, 2, c->op == SB_PWRITE ? "pwrite [PATH] OFF LEN"
							      : "pread [PATH] OFF LEN")) ||
		    (rc = parse_num(ps, "OFF", ws->w[at], &c->a)) ||
		    (rc = parse_num(ps, "LEN", ws->w[at + 1], &c->b)))
			return rc;
		if (c->b == 0)
			return fail(ps, LAB_EINVAL, "LEN must be at least 1");
		if (c->b > SB_MAX_IO)
			return human(h, sizeof h, SB_MAX_IO), fail(ps, LAB_ERANGE, "LEN at most %s", h);
		if (c->op == SB_PWRITE && c->a + c->b > SB_MAX_FILE)
			return human(h, sizeof h, SB_MAX_FILE),
			       fail(ps, LAB_ERANGE, "files end at %s here (OFF + LEN)", h);
		return 0;
	case SB_FALLOC:
		if ((rc = nargs(ps, ws, at, 2, "falloc [PATH] OFF LEN")) ||
		    (rc = parse_num(ps, "OFF", ws->w[at], &c->a)) ||
		    (rc = parse_num(ps, "LEN", ws->w[at + 1], &c->b)))
			return rc;
		if (c->b == 0)
			return fail(ps, LAB_EINVAL, "LEN must be at least 1");
		if (c->b > SB_MAX_IO)
			return human(h, sizeof h, SB_MAX_IO), fail(ps, LAB_ERANGE, "LEN at most %s", h);
		if (c->a + c->b > SB_MAX_FILE)
			return human(h, sizeof h, SB_MAX_FILE),
			       fail(ps, LAB_ERANGE, "files end at %s here (OFF + LEN)", h);
		return 0;
	case SB_TRUNCATE:
		if ((rc = nargs(ps, ws, at, 1, "truncate [PATH] SIZE")) ||
		    (rc = parse_num(ps, "SIZE", ws->w[at], &c->a)))
			return rc;
		if (c->a > SB_MAX_FILE)
			return human(h, sizeof h, SB_MAX_FILE), fail(ps, LAB_ERANGE, "SIZE at most %s", h);
		return 0;
	case SB_FSYNC:
	case SB_FDATASYNC:
		return nargs(ps, ws, at, 0, c->op == SB_FSYNC ? "fsync [PATH]" : "fdatasync [PATH]");
	case SB_SEEK:
		if ((rc = nargs(ps, ws, at, 2, "seek [PATH] -d|-h OFF")))
			return rc;
		if (strcmp(ws->w[at], "-d") && strcmp(ws->w[at], "-h"))
			return fail(ps, LAB_EINVAL, "seek takes -d (data) or -h (hole)");
		c->hole = ws->w[at][1] == 'h';
		if ((rc = parse_num(ps, "OFF", ws->w[at + 1], &c->a)))
			return rc;
		if (c->a > SB_MAX_FILE)
			return fail(ps, LAB_ERANGE, "OFF past the largest file");
		return 0;
	default:
		return fail(ps, LAB_EINVAL, "internal: not an xfs_io command");
	}
}

/* Paths below src (src itself first) become copies under dst in slot sv. */
static int copy_tree(pstate *ps, int src, const char *dst, int sv)
{
	sb_script *s = ps->s;
	char sp[SB_MAX_PATH];
	set_str(sp, sizeof sp, s->ents[src].path);
	size_t sn = !strcmp(sp, "/") ? 0 : strlen(sp);
	int n = s->nents;
	for (int i = 0; i < n; i++) {
		if (!s->ents[i].live || !below(s->ents[i].path, sp))
			continue;
		if (i != src && s->ents[i].kind == SB_SUBVOL)
			continue; /* a nested subvolume is not part of a snapshot */
		if (i != src && s->ents[i].sv != s->ents[src].sv)
			continue; /* inside a nested subvolume */
		char np[SB_MAX_PATH * 2];
		snprintf(np, sizeof np, "%s%s", dst, i == src ? "" : s->ents[i].path + sn);
		if (strlen(np) >= SB_MAX_PATH)
			return fail(ps, LAB_ERANGE, "a path of the snapshot is longer than %d", SB_MAX_PATH - 1);
		int k = s->ents[i].kind;
		int rc = ns_add(ps, np, i == src ? SB_SUBVOL : k, sv);
		if (rc)
			return rc;
		sb_ent *e = &s->ents[s->nents - 1];
		e->src = i;
		e->snapshot = 1;
	}
	return 0;
}

static void ns_remove_below(sb_script *s, int top)
{
	char p[SB_MAX_PATH];
	set_str(p, sizeof p, s->ents[top].path);
	for (int i = 0; i < s->nents; i++)
		if (s->ents[i].live && below(s->ents[i].path, p)) {
			s->ents[i].live = 0;
			s->nfiles--;
		}
}

static int parse_btrfs(pstate *ps, words *ws, sb_cmd *c)
{
	sb_script *s = ps->s;
	int rc, sv;
	if (ws->n >= 3 && !strcmp(ws->w[1], "quota") && !strcmp(ws->w[2], "enable")) {
		c->op = SB_QUOTA_ENABLE;
		if (ws->n > 4 || (ws->n == 4 && strcmp(ws->w[3], "/")))
			return fail(ps, LAB_EINVAL, "usage: btrfs quota enable [/]");
		return 0;
	}
	if (ws->n < 3 || (strcmp(ws->w[1], "subvolume") && strcmp(ws->w[1], "sub")))
		return fail(ps, LAB_EINVAL, "btrfs subvolume create|snapshot|delete, or btrfs quota enable");
	const char *verb = ws->w[2];
	if (!strcmp(verb, "create")) {
		c->op = SB_SUBVOL_CREATE;
		if ((rc = nargs(ps, ws, 3, 1, "btrfs subvolume create PATH")) ||
		    (rc = check_path(ps, ws->w[3])) || (rc = new_name(ps, ws->w[3], &sv, &c->dir)))
			return rc;
		if (s->nsv >= SB_MAX_SV)
			return fail(ps, LAB_ERANGE, "at most %d subvolumes and snapshots", SB_MAX_SV - 1);
		set_str(c->path, sizeof c->path, ws->w[3]);
		basename_of(ws->w[3], c->name, sizeof c->name);
		if ((rc = ns_add(ps, ws->w[3], SB_SUBVOL, s->nsv)))
			return rc;
		s->ents[s->nents - 1].parent_sv = sv;
		c->ent = s->nents - 1;
		s->nsv++;
		return 0;
	}
	if (!strcmp(verb, "snapshot")) {
		c->op = SB_SNAPSHOT;
		int at = 3, src;
		if (ws->n > 3 && !strcmp(ws->w[3], "-r"))
			at = 4;
		if ((rc = nargs(ps, ws, at, 2, "btrfs subvolume snapshot [-r] SRC DST")) ||
		    (rc = check_path(ps, ws->w[at])) || (rc = check_path(ps, ws->w[at + 1])) ||
		    (rc = existing(ps, ws->w[at], 1u << SB_SUBVOL, &src)))
			return rc;
		if (s->ents[src].snapshot)
			return fail(ps, LAB_ENOTSUP, "a snapshot of a snapshot is not modelled");
		if ((rc = new_name(ps, ws->w[at + 1], &sv, &c->dir)))
			return rc;
		if (s->nsv >= SB_MAX_SV)
			return fail(ps, LAB_ERANGE, "at most %d subvolumes and snapshots", SB_MAX_SV - 1);
		set_str(c->path, sizeof c->path, ws->w[at]);
		snprintf(c->path2, sizeof c->path2, "%s", ws->w[at + 1]);
		basename_of(ws->w[at + 1], c->name2, sizeof c->name2);
		c->ent = src;
		c->first_new = s->nents;
		if ((rc = copy_tree(ps, src, ws->w[at + 1], s->nsv)))
			return rc;
		c->nnew = s->nents - c->first_new;
		c->ent2 = c->first_new;
		s->ents[c->first_new].parent_sv = sv;
		s->nsv++;
		return 0;
	}
	if (!strcmp(verb, "delete")) {
		c->op = SB_SUBVOL_DELETE;
		if ((rc = nargs(ps, ws, 3, 1, "btrfs subvolume delete PATH")) ||
		    (rc = check_path(ps, ws->w[3])) ||
		    (rc = existing(ps, ws->w[3], 1u << SB_SUBVOL, &c->ent)))
			return rc;
		if (c->ent == 0)
			return fail(ps, LAB_EINVAL, "the top-level subvolume cannot be deleted");
		for (int i = 0; i < s->nents; i++)
			if (i != c->ent && s->ents[i].live && s->ents[i].kind == SB_SUBVOL &&
			    below(s->ents[i].path, ws->w[3]))
				return fail(ps, LAB_EINVAL, "it holds subvolume %.40s: delete that first",
					    s->ents[i].path);
		set_str(c->path, sizeof c->path, ws->w[3]);
		locate(ps, ws->w[3], &c->dir, c->name, sizeof c->name);
		ns_remove_below(s, c->ent);
		return 0;
	}
	return fail(ps, LAB_EINVAL, "btrfs subvolume create|snapshot|delete");
}

static int parse_cmd(pstate *ps, const char *cmd, sb_cmd *c)
{
	sb_script *s = ps->s;
	words ws;
	int rc = split_words(ps, cmd, &ws);
	if (rc)
		return rc;
	const char *v = ws.w[0];
	c->ent = c->ent2 = c->dir = c->dir2 = -1;
	if (ps->powercut)
		return fail(ps, LAB_EINVAL, "the script ended at the powercut (the sandbox reports what a "
					    "mount finds; it does not run on the replayed file system)");
	if (!strcmp(v, "xfs_io"))
		return fail(ps, LAB_EINVAL, "type xfs_io's commands alone: pwrite /f 0 4k");
	if (!strcmp(v, "reflink") || !strcmp(v, "ln") || !strcmp(v, "link"))
		return fail(ps, LAB_ENOTSUP, "not modelled: the engine has no %s yet",
			    v[0] == 'r' ? "clone (shared extents: a second data ref)" : "hard link (a second name of an inode)");
	static const struct { const char *w; sb_op op; } xfs[] = {
		{ "pwrite", SB_PWRITE }, { "pread", SB_PREAD }, { "truncate", SB_TRUNCATE },
		{ "fsync", SB_FSYNC }, { "fdatasync", SB_FDATASYNC }, { "seek", SB_SEEK },
		{ "falloc", SB_FALLOC }, { "fallocate", SB_FALLOC },
	};
	for (size_t i = 0; i < sizeof xfs / sizeof xfs[0]; i++)
		if (!strcmp(v, xfs[i].w)) {
			c->op = xfs[i].op;
			return parse_xfs(ps, &ws, c);
		}
	if (!strcmp(v, "sync")) {
		c->op = SB_SYNC;
		return nargs(ps, &ws, 1, 0, "sync");
	}
	if (!strcmp(v, "powercut")) {
		c->op = SB_POWERCUT;
		ps->powercut = 1;
		return nargs(ps, &ws, 1, 0, "powercut");
	}
	if (!strcmp(v, "btrfs"))
		return parse_btrfs(ps, &ws, c);
	int sv;
	if (!strcmp(v, "mkdir")) {
		c->op = SB_MKDIR;
		if ((rc = nargs(ps, &ws, 1, 1, "mkdir PATH")) || (rc = check_path(ps, ws.w[1])) ||
		    (rc = new_name(ps, ws.w[1], &sv, &c->dir)) || (rc = ns_add(ps, ws.w[1], SB_DIR, sv)))
			return rc;
		set_str(c->path, sizeof c->path, ws.w[1]);
		basename_of(ws.w[1], c->name, sizeof c->name);
		c->ent = s->nents - 1;
		return 0;
	}
	if (!strcmp(v, "touch")) {
		c->op = SB_TOUCH;
		if (ws.n == 4 && !strcmp(ws.w[1], "-n")) {
			/* touch -n N /dir/prefix: N files prefix0 .. prefixN-1 */
			if ((rc = parse_num(ps, "N", ws.w[2], &c->b)) || (rc = check_path(ps, ws.w[3])))
				return rc;
			if (c->b < 1 || c->b > SB_MAX_FILL)
				return fail(ps, LAB_ERANGE, "N from 1 to %d", SB_MAX_FILL);
			if (strlen(ws.w[3]) + 6 >= SB_MAX_PATH)
				return fail(ps, LAB_ERANGE, "path too long");
			c->first_new = s->nents;
			for (uint64_t k = 0; k < c->b; k++) {
				char p[SB_MAX_PATH + 32];
				snprintf(p, sizeof p, "%s%llu", ws.w[3], (unsigned long long)k);
				if (k == 0 && (rc = new_name(ps, p, &sv, &c->dir)))
					return rc;
				if (k && ns_find(s, p) >= 0)
					return fail(ps, LAB_EINVAL, "%.60s exists", p);
				if ((rc = ns_add(ps, p, SB_FILE, sv)))
					return rc;
			}
			c->nnew = (int)c->b;
			set_str(c->path, sizeof c->path, ws.w[3]);
			basename_of(ws.w[3], c->name, sizeof c->name);
			return 0;
		}
		if ((rc = nargs(ps, &ws, 1, 1, "touch PATH (or touch -n N /dir/prefix)")) ||
		    (rc = check_path(ps, ws.w[1])))
			return rc;
		set_str(c->path, sizeof c->path, ws.w[1]);
		int i = ns_find(s, ws.w[1]);
		if (i >= 0) {
			if (s->ents[i].kind != SB_FILE)
				return fail(ps, LAB_EINVAL, "%.60s is not a file", ws.w[1]);
			if (s->ents[i].snapshot)
				return fail(ps, LAB_ENOTSUP, "%.60s is in a snapshot", ws.w[1]);
			c->ent = i; /* touch of an existing file: its times (setattr) */
			locate(ps, ws.w[1], &c->dir, c->name, sizeof c->name);
			ps->cur = i;
			return 0;
		}
		if ((rc = new_name(ps, ws.w[1], &sv, &c->dir)) || (rc = ns_add(ps, ws.w[1], SB_FILE, sv)))
			return rc;
		basename_of(ws.w[1], c->name, sizeof c->name);
		c->ent = s->nents - 1;
		c->first_new = c->ent;
		c->nnew = 1;
		ps->cur = c->ent;
		return 0;
	}
	if (!strcmp(v, "rm") || !strcmp(v, "rmdir")) {
		c->op = SB_RM;
		int at = ws.n == 3 && (!strcmp(ws.w[1], "-r") || !strcmp(ws.w[1], "-rf")) ? 2 : 1;
		if (at == 2)
			return fail(ps, LAB_ENOTSUP, "rm -r is not modelled: remove the names one by one");
		if ((rc = nargs(ps, &ws, 1, 1, "rm PATH")) || (rc = check_path(ps, ws.w[1])) ||
		    (rc = existing(ps, ws.w[1], (1u << SB_FILE) | (1u << SB_DIR) | (1u << SB_SUBVOL), &c->ent)))
			return rc;
		if (s->ents[c->ent].kind == SB_SUBVOL)
			return fail(ps, LAB_EINVAL, "a subvolume goes with btrfs subvolume delete");
		if (s->ents[c->ent].snapshot)
			return fail(ps, LAB_ENOTSUP, "%.60s is in a snapshot: snapshots are read-only here", ws.w[1]);
		if (s->ents[c->ent].kind == SB_DIR && has_children(s, c->ent))
			return fail(ps, LAB_EINVAL, "directory not empty");
		set_str(c->path, sizeof c->path, ws.w[1]);
		locate(ps, ws.w[1], &c->dir, c->name, sizeof c->name);
		s->ents[c->ent].live = 0;
		s->nfiles--;
		return 0;
	}
	if (!strcmp(v, "mv")) {
		c->op = SB_MV;
		if ((rc = nargs(ps, &ws, 1, 2, "mv SRC DST")) || (rc = check_path(ps, ws.w[1])) ||
		    (rc = check_path(ps, ws.w[2])) ||
		    (rc = existing(ps, ws.w[1], (1u << SB_FILE) | (1u << SB_DIR) | (1u << SB_SUBVOL), &c->ent)))
			return rc;
		sb_ent *e = &s->ents[c->ent];
		if (e->kind == SB_SUBVOL)
			return fail(ps, LAB_ENOTSUP, "renaming a subvolume is not modelled");
		if (e->snapshot)
			return fail(ps, LAB_ENOTSUP, "%.60s is in a snapshot: snapshots are read-only here", ws.w[1]);
		if (below(ws.w[2], ws.w[1]))
			return fail(ps, LAB_EINVAL, "cannot move a directory into itself");
		int d = ns_find(s, ws.w[2]);
		if (d >= 0) {
			if (e->kind != SB_FILE || s->ents[d].kind != SB_FILE)
				return fail(ps, LAB_EINVAL, "%.60s exists (only a file replaces a file)", ws.w[2]);
			locate(ps, ws.w[2], &c->dir2, c->name2, sizeof c->name2);
		} else if ((rc = new_name(ps, ws.w[2], &sv, &c->dir2))) {
			return rc;
		} else {
			basename_of(ws.w[2], c->name2, sizeof c->name2);
		}
		locate(ps, ws.w[1], &c->dir, c->name, sizeof c->name);
		int dsv = d >= 0 ? s->ents[d].sv : sv;
		if (dsv != e->sv)
			return fail(ps, LAB_EINVAL, "a rename stays within its subvolume (EXDEV)");
		if (d >= 0 && s->ents[d].snapshot)
			return fail(ps, LAB_ENOTSUP, "%.60s is in a snapshot", ws.w[2]);
		set_str(c->path, sizeof c->path, ws.w[1]);
		set_str(c->path2, sizeof c->path2, ws.w[2]);
		c->ent2 = d;
		if (d >= 0) {
			s->ents[d].live = 0;
			s->nfiles--;
		}
		/* the name and everything below it move */
		size_t on = strlen(ws.w[1]);
		for (int i = 0; i < s->nents; i++) {
			if (!s->ents[i].live || !below(s->ents[i].path, ws.w[1]))
				continue;
			char np[SB_MAX_PATH * 2];
			snprintf(np, sizeof np, "%s%s", ws.w[2], s->ents[i].path + on);
			if (strlen(np) >= SB_MAX_PATH)
				return fail(ps, LAB_ERANGE, "a path would be longer than %d", SB_MAX_PATH - 1);
			set_str(s->ents[i].path, sizeof s->ents[i].path, np);
			if (ns_index(s, i))
				return fail(ps, LAB_ENOMEM, "out of memory");
		}
		return 0;
	}
	return fail(ps, LAB_EINVAL, "unknown command '%.20s' (pwrite pread truncate falloc fsync "
				    "fdatasync seek mkdir touch rm mv sync btrfs powercut)", v);
}

int sbs_count(const char *text)
{
	int n = 0, in = 0;
	for (const char *c = text ? text : ""; *c; c++) {
		if (*c == ';' || *c == '\n')
			in = 0;
		else if (*c == '#')
			while (c[1] && c[1] != ';' && c[1] != '\n')
				c++;
		else if (!in && *c != ' ' && *c != '\t' && *c != '\r')
			in = 1, n++;
	}
	return n;
}

int sbs_parse(const char *text, sb_script *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	pstate ps = { out, err, errlen, 0, "", -1, 0 };
	if (err && errlen)
		err[0] = 0;
	if (!text)
		text = "";
	if (strlen(text) > SB_MAX_SCRIPT)
		return snprintf(err, errlen, "script longer than %d characters", SB_MAX_SCRIPT), LAB_ERANGE;
	int n = sbs_count(text);
	if (n > SB_MAX_CMDS)
		return snprintf(err, errlen, "at most %d commands (the script has %d)", SB_MAX_CMDS, n),
		       LAB_ERANGE;
	out->cmds = lab_calloc((size_t)(n ? n : 1), sizeof *out->cmds);
	if (!out->cmds)
		return snprintf(err, errlen, "out of memory"), LAB_ENOMEM;
	int rc = ns_add(&ps, "/", SB_SUBVOL, 0);
	if (rc)
		return rc;
	out->nfiles = 0; /* "/" is not counted */
	out->max_live = 0;
	out->nsv = 1;
	int line = 1;
	for (const char *c = text; *c;) {
		const char *e = c;
		while (*e && *e != ';' && *e != '\n' && *e != '#')
			e++;
		const char *end = e;
		if (*e == '#')
			while (*e && *e != ';' && *e != '\n')
				e++;
		while (c < end && (*c == ' ' || *c == '\t' || *c == '\r'))
			c++;
		while (end > c && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			end--;
		if (end > c) {
			char cmd[SB_MAX_PATH * 3];
			size_t len = (size_t)(end - c);
			ps.line = line;
			if (len >= sizeof cmd) {
				ps.text = "";
				return fail(&ps, LAB_ERANGE, "a command longer than %d characters",
					    (int)sizeof cmd - 1);
			}
			memcpy(cmd, c, len);
			cmd[len] = 0;
			ps.text = cmd;
			sb_cmd *sc = &out->cmds[out->ncmds];
			memset(sc, 0, sizeof *sc);
			sc->line = line;
			set_str(sc->text, sizeof sc->text, cmd);
			if ((rc = parse_cmd(&ps, cmd, sc)))
				return rc;
			out->ncmds++;
		}
		if (!*e)
			break;
		c = e + 1;
		line++;
	}
	return 0;
}

void sbs_free(sb_script *s)
{
	free(s->cmds);
	free(s->ents);
	free(s->hash);
	memset(s, 0, sizeof *s);
}
