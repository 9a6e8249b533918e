/**
 * Starts a throwaway valkey-server for the demo and the stand: loopback only, a free port, its
 * own temp dir, no persistence. `stop()` ends it and removes the dir.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface EmbeddedValkey {
  host: string;
  port: number;
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

export async function startEmbeddedValkey(opts: { module?: string } = {}): Promise<EmbeddedValkey> {
  const dir = mkdtempSync(join(tmpdir(), "echomq-"));
  const port = await freePort();
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
  ];
  if (opts.module) args.push("--loadmodule", opts.module);
  let child: ChildProcess;
  try {
    child = spawn("valkey-server", args, { stdio: ["ignore", "ignore", "pipe"] });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const spawnError = new Promise<never>((_, reject) =>
    child.once("error", (err) =>
      reject(new Error(`cannot start valkey-server (is it installed? run scripts/setup.sh): ${err.message}`)),
    ),
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.race([waitForPing(port, Date.now() + 10_000), spawnError]);
  } catch (err) {
    await stop();
    throw err;
  }
  return { host: "127.0.0.1", port, stop };
}
