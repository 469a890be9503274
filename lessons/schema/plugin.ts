/*
 * plugin.ts - the lesson schema (lesson.schema.json, the one source of the
 * format's structure) compiled by Ajv into a standalone validator at build
 * time: the app bundles the generated code (a few KB), not Ajv. The module
 * `virtual:lesson-schema` exports
 *   validate(x): boolean, with validate.errors (Ajv's error objects), and
 *   tree: the schema's shape (properties, items, $ref, oneOf) with the
 *   errorMessage of each node, for web/model/lessonFormat.ts to word each
 *   problem at its place in the lesson.
 * Descriptions (for editors) are left out of both.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import type { Plugin } from 'vite';

const SCHEMA = fileURLToPath(new URL('./lesson.schema.json', import.meta.url));
const ID = 'virtual:lesson-schema';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The schema without what only people and editors read. */
const forCode = (x: Json): Json =>
  Array.isArray(x)
    ? x.map(forCode)
    : x && typeof x === 'object'
      ? Object.fromEntries(
          Object.entries(x)
            .filter(([k, v]) => !(typeof v === 'string' && ['description', 'errorMessage', '$comment'].includes(k)))
            .filter(([k, v]) => !(typeof v === 'string' && k === 'title' && 'type' in x))
            .map(([k, v]) => [k, forCode(v)]),
        )
      : x;

const SHAPE = ['properties', 'items', 'additionalProperties', '$ref', 'definitions', 'errorMessage', 'oneOf'];

/** The schema's shape and messages: what finds a node's errorMessage from a place in the lesson. */
function treeOf(x: Json): Json {
  if (!x || typeof x !== 'object' || Array.isArray(x)) return null;
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(x)) {
    if (!SHAPE.includes(k)) continue;
    if (k === 'oneOf') out.oneOf = true;
    else if (k === 'properties' || k === 'definitions') out[k] = Object.fromEntries(Object.entries(v as Record<string, Json>).map(([n, sub]) => [n, treeOf(sub)]));
    else if (k === 'items' || k === 'additionalProperties') {
      if (v && typeof v === 'object') out[k] = treeOf(v);
    } else out[k] = v;
  }
  return out;
}

/** The validator's module source. */
export function lessonSchemaModule(schemaText = readFileSync(SCHEMA, 'utf8')): string {
  const schema = JSON.parse(schemaText) as Json;
  // messages: false: lessonFormat.ts words the problems itself (the generated code is smaller)
  const ajv = new Ajv({ allErrors: true, strict: true, messages: false, code: { source: true, esm: true } });
  const { $schema: _meta, $id: _id, ...rest } = forCode(schema) as Record<string, Json>;
  const code = standaloneCode(ajv, ajv.compile(rest));
  return `${code}\nexport const tree = ${JSON.stringify(treeOf(schema))};\n`;
}

export function lessonSchema(): Plugin {
  return {
    name: 'lesson-schema',
    resolveId: (id) => (id === ID ? `\0${ID}` : null),
    load(id) {
      if (id !== `\0${ID}`) return null;
      this.addWatchFile(SCHEMA);
      return lessonSchemaModule();
    },
  };
}
