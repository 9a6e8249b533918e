/**
 * What a command runs with: the connection options from `--url` / `VALKEY_URL` / `--nodes`, the
 * wire (`--wire`, or found by asking the node whether it runs the module), one connection opened
 * on first use, and where output goes.
 */
import { type ConnectOptions, type Connection, connect, optionsFromUrl } from "../connector/connection.js";
import { FencingConnector } from "../connector/fencing-connector.js";
import { checkConnectOptions } from "../connector/options.js";
import { VERSION_LINE } from "../engine/version.js";
import { RespError } from "../resp.js";
import type { Globals } from "./args.js";

/** The name the CLI's connections carry in `CLIENT LIST`. */
const CLIENT_NAME = "emq-cli";

export interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

export class Context {
  private conn: Connection | undefined;
  private opening: Promise<Connection> | undefined;

  constructor(
    readonly globals: Globals,
    readonly io: Output,
  ) {}

  /** The options every connection of this run uses (the wire left to `connection()`). */
  options(): ConnectOptions {
    const base: ConnectOptions = this.globals.url
      ? optionsFromUrl(this.globals.url)
      : { host: "127.0.0.1", port: 6379 };
    if (this.globals.nodes) {
      const { host: _h, port: _p, ...rest } = base;
      return { ...rest, nodes: this.globals.nodes, name: CLIENT_NAME };
    }
    return { ...base, name: CLIENT_NAME };
  }

  /** The connection (opened once): on the wire `--wire` names, else the one the node serves. */
  connection(): Promise<Connection> {
    this.opening ??= (async () => {
      const options = this.options();
      const wire = this.globals.wire === "auto" ? await detectWire(options) : this.globals.wire;
      this.conn = await connect({ ...options, wire });
      return this.conn;
    })();
    return this.opening;
  }

  async close(): Promise<void> {
    await this.conn?.close().catch(() => {});
  }
}

/**
 * The wire a node serves: 6 when it answers `EMQ.VERSION` (the module is loaded), else 4. Asked
 * on a raw socket of the first node (boot commands, no fence, nothing written).
 */
async function detectWire(options: ConnectOptions): Promise<4 | 6> {
  const { host, port, nodes, timeoutMs } = checkConnectOptions({ ...options, wire: 4 });
  const target = nodes?.[0] ?? { host, port };
  const connector = new FencingConnector(
    { ...target, tls: options.tls },
    { username: options.username, password: options.password, db: options.db, name: options.name },
    async () => {},
    timeoutMs,
  );
  const reply = await connector.once((send) => send(VERSION_LINE));
  return reply instanceof RespError ? 4 : 6;
}
