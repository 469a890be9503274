/*
 * sandbox.ts - the sandbox page's pure parts: the script as a list of
 * commands and as the engine's `script=` setting, each command's record
 * from the run's details, the first command where two kernels differ,
 * and completion for the command box. The language itself is the
 * engine's (engine/src/exp/exp_sandbox.h): the page never checks a
 * command, the engine refuses a bad one with one line.
 */

/** One command's record (engine: exp_sandbox.c, details.commands[]). */
export interface SandboxCmd {
  line: number;
  text: string;
  op: string;
  ran: number;
  t_ns?: number;
  ns?: number;
  transid?: number;
  commits?: number;
  cows?: Record<TreeName, number>;
  items?: Record<TreeName, number>;
  /** net change in the tree's blocks (leaves + nodes) */
  blocks?: Record<TreeName, number>;
  dirty_pages?: number;
  pages_written?: number;
  log_items?: number;
  log_commits?: number;
  meta_reserved?: number;
  result?: number;
}

export type TreeName = 'fs' | 'extent' | 'csum' | 'root' | 'log';
export const TREE_NAMES: TreeName[] = ['fs', 'extent', 'csum', 'root', 'log'];

export interface PowercutFile {
  path: string;
  ino: number;
  size_now: number;
  fsynced: number;
  fsync_size?: number;
  found: number;
  found_size?: number;
  verdict: string;
}

export interface SandboxDetails {
  commands: SandboxCmd[];
  powercut?: { transid: number; files: PowercutFile[] };
  subvolumes: { path: string; root: number; snapshot: number }[];
  names: number;
  quota: number;
}

/** The recorded kinds of the commands (exp_sandbox.c: "op:" + sb_op_names, spaces as _). */
export const SANDBOX_OP_KINDS = [
  'pwrite', 'pread', 'truncate', 'fsync', 'fdatasync', 'seek', 'mkdir', 'touch', 'rm', 'mv', 'sync',
  'subvolume_create', 'subvolume_snapshot', 'subvolume_delete', 'quota_enable', 'powercut', 'falloc',
].map((o) => `op:${o}`);

/** The largest script the engine takes (SB_MAX_CMDS). */
export const MAX_COMMANDS = 256;

/** A script's commands: one a line, ';' also separates, '#' comments out. */
export function splitScript(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/[\n;]/)) {
    const c = line.replace(/#.*$/, '').trim();
    if (c) out.push(c);
  }
  return out;
}

/** The engine's `script=` setting (one line). */
export const scriptParam = (cmds: string[]): string => cmds.join('; ');

/** The details of a sandbox run, or null if they are not one's. */
export function sandboxDetails(d: Record<string, unknown> | undefined): SandboxDetails | null {
  if (!d || !Array.isArray(d.commands)) return null;
  return d as unknown as SandboxDetails;
}

/** The trees a command changed (COWed a block or changed its items); the
 * fs tree always (it is where the namespace lives). */
export function treesTouched(c: SandboxCmd | undefined): TreeName[] {
  if (!c || !c.cows || !c.items) return ['fs'];
  return TREE_NAMES.filter((t) => t === 'fs' || (c.cows![t] ?? 0) !== 0 || (c.items![t] ?? 0) !== 0 || (c.blocks?.[t] ?? 0) !== 0);
}

/** What differs between two kernels' records of one command (empty: the same). */
export function cmdDiff(a: SandboxCmd | undefined, b: SandboxCmd | undefined): string[] {
  if (!a || !b) return a === b ? [] : ['ran on one kernel only'];
  const out: string[] = [];
  if (a.ran !== b.ran) out.push('ran');
  const num = (k: keyof SandboxCmd, label: string): void => {
    if (a[k] !== b[k]) out.push(label);
  };
  for (const t of TREE_NAMES) {
    if ((a.cows?.[t] ?? 0) !== (b.cows?.[t] ?? 0)) out.push(`${t} tree COWs`);
    if ((a.items?.[t] ?? 0) !== (b.items?.[t] ?? 0)) out.push(`${t} tree items`);
    if ((a.blocks?.[t] ?? 0) !== (b.blocks?.[t] ?? 0)) out.push(`${t} tree blocks`);
  }
  num('pages_written', 'pages written');
  num('dirty_pages', 'dirty pages');
  num('log_items', 'log items');
  num('log_commits', 'log commits');
  num('commits', 'commits');
  num('result', 'result');
  num('meta_reserved', 'reserved bytes');
  num('ns', 'time');
  return out;
}

/** The first command whose records differ, with what differs; null when
 * every command did the same on both. */
export function firstDifference(a: SandboxCmd[], b: SandboxCmd[]): { index: number; what: string[] } | null {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = cmdDiff(a[i], b[i]);
    if (d.length) return { index: i, what: d };
  }
  return null;
}

export const COMMANDS = [
  'pwrite', 'pread', 'truncate', 'falloc', 'fsync', 'fdatasync', 'seek -d', 'seek -h', 'mkdir', 'touch', 'touch -n',
  'rm', 'mv', 'sync', 'btrfs subvolume create', 'btrfs subvolume snapshot', 'btrfs subvolume delete',
  'btrfs quota enable', 'powercut',
];

/** One line of help per command, for the box's list. */
export const COMMAND_HELP: Record<string, string> = {
  pwrite: 'pwrite [PATH] OFF LEN: buffered write (pages dirtied, no extent yet)',
  pread: 'pread [PATH] OFF LEN: buffered read',
  truncate: 'truncate [PATH] SIZE',
  falloc: 'falloc [PATH] OFF LEN: prealloc extents over the holes (read as holes, no checksums)',
  fsync: 'fsync [PATH]: write back, log the inode, sync the log tree',
  fdatasync: 'fdatasync [PATH]: as fsync (btrfs logs the inode either way)',
  seek: 'seek [PATH] -d|-h OFF: SEEK_DATA / SEEK_HOLE',
  mkdir: 'mkdir PATH',
  touch: 'touch PATH, or touch -n N /dir/prefix (N files)',
  rm: 'rm PATH: a file or an empty directory',
  mv: 'mv SRC DST: rename within a subvolume',
  sync: 'sync: write back every file, commit the transaction',
  btrfs: 'btrfs subvolume create|snapshot|delete, btrfs quota enable',
  powercut: 'powercut: cut the power now, mount, replay the log (ends the script)',
};

/** Completions of what is typed: command names, then the script's paths. */
export function complete(typed: string, paths: string[]): string[] {
  const t = typed.replace(/^\s+/, '');
  const words = t.split(/\s+/);
  if (words.length <= 1 || (t.startsWith('btrfs') && words.length <= 3)) {
    return COMMANDS.filter((c) => c.startsWith(t) && c !== t);
  }
  const last = words[words.length - 1] ?? '';
  if (!last.startsWith('/')) return [];
  const head = t.slice(0, t.length - last.length);
  return paths.filter((p) => p.startsWith(last) && p !== last).slice(0, 12).map((p) => head + p);
}

/** The absolute paths a script names (for completion). */
export function scriptPaths(cmds: string[]): string[] {
  const set = new Set<string>(['/']);
  for (const c of cmds) for (const w of c.split(/\s+/)) if (w.startsWith('/') && /^[/\w.-]+$/.test(w)) set.add(w);
  return [...set].sort();
}

/** An example to start from. */
export const EXAMPLE = ['mkdir /d', 'touch /d/f', 'pwrite /d/f 0 64k', 'fsync /d/f', 'pwrite /d/f 16k 4k', 'sync'];
