/**
 * `connect()` opens a fenced connection on wire 4 (Lua scripts, the default) or wire 6 (the
 * native module), to one node (`host`/`port`) or to a Valkey Cluster (`nodes`). `eval()` sends a
 * script's line; the wire decides what goes out, the transport where it goes.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Cluster, Redis } from "iovalkey";
import type { Arg, Engine, Line, ScriptCall, Sender, Wire } from "../engine/index.js";
import {
  ConnectionClosedError,
  ConnectionError,
  ConnectionLostError,
  EchoMQError,
  InvalidArgumentError,
  ServerError,
  ServerUnreachableError,
} from "../errors.js";
import type { Script } from "../scripts/index.js";
import { openCluster } from "./cluster.js";
import { openNode } from "./node.js";
import { checkConnectForms } from "./forms.js";
import type { ConnectOptions } from "./options.js";
import type { Subscription, Transport } from "./transport.js";

export type { Arg, ScriptCall, Wire } from "../engine/index.js";
export {
  type ClientLike,
  type ClusterNode,
  type ConnectionForm,
  type ConnectionObject,
  type ConnectOptions,
  checkConnectOptions,
  MAX_TIMER_MS,
  optionsFromUrl,
} from "./options.js";
export type { Subscription } from "./transport.js";

export class Connection implements Sender {
  /** The executor this connection runs transitions with (wire 4: scripts; wire 6: native). */
  readonly engine: Engine;
  private closed = false;
  private readonly functions = new Map<string, (...args: Arg[]) => Promise<unknown>>();
  /** `SCRIPT LOAD`s in flight, per script and node: lines that met `NOSCRIPT` together share one. */
  private readonly loading = new Map<string, Promise<unknown>>();

  /** @internal use `connect()` */
  constructor(
    private readonly transport: Transport,
    engine: (sender: Sender) => Engine,
    private readonly options: ConnectOptions,
  ) {
    this.engine = engine(this);
  }

  /**
   * The underlying client, for commands outside the job core: iovalkey's `Redis` on one node,
   * its `Cluster` on a cluster.
   */
  get client(): Redis | Cluster {
    return this.transport.client;
  }

  /** True for a connection to a Valkey Cluster (`connect({ nodes })`). */
  get cluster(): boolean {
    return this.options.nodes !== undefined;
  }

  /** The wire this connection speaks: 4 (scripts) or 6 (the native module). */
  get wire(): Wire {
    return this.engine.wire;
  }

  /** A new connection to the same node (or cluster) with the same options (fenced like this one). */
  duplicate(overrides: Partial<ConnectOptions> = {}): Promise<Connection> {
    return connect({ ...this.options, ...overrides });
  }

  /**
   * The refusal that stopped this connection for good (fence, credentials, a boot command), if
   * one did: every call fails with it and nothing reconnects.
   */
  get fatal(): EchoMQError | undefined {
    return this.transport.fatal;
  }

  /**
   * How many sockets have passed the fence so far (1 after the first connect; +1 per reconnect;
   * on a cluster, over every node).
   */
  get fencedSockets(): number {
    return this.transport.fencedSockets;
  }

  /** Sockets that passed the fence so far, per node (`host:port` as dialled). */
  get fencedNodes(): ReadonlyMap<string, number> {
    return this.transport.fencedByNode;
  }

  /**
   * Runs a script as this connection's engine runs it: wire 4 `EVALSHA <sha> <numkeys> <keys…>
   * <args…>` (loading the source once on `NOSCRIPT`); wire 6 a script that declares a verb as
   * `EMQ.<VERB>` with the same tail, a `read` script as `EVALSHA`, any other refused locally.
   * Replies keep bulk strings as Buffers.
   */
  eval(script: Script, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.engine.eval(script, keys, args);
  }

  /** Runs many script calls in one round trip; each result is the call's reply or its error. */
  evalBatch(calls: readonly ScriptCall[]): Promise<unknown[]> {
    return this.engine.evalBatch(calls);
  }

  /**
   * Sends commands in the same tick, so they leave together (the connector coalesces one tick's
   * writes); each result is the reply or the typed error.
   */
  sendAll(commands: readonly Line[]): Promise<unknown[]> {
    const queuedAt = this.transport.queuedAt();
    return Promise.all(
      commands.map(([name, args]) =>
        this.commandFunction(name)(...args).catch((err: unknown) => this.translate(err, queuedAt)),
      ),
    );
  }

  /**
   * Sends one command; replies keep bulk strings as Buffers. Errors are typed. On a cluster a
   * command goes to the primary that owns its first key's slot; a command with no key of its own
   * that belongs with a queue (`WAIT`, `TIME`, …) goes where `routeKey` lives (ignored on one node).
   */
  async send(command: string, args: readonly Arg[], routeKey?: string): Promise<unknown> {
    const queuedAt = this.transport.queuedAt();
    try {
      if (routeKey === undefined) return await this.commandFunction(command)(...args);
      return await this.transport.sendTo(routeKey, command, args);
    } catch (err) {
      throw this.translate(err, queuedAt);
    }
  }

  /**
   * `SCRIPT LOAD` on the node that holds `routeKey`, once for every line that needs it there at
   * the same time.
   */
  loadScript(script: Script, routeKey: string): Promise<unknown> {
    const key = `${script.sha1}@${this.transport.nodeOf(routeKey)}`;
    let loading = this.loading.get(key);
    if (!loading) {
      loading = this.send("SCRIPT", ["LOAD", script.source], routeKey).finally(() =>
        this.loading.delete(key),
      );
      this.loading.set(key, loading);
    }
    return loading;
  }

  private commandFunction(command: string): (...args: Arg[]) => Promise<unknown> {
    let fn = this.functions.get(command);
    if (!fn) {
      fn = this.transport.command(command);
      this.functions.set(command, fn);
    }
    return fn;
  }

  /**
   * Subscribes to the shard channel `channel` (`SSUBSCRIBE`) on a fenced socket of its own —
   * on a cluster, on the primary that owns the channel's slot — and keeps it subscribed until
   * closed: when the slot moves or its primary fails, it subscribes where the slot is now and
   * calls `onResubscribed` (a message may have been missed meanwhile). `onFatal` gets a refusal no
   * retry fixes (the subscription has stopped). Rejects with the first attempt's error (`NOPERM`
   * as a `ServerError`, …). `name` is the socket's client name (default: the connection's).
   */
  subscribeShard(
    channel: string,
    handlers: {
      onMessage: (message: string) => void;
      onResubscribed?: () => void;
      onFatal?: (err: Error) => void;
      name?: string;
    },
  ): Promise<Subscription> {
    if (this.closed) return Promise.reject(new ConnectionClosedError());
    return this.transport.subscribeShard(
      channel,
      {
        onMessage: handlers.onMessage,
        onResubscribed: handlers.onResubscribed ?? (() => {}),
        onFatal: handlers.onFatal ?? (() => {}),
      },
      handlers.name,
    );
  }

  /**
   * Subscribes this connection to the classic channel `channel` (it then carries nothing else);
   * `onMessage` gets each message. iovalkey subscribes again after every reconnect;
   * `onResubscribed` runs then. One node only: on a cluster use `subscribeShard` (the cluster
   * client's own subscriber would not be fenced). A refusal (`NOPERM` …) is thrown typed.
   */
  async subscribe(
    channel: string,
    onMessage: (message: string) => void,
    onResubscribed: () => void = () => {},
  ): Promise<void> {
    if (this.cluster) {
      throw new InvalidArgumentError(
        "channel",
        "a cluster connection has no classic subscriptions: use subscribeShard",
      );
    }
    const client = this.client as Redis;
    client.on("message", (_channel: string, message: string) => onMessage(message));
    let first = true;
    client.on("ready", () => {
      if (!first) onResubscribed();
      first = false;
    });
    try {
      await client.subscribe(channel);
    } catch (err) {
      throw this.translate(err);
    }
  }

  /** Ends the connection: pending replies are awaited (QUIT), then the sockets close. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.transport.close();
  }

  /**
   * The typed error for a client error. `queuedAt` (the transport's, when the command was
   * issued): a command queued while no socket was ready, failed before a new socket passed the
   * fence, was never sent.
   */
  private translate(err: unknown, queuedAt: number | null = null): Error {
    if (this.transport.fatal) return this.transport.fatal;
    if (err instanceof EchoMQError) return err;
    if (err instanceof Error) {
      if (err.name === "ReplyError") return new ServerError(err.message, err);
      if (err.name === "MaxRetriesPerRequestError") {
        const sent = queuedAt === null || this.transport.fencedSockets !== queuedAt;
        return new ConnectionLostError(err, sent, sent ? undefined : (this.transport.outage() ?? undefined));
      }
      if (this.closed || this.transport.isClosed(err)) return new ConnectionClosedError(err);
      if (/^Too many Cluster redirections/.test(err.message)) {
        return new ConnectionError(
          `the cluster kept redirecting the command (slots moving?): ${err.message}`,
          err,
        );
      }
      return new ConnectionLostError(err);
    }
    return new ConnectionError(String(err));
  }
}

