/**
 * The native module's path, found as `echomq module path` finds it (src/cli/module-files.ts):
 * `ECHOMQ_MODULE`, else a platform package, else the release build in `module/target`. Run as a
 * command (`npm run -s module-path`), it prints the path, or says how to build it and exits 1.
 */
import { findModule } from "../src/cli/module-files.js";
import { isMain } from "./is-main.js";

/** The module `valkey-server --loadmodule` takes; a clear error when it is not built. */
export function modulePath(): string {
  const found = findModule();
  if (!found)
    throw new Error(
      "the native module is not built yet: run 'bash scripts/setup.sh' (or 'cd module && cargo build --release')",
    );
  return found;
}

if (isMain(import.meta.url)) {
  try {
    console.log(modulePath());
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
