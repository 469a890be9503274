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
}

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
