/*
 * index.ts - the lessons bundled with the app: every lessons/*.json file,
 * validated at load. A broken lesson is reported (with every problem and its
 * path), not half-shown; the others still load.
 */
import { validateLesson, type Lesson, type LessonContext } from '../model/lessonFormat';

const files = import.meta.glob<unknown>('../../lessons/*.json', { eager: true, import: 'default' });

export interface LessonLoad {
  lessons: Lesson[];
  errors: string[];
}

/** Validate every bundled lesson (against the engine's registry when given). */
export function loadLessons(ctx?: LessonContext): LessonLoad {
  const lessons: Lesson[] = [];
  const errors: string[] = [];
  for (const [path, data] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    const name = path.replace(/^.*\//, '');
    const errs = validateLesson(data, ctx);
    if (errs.length > 0) errors.push(`${name}: ${errs.join('; ')}`);
    else lessons.push(data as Lesson);
  }
  lessons.sort((a, b) => (a.seed === b.seed ? a.id.localeCompare(b.id) : a.seed === '-' ? -1 : b.seed === '-' ? 1 : a.seed.localeCompare(b.seed)));
  return { lessons, errors };
}
