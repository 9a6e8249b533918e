/**
 * The native module's path: `ECHOMQ_MODULE`, else the release build in `module/target`. Run as
 * a command (`npm run -s module-path`), it prints the path, or says how to build it and exits 1.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isMain } from "./is-main.js";

/** The module `valkey-server --loadmodule` takes; a clear error when it is not built. */
export function modulePath(): string {
  if (process.env.ECHOMQ_MODULE) return process.env.ECHOMQ_MODULE;
  const path = fileURLToPath(new URL("../module/target/release/libechomq.so", import.meta.url));
  if (!existsSync(path)) {
    throw new Error(`the native module is not built yet: run 'bash scripts/setup.sh' (expected ${path})`);
  }
  return path;
}

if (isMain(import.meta.url)) {
  try {
    console.log(modulePath());
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
