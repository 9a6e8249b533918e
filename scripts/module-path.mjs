#!/usr/bin/env node
// Prints the path of the built native module (the file valkey-server --loadmodule takes).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const path = fileURLToPath(new URL("../module/target/release/libechomq.so", import.meta.url));
if (!existsSync(path)) {
  console.error(`the module is not built yet: run 'bash scripts/setup.sh' (expected ${path})`);
  process.exit(1);
}
console.log(path);
