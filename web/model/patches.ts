/*
 * patches.ts - the row of patch switches an experiment page opens with:
 * one per patch the experiment exposes (list --json's `patches`, from the
 * engine's patch table), each with its place in its series, its commit
 * title, whether the after kernel has it (its switch parameter's value),
 * and where to read its diff: upstream when the commit is on file, else
 * the lesson step that shows it. Pure; the page draws it
 * (app/PatchToggles.tsx).
 */
import type { ExperimentInfo, PatchInfo } from '../engine/types';
import type { Lesson } from './lessonFormat';

export interface PatchToggle {
  key: string;
  /** "1/9"; "" when unknown */
  series: string;
  title: string;
  help: string;
  /** the switch parameter; null: the before/after pair is the switch */
  param: string | null;
  /** applied in the after kernel as the form stands */
  on: boolean;
  /** a patch without a switch: "pair" when the before/after pair is its switch, "none" when it
   *  changes nothing the model can see (so no switch: it would be a control that cannot matter) */
  fixed: 'pair' | 'none' | null;
  /** an enum switch (one parameter over several patches, or following a
   * kernel preset): its values and the one the form holds */
  choices?: string[];
  value?: string;
  /** where its diff is: upstream commit, or a lesson step */
  href: string | null;
  hrefLabel: string;
}

const truthy = (t: string | undefined): boolean => t === undefined || !(t === '0' || t === 'false');

/** The upstream commit's page (torvalds/linux). */
export const commitUrl = (commit: string): string => `https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/commit/?id=${commit}`;

/** The first lesson step showing a diff of patch `seed` ("#/lesson/qgroup-drop?step=1"). */
export function lessonDiffLink(lessons: Lesson[], seed: string): string | null {
  for (const l of lessons) {
    if (l.seed !== seed) continue;
    const k = l.steps.findIndex((s) => s.diff);
    if (k >= 0) return `#/lesson/${l.id}${k > 0 ? `?step=${k}` : ''}`;
  }
  return null;
}

/** Whether an enum switch's value (and the kernel preset) applies the patch. */
function enumOn(sv: NonNullable<PatchInfo['switch_values']>, value: string, kernel: string): boolean {
  const x = sv[value];
  if (typeof x === 'boolean') return x;
  return x ? x[kernel] === true : false;
}

export function patchToggles(info: ExperimentInfo, values: Record<string, string>, lessons: Lesson[] = []): PatchToggle[] {
  const lessonLink = lessonDiffLink(lessons, info.seed);
  const param = (name: string | null) => (name ? info.params.find((x) => x.name === name) : undefined);
  const text = (name: string): string => {
    const p = param(name);
    return values[name] ?? (p ? String(p.default) : '');
  };
  if (info.patches)
    return info.patches.map((p) => {
      const sw = param(p.switch);
      const common = {
        key: p.id,
        series: p.series,
        title: p.title,
        help: p.help,
        param: p.switch,
        fixed: p.switch ? null : p.effect === 'none' ? ('none' as const) : ('pair' as const),
        href: p.commit ? commitUrl(p.commit) : lessonLink,
        hrefLabel: p.commit ? `commit ${p.commit}` : 'the diff, in the lesson',
      };
      if (sw && sw.type === 'enum' && p.switch_values)
        return { ...common, on: enumOn(p.switch_values, text(sw.name), text('kernel')), choices: sw.values ?? [], value: text(sw.name) };
      return { ...common, on: p.switch ? truthy(values[p.switch]) : p.applied?.after !== false };
    });
  return [];
}

/** The experiments that reproduce a seed's patch, in seed order (000 first):
 * the header and the home page list them alike; the engine's own order is
 * the order experiments were added. */
export function patchExperiments(experiments: ExperimentInfo[] | null): ExperimentInfo[] {
  return (experiments ?? []).filter((e) => e.seed !== '-').sort((a, b) => a.seed.localeCompare(b.seed));
}
