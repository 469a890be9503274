/*
 * commands.ts - the current page's commands (run, cancel, next/previous
 * step) for the app-wide keyboard actions. A page registers what it can do;
 * the rest stay no-ops.
 */
import { createContext, useContext, useEffect, type MutableRefObject } from 'react';

export interface PageCommands {
  run?: () => void;
  cancel?: () => void;
  next?: () => void;
  prev?: () => void;
  /** A digit typed outside any field: a lesson step puts it in its prediction field (false: none). */
  typeGuess?: (key: string) => boolean;
}

/** A replay's playback, while one is open on the page (arrows and space drive it). */
export interface PlayerCommands {
  step(dir: 1 | -1, unit: 'event' | 'op'): void;
  playPause(): void;
}

/** The open replay, if any: one page at a time shows one. */
export const activePlayer: { current: PlayerCommands | null } = { current: null };

export const PageCommandsContext = createContext<MutableRefObject<PageCommands> | null>(null);

/** Register this page's commands for as long as it is mounted (latest closures win). */
export function usePageCommands(cmds: PageCommands): void {
  const ref = useContext(PageCommandsContext);
  useEffect(() => {
    if (!ref) return;
    ref.current = cmds;
    return () => {
      if (ref.current === cmds) ref.current = {};
    };
  });
}
