/**
 * A Valkey Cluster behind the same `Connection` (docs/cluster.md). iovalkey's `Cluster` keeps the
 * slot map and one connection per node; each of those — primaries, replicas, nodes found later,
 * the short-lived connections that read `CLUSTER SLOTS`, every reconnect — gets a
 * `FencingConnector` of its own, so each socket passes the engine's node fence (what the node
 * runs) after its boot commands and before it carries anything. The cluster's intent record
 * The brand key (`VERSION_KEY`) is checked once, through the cluster client, at connect.
 *
 * Routing: keyed commands (`EVALSHA`, reads) are routed by the client from their first key; an
 * `EMQ.*` verb, unknown to the client's command table, gets the slot of its first declared key;
 * keyless commands that belong with a queue (`WAIT`, `TIME`, `SCRIPT LOAD`) the slot of a key the
 * caller names. The client's own `MOVED`/`ASK`/`TRYAGAIN`/`CLUSTERDOWN` handling stays on: those
 * come before execution. A command in flight on a node connection that dropped is never re-sent
 * (`retryDelayOnFailover: 0`: iovalkey would otherwise send it again on another node).
 */
import { Cluster, Command } from "iovalkey";
import type { Send } from "../engine/fence.js";
import type { Arg } from "../engine/index.js";
import { AuthError, type EchoMQError, ServerUnreachableError, VersionFenceError } from "../errors.js";
import { slot, VERSION_KEY } from "../keyspace.js";
import { FencingConnector, type FenceRunner } from "./fencing-connector.js";
import {
  type CheckedOptions,
  type ClusterNode,
  type ConnectOptions,
  dialOf,
  unreachable,
} from "./options.js";
import { RespError, type RespReply } from "../resp.js";
import { openAbortable, ShardSubscriber } from "./shard-subscriber.js";
import type { ShardHandlers, Subscription, Transport } from "./transport.js";

/** After a node connection ends, the slot map is read again this soon (once for a burst). */
const REFRESH_AFTER_LOSS_MS = 100;

class ClusterTransport implements Transport {
  readonly client: Cluster;
  fatal: EchoMQError | undefined;
  /** Sockets that passed the node fence, per node (`host:port` as dialled). */
  readonly fencedByNode = new Map<string, number>();
  private closing = false;
  private refresh: NodeJS.Timeout | undefined;
  /** Rejects with the refusal that stopped the client (connect races it: no wait for a timeout). */
  readonly stopped: Promise<never>;
  private rejectStopped!: (err: EchoMQError) => void;

  constructor(
    private readonly seeds: readonly ClusterNode[],
    private readonly checked: CheckedOptions,
    private readonly options: ConnectOptions,
  ) {
    const self = this;
    this.stopped = new Promise<never>((_, reject) => {
      this.rejectStopped = reject;
    });
    this.stopped.catch(() => {});
    this.client = new Cluster(seeds as ClusterNode[], {
      lazyConnect: true,
      redisOptions: {
        Connector: class {
          constructor(node: ClusterNode) {
            // biome-ignore lint/correctness/noConstructorReturn: iovalkey instantiates the Connector class itself
            return self.connectorFor(node);
          }
        } as never,
        maxRetriesPerRequest: 0,
        enableReadyCheck: false,
      },
      enableAutoPipelining: options.autoPipelining ?? false,
      retryDelayOnFailover: 0,
      slotsRefreshTimeout: checked.timeoutMs,
      clusterRetryStrategy: (times: number) =>
        this.fatal || this.closing ? null : Math.min(50 * 2 ** Math.min(times, 6), 2000),
      ...(options.natMap === undefined ? {} : { natMap: { ...options.natMap } }),
    });
    this.client.on("error", () => {}); // errors reach callers through their commands
    this.client.on("node error", () => {});
    // A node connection that ended (node down, failover) is not re-sent to: read the slot map
    // again, so the next command finds the slot's owner now.
    this.client.on("-node", () => this.topologyChanged());
  }

  get fencedSockets(): number {
    let n = 0;
    for (const count of this.fencedByNode.values()) n += count;
    return n;
  }

  command(command: string): (...args: Arg[]) => Promise<unknown> {
    if (/^emq\./i.test(command)) {
      // EMQ.<VERB> <numkeys> <key>…: the slot of the first declared key.
      return (...args: Arg[]) =>
        this.routed(Number(args[0]) > 0 ? String(args[1]) : undefined, command, args);
    }
    const table = this.client as unknown as Record<string, (...args: Arg[]) => Promise<unknown>>;
    const fn = table[`${command.toLowerCase()}Buffer`];
    if (typeof fn === "function") return (...args: Arg[]) => this.unlessStopped(fn.apply(this.client, args));
    return (...args: Arg[]) => this.routed(undefined, command, args);
  }

  sendTo(routeKey: string, command: string, args: readonly Arg[]): Promise<unknown> {
    return this.routed(routeKey, command, args);
  }

  nodeOf(routeKey: string): string {
    return this.client.slots[slot(routeKey)]?.[0] ?? "";
  }

  /** The cluster client routes and queues per node: a command is taken as sent. */
  outage(): string | null {
    return null;
  }

  queuedAt(): number | null {
    return null;
  }

