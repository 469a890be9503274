/* Tag.tsx - where a number comes from, as a small badge: simulated by this run, published, fitted, or measured on real hardware. */
export function Tag({ kind, title }: { kind: 'simulated' | 'published' | 'fitted' | 'measured'; title?: string }) {
  const short = { simulated: 'sim', published: 'pub', fitted: 'fit', measured: 'meas' }[kind];
  return (
    <span className={`tag tag-${kind}`} title={title ?? kind}>
      {short}
    </span>
  );
}
