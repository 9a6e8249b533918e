/**
 * Where the package's own files are: this module's folder — `src/` when run from the sources,
 * `dist/src/` in the package, which holds the `.lua` scripts, the dashboard's assets and (beside
 * it) `protocol/`. The CommonJS build compiles `here.cjs.ts` in this file's place (it cannot say
 * `import.meta`) and points at the same `dist/src/`, so both builds read one copy of the files.
 */
export const SRC: URL = new URL("./", import.meta.url);
