/*
 * mdlight.ts - the "markdown-light" of lesson texts: paragraphs separated by
 * blank lines, lines starting with "- " as a bullet list, **bold** and
 * `code` inline. Pure parser; components render the blocks (never as HTML
 * strings, so a lesson cannot inject markup).
 */

export type Inline = { t: 'text' | 'b' | 'code'; s: string } | { t: 'claim'; s: string; ref: string };
export type Block = { type: 'p'; inl: Inline[] } | { type: 'ul'; items: Inline[][] };

/** Split one line into text, **bold**, `code` and [[number|variant.metric]]
 * runs (a claim about the run: model/lessonClaims.ts). Unclosed markers stay text. */
export function parseInline(s: string): Inline[] {
  const out: Inline[] = [];
  const re = /\*\*([^*]+)\*\*|`([^`]+)`|\[\[([^|\]]+)\|([^\]]+)\]\]/g;
  let last = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    if (m.index > last) out.push({ t: 'text', s: s.slice(last, m.index) });
    if (m[1] !== undefined) out.push({ t: 'b', s: m[1] });
    else if (m[3] !== undefined) out.push({ t: 'claim', s: m[3], ref: m[4] ?? '' });
    else out.push({ t: 'code', s: m[2] ?? '' });
    last = m.index + m[0].length;
  }
  if (last < s.length) out.push({ t: 'text', s: s.slice(last) });
  return out;
}

/** Parse a text into paragraphs and lists. */
export function parseMd(text: string): Block[] {
  const blocks: Block[] = [];
  for (const chunk of text.split(/\n\s*\n/)) {
    const lines = chunk.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
    let para: string[] = [];
    let list: Inline[][] = [];
    const flushPara = (): void => {
      if (para.length) blocks.push({ type: 'p', inl: parseInline(para.join(' ')) });
      para = [];
    };
    const flushList = (): void => {
      if (list.length) blocks.push({ type: 'ul', items: list });
      list = [];
    };
    for (const l of lines) {
      if (l.startsWith('- ')) {
        flushPara();
        list.push(parseInline(l.slice(2)));
      } else {
        flushList();
        para.push(l);
      }
    }
    flushPara();
    flushList();
  }
  return blocks;
}
