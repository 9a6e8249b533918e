/**
 * The native module (wire 6) for a user of the package: where its `.so` is (`ECHOMQ_MODULE`,
 * else the platform package `echomq-<os>-<cpu>-gnu` when installed, else the build in the
 * package's `module/target`), and building it from the crate's source the package ships.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { EchoMQError } from "../errors.js";
import { SRC } from "../here.js";

const MODULE_FILE = "libechomq.so";

/** The package's root: the nearest folder above this build with a package.json. */
function packageRoot(): string {
  let dir = fileURLToPath(SRC);
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${fileURLToPath(SRC)}`);
    dir = up;
  }
  return dir;
}

/** The prebuilt package for this platform (`echomq-linux-x64-gnu`), or null on another OS. */
function platformPackage(): string | null {
  return process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64")
    ? `echomq-linux-${process.arch}-gnu`
    : null;
}

/** Where `module build` writes: `--out`, else `CARGO_TARGET_DIR`, else the package's module/target. */
export function targetDir(out?: string, env: Record<string, string | undefined> = process.env): string {
  return resolve(out ?? env.CARGO_TARGET_DIR ?? join(packageRoot(), "module", "target"));
}

/** The `.so` a build in `target` makes. */
function builtModule(target: string): string {
  return join(target, "release", MODULE_FILE);
}

/** The module's path, or null: ECHOMQ_MODULE, the platform package, the package's own build. */
export function findModule(env: Record<string, string | undefined> = process.env): string | null {
  if (env.ECHOMQ_MODULE) return env.ECHOMQ_MODULE;
  const name = platformPackage();
  if (name) {
    try {
      const manifest = createRequire(join(packageRoot(), "package.json")).resolve(`${name}/package.json`);
      const so = join(dirname(manifest), MODULE_FILE);
      if (existsSync(so)) return so;
    } catch {
      // not installed (an optional dependency npm skipped, or another platform)
    }
  }
  const built = builtModule(targetDir(undefined, env));
  return existsSync(built) ? built : null;
}

/** The module's path, or an `EMQ_NO_MODULE` error saying what to run. */
export function requireModule(env: Record<string, string | undefined> = process.env): string {
  const found = findModule(env);
  if (found) return found;
  const name = platformPackage();
  throw new EchoMQError(
    "EMQ_NO_MODULE",
    `the native module is not built: run 'npx echomq module build'${name ? ` (or install the prebuilt '${name}')` : ""}, or set ECHOMQ_MODULE to a ${MODULE_FILE}`,
  );
}

const NO_CARGO =
  "cargo is not installed (or not on PATH): the module is Rust; install it with rustup (https://rustup.rs: curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh), then run this again";
const NO_CLANG =
  "the build needs libclang (the module's bindings are made by bindgen): install it (Debian/Ubuntu: apt-get install libclang-dev clang; Fedora: dnf install clang-devel; Alpine: apk add clang-dev), or set LIBCLANG_PATH to the folder holding libclang.so, then run this again";
const NO_CC =
  "the build needs a C compiler (the Valkey crate compiles its module API glue, a C file, with the cc crate): install one (Debian/Ubuntu: apt-get install build-essential; Fedora: dnf install gcc; Alpine: apk add build-base), or set CC to one, then run this again";

/**
 * `cargo build --release` of the shipped crate into `target`; the build's output goes to
 * `log` as it comes. Resolves the `.so` path; rejects with what to install when cargo, libclang
 * (bindgen loads it: `LIBCLANG_PATH`, else the usual places) or a C compiler (`CC`, else `cc`)
 * is missing.
 */
export async function buildModule(
  target: string,
  log: (chunk: string) => void,
  env: Record<string, string | undefined> = process.env,
): Promise<string> {
  const crate = join(packageRoot(), "module");
  if (!existsSync(join(crate, "Cargo.toml"))) {
    throw new EchoMQError(
      "EMQ_NO_CRATE",
      `the module's source is not in this package (expected ${crate}/Cargo.toml)`,
    );
  }
  const probe = spawnSync("cargo", ["--version"], { env, encoding: "utf8" });
  if (probe.error || probe.status !== 0) throw new EchoMQError("EMQ_NO_CARGO", NO_CARGO);
  let tail = "";
  const code = await new Promise<number | null>((done, fail) => {
    const child = spawn("cargo", ["build", "--release", "--manifest-path", join(crate, "Cargo.toml")], {
      env: { ...env, CARGO_TARGET_DIR: target },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-20_000);
      log(text);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", fail);
    child.on("close", done);
  });
  if (code !== 0) {
    if (/error occurred in cc-rs: failed to find tool/.test(tail)) throw new EchoMQError("EMQ_NO_CC", NO_CC);
    if (/libclang|clang-sys/i.test(tail)) throw new EchoMQError("EMQ_NO_CLANG", NO_CLANG);
    throw new EchoMQError("EMQ_BUILD_FAILED", `cargo build failed (exit ${code}); its output is above`);
  }
  const so = builtModule(target);
  if (!existsSync(so)) throw new EchoMQError("EMQ_BUILD_FAILED", `cargo built, but ${so} is not there`);
  return so;
}
