/*
 * Picture tests that diff as text (issue 33 item 5), as Observable Plot
 * tests its marks: every view of the registry, and the headline of each
 * before/after experiment, drawn from a small committed fixture
 * (__fixtures__/<experiment>.json: a classroom-size run, numbers rounded)
 * to static markup with numbers rounded to 0.1 px, and compared with
 * __snapshots__/<experiment>.*.svg.html. A change to a picture shows as
 * a readable diff of its marks; `-u` rewrites them after a deliberate one.
 * Each page's recorded picture (lseek cache hits, trees, file extent
 * items: views/replay/PagePicture.tsx) is drawn likewise from its
 * recorded fixture (__fixtures__/<experiment>.picture.json) into
 * __snapshots__/<experiment>.picture.svg.html.
 * (Layout, fonts, overlaps and the palette on real pages are the design
 * tests' part: e2e/design.spec.ts.)
 */
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Headline } from './common/Headline';
import { FIXTURE_SETUPS, normaliseSvg, PICTURE_SETUPS, readFixture, readPicture } from './__fixtures__/fixtures';
import { PagePicture } from './replay/PagePicture';
import { PAGE_RECORDINGS } from './replay/pageRecording';
import { VIEWS, headlineOf, labelOf, noisyOf } from './registry';

describe('every view, drawn from its fixture, matches its SVG snapshot', () => {
  it('has a fixture for every view of the registry', () => {
    expect(Object.keys(FIXTURE_SETUPS).sort()).toEqual(Object.keys(VIEWS).sort());
  });

  for (const name of Object.keys(VIEWS)) {
    it(name, async () => {
      const fx = readFixture(name);
      const View = await VIEWS[name]!.load(); // the view's own module, as a page loads it
      const html = renderToStaticMarkup(<View info={fx.info} params={fx.params} runs={fx.runs} emphasis="none" seed={fx.seed} view={{}} />);
      // something drawn, every chart named for a screen reader
      const charts = html.match(/<svg class="chart[^>]*>/g) ?? [];
      expect(charts.length, `${name} draws charts`).toBeGreaterThan(0);
      for (const c of charts) expect(c, `${name}: ${c.slice(0, 80)}`).toMatch(/aria-label="[^"]+"/);
      await expect(normaliseSvg(html)).toMatchFileSnapshot(`./__snapshots__/${name}.view.svg.html`);
    });
  }

  for (const name of Object.keys(VIEWS).filter((n) => readFixture(n).runs.before && readFixture(n).runs.after)) {
    it(`${name}: the headline comparison`, async () => {
      const fx = readFixture(name);
      const html = renderToStaticMarkup(
        <Headline info={fx.info} params={fx.params} runs={fx.runs} metrics={headlineOf(fx.info)} label={(m) => labelOf(fx.info, m)} noisy={noisyOf(fx.info, fx.params)} seed={fx.seed} />,
      );
      expect(html).toContain('data-testid="headline-bar-before"');
      await expect(normaliseSvg(html)).toMatchFileSnapshot(`./__snapshots__/${name}.headline.svg.html`);
    });
  }

  it('has a picture fixture for every page picture', () => {
    expect(Object.keys(PICTURE_SETUPS).sort()).toEqual(Object.keys(PAGE_RECORDINGS).sort());
  });

  for (const name of Object.keys(PAGE_RECORDINGS)) {
    it(`${name}: the page's recorded picture`, async () => {
      const fx = readPicture(name);
      const rec = { status: 'done' as const, progress: 1, sides: fx.sides, window: fx.window, fromFirst: fx.fromFirst, error: null, wallMs: 0, recordFrom: () => {} };
      const html = renderToStaticMarkup(<PagePicture spec={PAGE_RECORDINGS[name]!} rec={rec} view={{}} params={fx.params} />);
      expect(html).toContain('data-status="done"');
      const charts = html.match(/<svg class="chart[^>]*>/g) ?? [];
      expect(charts.length, `${name} draws its picture`).toBeGreaterThan(0);
      for (const c of charts) expect(c, `${name}: ${c.slice(0, 80)}`).toMatch(/aria-label="[^"]+"/);
      await expect(normaliseSvg(html)).toMatchFileSnapshot(`./__snapshots__/${name}.picture.svg.html`);
    });
  }
});
