/**
 * Starts a throwaway valkey-server for the demo, the stand and the bench: loopback only, a free
 * port, its own temp dir, no RDB snapshots (AOF `everysec` only when asked). `stop()` ends it
 * (SIGTERM, SIGKILL after 10 s) and removes the dir.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface EmbeddedValkeyOptions {
  /** Path of a module to load (`--loadmodule`). */
  module?: string;
  /** `appendonly yes` + `appendfsync everysec`. Default off. */
  aof?: boolean;
}

export interface EmbeddedValkey {
  host: "127.0.0.1";
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function waitForPing(port: number, deadline: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = net.connect({ host: "127.0.0.1", port });
      socket.once("connect", () => socket.write("PING\r\n"));
      socket.once("data", (data) => {
        socket.destroy();
        if (data.toString().startsWith("+PONG")) resolve();
        else retry();
      });
      socket.once("error", () => {
        socket.destroy();
        retry();
      });
    };
    const retry = () => {
      if (Date.now() > deadline) reject(new Error(`valkey-server on port ${port} did not answer PING`));
      else setTimeout(attempt, 25);
    };
    attempt();
  });
}

export async function startEmbeddedValkey(opts: EmbeddedValkeyOptions = {}): Promise<EmbeddedValkey> {
  const dir = mkdtempSync(join(tmpdir(), "echomq-"));
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
  args.push("--appendonly", opts.aof ? "yes" : "no");
  if (opts.aof) args.push("--appendfsync", "everysec");
  if (opts.module) args.push("--loadmodule", opts.module);
  let child: ChildProcess;
  try {
    child = spawn("valkey-server", args, { stdio: ["ignore", "ignore", "pipe"] });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const spawnError = new Promise<never>((_, reject) =>
    child.once("error", (err) =>
      reject(new Error(`cannot start valkey-server (is it installed? run scripts/setup.sh): ${err.message}`)),
    ),
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.race([waitForPing(port, Date.now() + 10_000), spawnError]);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}${stderr ? `\n${stderr}` : ""}`);
  }
  return { host: "127.0.0.1", port, pid: child.pid!, stop };
}
