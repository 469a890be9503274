/* Types for the Emscripten build output (build/wasm/lab.mjs), which ships no .d.ts. */
declare module '*/build/wasm/lab.mjs' {
  const createLabModule: (opts: Record<string, unknown>) => Promise<unknown>;
  export default createLabModule;
}