  /** A fenced socket of its own on the primary that owns the channel's slot, following moves. */
  subscribeShard(channel: string, handlers: ShardHandlers, name: string | undefined): Promise<Subscription> {
    const o = this.options;
    const channelSlot = slot(channel);
    return new ShardSubscriber({
      channel,
      locate: () => {
        const owner = this.client.slots[channelSlot]?.[0];
        return owner === undefined ? this.seeds[0]! : this.dialOf(owner);
      },
      name: name ?? o.name,
      open: (at, signal, current) => {
        const connector = new FencingConnector(
          { ...at, tls: o.tls },
          { username: o.username, password: o.password, name: current },
          this.nodeFence(`${at.host}:${at.port}`),
          this.checked.timeoutMs,
        );
        return openAbortable(connector, signal);
      },
      dialOf: (announced) => this.dialOf(announced),
      topologyChanged: () => this.topologyChanged(),
      timeoutMs: this.checked.timeoutMs,
      handlers: {
        ...handlers,
        onFatal: (err) => {
          if (err instanceof VersionFenceError || err instanceof AuthError) this.stop(err);
          handlers.onFatal(err);
        },
      },
    }).start();
  }

  isClosed(err: Error): boolean {
    return this.closing || this.client.status === "end" || /Cluster is ended/.test(err.message);
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.refresh);
    if (this.client.status === "ready") {
      await this.client.quit().catch(() => this.client.disconnect());
    } else {
      this.client.disconnect();
    }
  }

  /**
   * Connects: reads the slot map, opens (and so fences) a socket to every node it lists —
   * primaries and replicas, so a mixed cluster is refused here, naming the node — then checks the
   * cluster's intent record through the cluster client.
   */
  async open(): Promise<void> {
    await this.client.connect();
    await Promise.all(this.client.nodes("all").map((node) => node.ping().catch(() => {})));
    if (this.fatal) throw this.fatal;
    const send: Send = async (args) => {
      try {
        return (await this.client.call(String(args[0]).toLowerCase(), ...args.slice(1))) as RespReply;
      } catch (err) {
        if ((err as Error).name === "ReplyError") return new RespError((err as Error).message);
        throw err;
      }
    };
    try {
      await this.checked.engine.intent(send);
    } catch (err) {
      throw err instanceof VersionFenceError
        ? this.stop(err.at(this.nodeOf(VERSION_KEY) || "the cluster"))
        : err;
    }
  }

  /** Stops the whole client on a refusal no reconnect can fix (or it would reopen node sockets forever). */
  stop(err: EchoMQError): EchoMQError {
    this.fatal ??= err;
    this.rejectStopped(this.fatal);
    setImmediate(() => this.client.disconnect());
    return this.fatal;
  }

  private connectorFor(node: ClusterNode): FencingConnector {
    const label = `${node.host}:${node.port}`;
    const o = this.options;
    return new FencingConnector(
      { host: node.host, port: node.port, tls: o.tls },
      { username: o.username, password: o.password, name: o.name },
      this.nodeFence(label),
      this.checked.timeoutMs,
      this.checked.writeBatch,
      {
        fenced: () => this.fencedByNode.set(label, (this.fencedByNode.get(label) ?? 0) + 1),
        fatal: (err) => this.stop(err),
      },
    );
  }

  /** The engine's node fence, its refusal naming the node. */
  private nodeFence(label: string): FenceRunner {
    return async (send) => {
      try {
        await this.checked.engine.nodeFence(send);
      } catch (err) {
        throw err instanceof VersionFenceError ? err.at(label) : err;
      }
    };
  }

  private routed(routeKey: string | undefined, command: string, args: readonly Arg[]): Promise<unknown> {
    const cmd = new Command(command, [...args], { replyEncoding: null });
    if (routeKey !== undefined) (cmd as unknown as { slot: number }).slot = slot(routeKey);
    return this.unlessStopped(this.client.sendCommand(cmd) as Promise<unknown>);
  }

  /**
   * A command's reply, or the refusal that stopped the client: a command the cluster client still
   * holds when it stops (queued for a node being dialled, redirected mid-stop) is not left waiting.
   */
  private unlessStopped(reply: Promise<unknown>): Promise<unknown> {
    return Promise.race([reply, this.stopped]);
  }

  private dialOf(announced: string): ClusterNode {
    return dialOf(announced, this.options.natMap);
  }

  private topologyChanged(): void {
    if (this.refresh || this.closing || this.fatal) return;
    this.refresh = setTimeout(() => {
      this.refresh = undefined;
      if (!this.closing && !this.fatal) this.client.refreshSlotsCache();
    }, REFRESH_AFTER_LOSS_MS);
  }
}

/** Opens a cluster connection; the rejections are `connect()`'s, naming the seeds. */
export async function openCluster(
  checked: CheckedOptions,
  options: ConnectOptions,
): Promise<ClusterTransport> {
  const seeds = checked.nodes!;
  const transport = new ClusterTransport(seeds, checked, options);
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const started = Date.now();
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`timed out after ${checked.timeoutMs} ms`));
    }, checked.timeoutMs);
  });
  try {
    await Promise.race([transport.open(), timeout, transport.stopped]);
  } catch (err) {
    transport.client.disconnect();
    if (transport.fatal) throw transport.fatal;
    if (err instanceof VersionFenceError || err instanceof AuthError) throw err;
    const where = seeds.map((n) => `${n.host}:${n.port}`).join(", ");
    const what = unreachable(err, timedOut ? checked.timeoutMs : undefined);
    throw new ServerUnreachableError(where, what, 1, Date.now() - started, err, true);
  } finally {
    clearTimeout(timer);
  }
  return transport;
}
