/**
 * Running the built `echomq` binary (`dist/src/cli/main.js`, made by `npm run build`) as a child
 * process: its exit code, stdout and stderr, and its `--json` output parsed.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { until } from "./until.js";

const BIN = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Fails with a clear message when the binary was not built. */
export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first`);
}

/** Runs `echomq <args…>` to its end (env: the test's, without VALKEY_URL, plus `env`). */
export function echomq(args: readonly string[], env: Record<string, string> = {}): Promise<Ran> {
  const { VALKEY_URL: _, ...base } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...base, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs `echomq <args…> --json`, requires exit 0, and parses stdout. */
export async function echomqJson<T = unknown>(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<T> {
  const ran = await echomq([...args, "--json"], env);
  if (ran.code !== 0)
    throw new Error(`echomq ${args.join(" ")} exited ${ran.code}: ${ran.stderr}${ran.stdout}`);
  return JSON.parse(ran.stdout) as T;
}

/** A long-running `echomq` (events --follow): its lines as they come, stopped with SIGTERM. */
export function follow(args: readonly string[]) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  let stderr = "";
  let buffered = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    lines.push(...parts.filter((l) => l !== ""));
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    lines,
    stderr: () => stderr,
    async until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
      await until(() => `${what}; stderr: ${stderr}; lines: ${lines.join("\n")}`, check, ms);
    },
    async stop(): Promise<number | null> {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
