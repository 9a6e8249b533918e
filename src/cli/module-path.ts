import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The native module: `ECHOMQ_MODULE`, else module/target/release/libechomq.so (a clear error if not built). */
export function modulePath(): string {
  if (process.env.ECHOMQ_MODULE) return process.env.ECHOMQ_MODULE;
  const path = fileURLToPath(new URL("../../module/target/release/libechomq.so", import.meta.url));
  if (!existsSync(path)) throw new Error("the native module is not built: run 'bash scripts/setup.sh'");
  return path;
}
