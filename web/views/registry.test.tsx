/*
 * registry.test.tsx - each experiment's view is its own module, loaded on
 * demand: the page gets a component at once (viewFor), which keeps the
 * picture's place until the module is here and then draws the view itself,
 * with no placeholder in between; a module that cannot be loaded is said in
 * place instead of breaking the page.
 */
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { readFixture } from './__fixtures__/fixtures';
import { preloadView, viewFor, VIEWS } from './registry';

const draw = (name: string): string => {
  const fx = readFixture(name);
  const View = viewFor(name)!;
  return renderToStaticMarkup(<View info={fx.info} params={fx.params} runs={fx.runs} emphasis="none" seed={fx.seed} view={{}} />);
};

describe('views load by experiment', () => {
  it('has no view for an experiment without an entry', () => {
    expect(viewFor('no-such-experiment')).toBeNull();
  });

  it('keeps the picture place while the module loads, then draws the view itself', async () => {
    // nothing asked for torture's view yet in this file: the first draw is the placeholder
    expect(draw('torture')).toContain('Loading the picture');
    await preloadView('torture');
    const html = draw('torture');
    expect(html).not.toContain('Loading the picture');
    expect(html).toMatch(/<svg class="chart/);
  });

  it('gives the same component for every page of an experiment (React keeps its state)', () => {
    expect(viewFor('bonnie')).toBe(viewFor('bonnie'));
  });

  it('draws a view whose module is already here in its first render, with no placeholder', async () => {
    await preloadView('receive'); // before any page drew it: the lazy wrapper has not asked yet
    expect(draw('receive')).not.toContain('Loading the picture');
  });

  it('says in place that a view could not be loaded', async () => {
    VIEWS['broken-view'] = { load: () => Promise.reject(new Error('network down')) };
    try {
      await preloadView('broken-view');
      const View = viewFor('broken-view')!;
      const fx = readFixture('torture');
      const html = renderToStaticMarkup(<View info={fx.info} params={fx.params} runs={fx.runs} emphasis="none" seed={fx.seed} view={{}} />);
      expect(html).toContain('role="alert"');
      expect(html).toContain('network down');
    } finally {
      delete VIEWS['broken-view'];
    }
  });
});
