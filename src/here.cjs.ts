/**
 * The CommonJS build's `here.js` (see `here.ts`): compiled to `dist/cjs/src/`, it points at the
 * ESM build's `dist/src/`, where the `.lua` scripts, the dashboard's assets and `protocol/` are.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export const SRC: URL = pathToFileURL(join(__dirname, "..", "..", "src", "/"));
