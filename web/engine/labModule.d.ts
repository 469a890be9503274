/* Types for the Emscripten build outputs (build/wasm/lab.mjs, the CLI's;
 * build/wasm-web/lab.mjs, the page's), which ship no .d.ts. */
declare module '*/build/wasm/lab.mjs' {
  const createLabModule: (opts: Record<string, unknown>) => Promise<unknown>;
  export default createLabModule;
}
declare module '*/build/wasm-web/lab.mjs' {
  const createLabModule: (opts: Record<string, unknown>) => Promise<unknown>;
  export default createLabModule;
}
