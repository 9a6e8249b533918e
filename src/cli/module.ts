/**
 * `module build|path` (the native module from the crate's source the package ships, and where
 * it is) and `server` (a local valkey-server with the module loaded and branded, for development).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { installModuleBrand } from "../connector/install.js";
import { WIRE6_BRAND } from "../engine/fence.js";
import { EchoMQError } from "../errors.js";
import { intOption } from "./args.js";
import type { Command } from "./command.js";
import { UsageError } from "./errors.js";
import { buildModule, requireModule, targetDir } from "./module-files.js";

export const module: Command = {
  name: "module",
  summary: "the native module (wire 6): build it from the shipped source, or print its path",
  usage: "build [--out <dir>] | path",
  options: {
    out: {
      type: "string",
      value: "<dir>",
      help: "build: cargo's target dir (default $CARGO_TARGET_DIR, else the package's module/target)",
    },
  },
  positionals: [{ name: "action", required: true }],
  async run(ctx, { values, positionals }) {
    const action = positionals.action as string;
    if (action === "path") {
      const path = requireModule();
      return { json: { path }, text: path };
    }
    if (action !== "build")
      throw new UsageError(`unknown action ${JSON.stringify(action)}: build or path`, "module");
    const target = targetDir(values.out as string | undefined);
    ctx.io.err(`building the module (cargo build --release, target ${target}); a first build takes minutes`);
    const path = await buildModule(target, (chunk) => process.stderr.write(chunk));
    return { json: { path }, text: path };
  },
};

/** Waits for the node to take the brand (it answers once loaded); the child's exit fails it. */
async function brandWhenUp(child: ChildProcess, port: number): Promise<void> {
  let last: unknown;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) break;
    try {
      await installModuleBrand({ host: "127.0.0.1", port });
      return;
    } catch (err) {
      last = err;
      await sleep(50);
    }
  }
  throw new EchoMQError(
    "EMQ_SERVER_FAILED",
    `valkey-server did not come up on 127.0.0.1:${port}${child.exitCode !== null ? ` (exited ${child.exitCode})` : ""}: ${(last as Error)?.message ?? "no answer"}`,
  );
}

export const server: Command = {
  name: "server",
  summary: "start a local valkey-server with the module loaded and branded (development; Ctrl-C stops it)",
  usage: "[--port n] [--dir <dir>]",
  options: {
    port: { type: "string", value: "<n>", help: "the port on 127.0.0.1 (default 6379)" },
    dir: { type: "string", value: "<dir>", help: "the server's working dir (default a new temp dir)" },
  },
  positionals: [],
  async run(ctx, { values }) {
    const port = intOption(values, "port", 6379, 1, 65_535, "server")!;
    const so = requireModule();
    if (spawnSync("valkey-server", ["--version"]).error) {
      throw new EchoMQError(
        "EMQ_NO_SERVER",
        "valkey-server is not installed (or not on PATH): install Valkey 8 or later (Debian/Ubuntu: apt-get install valkey-server; macOS: brew install valkey; or https://valkey.io/download), then run this again",
      );
    }
    const dir = values.dir ? resolve(values.dir as string) : mkdtempSync(join(tmpdir(), "echomq-server-"));
    const args = [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--loadmodule",
      so,
    ];
    const child = spawn("valkey-server", args, { stdio: ["ignore", "inherit", "inherit"] });
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    const stop = () => child.kill("SIGTERM");
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    try {
      await brandWhenUp(child, port);
      ctx.io.out(
        `redis://127.0.0.1:${port}  (module ${so}, branded ${WIRE6_BRAND} for wire 6; Ctrl-C stops it)`,
      );
      await exited;
    } finally {
      stop();
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    }
    return undefined;
  },
};
