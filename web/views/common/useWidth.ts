/* useWidth.ts - the pixel width of an element, kept current with a ResizeObserver (charts lay out at their real size, so type stays legible). */
import { useLayoutEffect, useRef, useState, type RefObject } from 'react';

export function useWidth<T extends HTMLElement>(fallback = 760): [RefObject<T | null>, number] {
  const ref = useRef<T | null>(null);
  const [w, setW] = useState(fallback);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = (): void => {
      const cw = Math.floor(el.clientWidth);
      if (cw > 0) setW(cw);
    };
    update();
    const ro = new ResizeObserver(update);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, w];
}
