/**
 * One node: an iovalkey `Redis` whose only socket source is a `FencingConnector`, so every socket
 * — the first and every reconnect — runs the boot commands and the engine's fence before it
 * carries anything else.
 */
import { Command, Redis } from "iovalkey";
import type { Arg } from "../engine/index.js";
import { AuthError, type EchoMQError, ServerUnreachableError, VersionFenceError } from "../errors.js";
import { VERB_SPECS } from "../verbs/index.js";
import { FencingConnector } from "./fencing-connector.js";
import { type CheckedOptions, type ConnectOptions, unreachable, withTimeout } from "./options.js";
import { openAbortable, ShardSubscriber } from "./shard-subscriber.js";
import type { ShardHandlers, Subscription, Transport } from "./transport.js";

class NodeTransport implements Transport {
  constructor(
    readonly client: Redis,
    private readonly connector: FencingConnector,
    private readonly checked: CheckedOptions,
    private readonly options: ConnectOptions,
  ) {}

  get fatal(): EchoMQError | undefined {
    return this.connector.fatal;
  }

  /** Sockets closed since the client was last ready (the drop, then each failed reconnect). */
  private closes = 0;
  private lostAt = 0;

  /** Follows the client's sockets: a close after ready is the drop, each further one a failed try. */
  watch(): void {
    this.client.on("close", () => {
      if (this.closes++ === 0) this.lostAt = Date.now();
    });
    this.client.on("ready", () => {
      this.closes = 0;
    });
  }

  outage(): string | null {
    if (this.closes < 2 || this.client.status === "ready" || this.connector.fatal) return null;
    const failed = this.closes - 1;
    return `valkey at ${this.checked.host}:${this.checked.port} is unreachable (the connection dropped ${Date.now() - this.lostAt} ms ago; ${failed} reconnect${failed === 1 ? "" : "s"} failed since)`;
  }

  queuedAt(): number | null {
    if (this.client.status === "ready") return null;
    this.reconnectNow();
    return this.connector.fencedSockets;
  }

  /**
   * A command met the connection down, waiting out its reconnect backoff (up to 2 s): the
   * reconnect runs now instead, as the client's own timer would, so the command goes out on the
   * new socket or fails, not sent, as soon as that try fails. Commands that come while a try
   * runs wait for it.
   */
  private reconnectNow(): void {
    const client = this.client as unknown as { reconnectTimeout: NodeJS.Timeout | null };
    if (this.client.status !== "reconnecting" || !client.reconnectTimeout || this.connector.fatal) return;
    clearTimeout(client.reconnectTimeout);
    client.reconnectTimeout = null;
    this.client.connect().catch(() => {});
  }

  get fencedSockets(): number {
    return this.connector.fencedSockets;
  }

  get fencedByNode(): ReadonlyMap<string, number> {
    return new Map([[`${this.checked.host}:${this.checked.port}`, this.connector.fencedSockets]]);
  }

  /**
   * The client's Buffer-reply function for a command. Commands the client does not know
   * (`EMQ.*` are registered as built-ins at connect) go outside any auto-pipeline.
   */
  command(command: string): (...args: Arg[]) => Promise<unknown> {
    const name = command.toLowerCase();
    const table = this.client as unknown as Record<string, (...args: Arg[]) => Promise<unknown>>;
    const fn = table[`${name}Buffer`];
    if (typeof fn === "function") return fn.bind(this.client);
    return (...args: Arg[]) =>
      this.client.sendCommand(new Command(command, args, { replyEncoding: null })) as Promise<unknown>;
  }

  sendTo(_routeKey: string, command: string, args: readonly Arg[]): Promise<unknown> {
    return this.command(command)(...args);
  }

  nodeOf(_routeKey: string): string {
    return "";
  }

  /** A socket of its own to this node (fenced like the client's, named `name`), subscribed. */
  subscribeShard(channel: string, handlers: ShardHandlers, name: string | undefined): Promise<Subscription> {
    const { host, port, engine, timeoutMs } = this.checked;
    const target = { host, port };
    const o = this.options;
    return new ShardSubscriber({
      channel,
      locate: () => target,
      name: name ?? o.name,
      open: (at, signal, current) => {
        const connector = new FencingConnector(
          { ...at, tls: o.tls },
          { username: o.username, password: o.password, db: o.db, name: current },
          engine.fence,
          timeoutMs,
        );
        return openAbortable(connector, signal);
      },
      dialOf: () => target,
      topologyChanged: () => {},
      timeoutMs,
      handlers: {
        ...handlers,
        // The node's role changed under the subscriber (or its credentials): the connection's
        // own next socket would meet the same refusal, so it stops now instead of reconnecting.
        onFatal: (err) => {
          if (err instanceof VersionFenceError || err instanceof AuthError) {
            this.connector.fatal ??= err;
            this.client.disconnect();
          }
          handlers.onFatal(err);
        },
      },
    }).start();
  }

  isClosed(err: Error): boolean {
    return /Connection is closed/.test(err.message);
  }

  async close(): Promise<void> {
    if (this.client.status === "ready") {
      await this.client.quit().catch(() => this.client.disconnect());
    } else {
      this.client.disconnect();
    }
  }
}

/**
 * Opens one node and waits until its first socket has passed the fence; the rejections are
 * `connect()`'s (see there).
 */
export async function openNode(checked: CheckedOptions, options: ConnectOptions): Promise<NodeTransport> {
  const { host, port, engine, timeoutMs, writeBatch } = checked;
  const connector = new FencingConnector(
    { host, port, tls: options.tls },
    { username: options.username, password: options.password, db: options.db, name: options.name },
    engine.fence,
    timeoutMs,
    writeBatch,
  );
  const client = new Redis({
    host,
    port,
    lazyConnect: true,
    Connector: class {
      constructor() {
        // biome-ignore lint/correctness/noConstructorReturn: iovalkey instantiates the Connector class itself
        return connector;
      }
    } as never,
    maxRetriesPerRequest: 0,
    enableReadyCheck: false,
    enableOfflineQueue: true,
    enableAutoPipelining: options.autoPipelining ?? false,
    retryStrategy: (attempt: number) =>
      connector.fatal ? null : Math.min(50 * 2 ** Math.min(attempt, 6), 2000),
  });
  client.on("error", () => {}); // errors reach callers through their commands
  // Register the module's commands before any pipeline exists: an auto-pipeline copies the
  // client's built-ins when it is created, so a command added later would be missing from it.
  for (const verb of VERB_SPECS.keys()) client.addBuiltinCommand(`emq.${verb.toLowerCase()}`);
  const transport = new NodeTransport(client, connector, checked, options);
  transport.watch();
  const started = Date.now();
  let timedOut = false;
  try {
    await withTimeout(client.connect(), timeoutMs, () => {
      timedOut = true;
      return lastError(connector);
    });
  } catch (err) {
    client.disconnect();
    if (connector.fatal) throw connector.fatal;
    if (err instanceof VersionFenceError || err instanceof AuthError) throw err;
    const cause = lastError(connector) ?? err;
    throw new ServerUnreachableError(
      `${host}:${port}`,
      unreachable(cause, timedOut ? timeoutMs : undefined),
      1,
      Date.now() - started,
      cause,
    );
  }
  return transport;
}

function lastError(connector: FencingConnector): Error | undefined {
  return connector.fatal ?? connector.firstError;
}