/**
 * Opens a connection and waits until its first socket has passed the fence (on a cluster: a
 * socket to every node has passed the node fence, and the intent record (the brand key) admits
 * this wire). Rejects with `InvalidArgumentError` for a bad option (before any socket opens),
 * `AuthError` when the server refuses the credentials, `VersionFenceError` when the node's brand
 * (on a cluster: a node's role, naming the node, or the intent record) does not admit this wire,
 * or `ConnectionError` naming host and port (the seeds) when the server cannot be reached within
 * `connectTimeoutMs` (or refuses `db` / `name`).
 */
export async function connect(input: string | ConnectOptions = {}): Promise<Connection> {
  const { options, checked } = checkConnectForms(input);
  const transport = await untilReachable(checked.waitForServerMs, () =>
    checked.nodes ? openCluster(checked, options) : openNode(checked, options),
  );
  return new Connection(transport, (sender) => checked.engine.create(sender), options);
}

/** The first wait between tries of `waitForServerMs`, and the longest (ms). */
const WAIT_FIRST_MS = 100;
const WAIT_MAX_MS = 2000;

/**
 * `open()`, tried again while the server cannot be reached (`ServerUnreachableError`) — after
 * 100 ms, doubling to at most 2,000 ms — until `boundMs` have passed since the first try; the
 * last error then names every try. Any other refusal is thrown at once.
 */
async function untilReachable(boundMs: number, open: () => Promise<Transport>): Promise<Transport> {
  const started = Date.now();
  for (let tries = 1; ; tries++) {
    try {
      return await open();
    } catch (err) {
      if (!(err instanceof ServerUnreachableError)) throw err;
      const left = boundMs - (Date.now() - started);
      if (left <= 0) {
        if (tries === 1) throw err;
        throw new ServerUnreachableError(
          err.address,
          `${err.reason} (waitForServerMs ${boundMs})`,
          tries,
          Date.now() - started,
          err.cause,
          err.cluster,
        );
      }
      await sleep(Math.min(WAIT_FIRST_MS * 2 ** Math.min(tries - 1, 5), WAIT_MAX_MS, left));
    }
  }
}
