/**
 * What a `Connection` stands on: one fenced node (`node.ts`) or a cluster of them (`cluster.ts`).
 * The connection, its engine and everything above see the same surface either way; only the
 * transport knows where a command goes.
 */
import type { Cluster, Redis } from "iovalkey";
import type { Arg } from "../engine/index.js";
import type { EchoMQError } from "../errors.js";

/** What a shard subscription hands its owner. */
export interface ShardHandlers {
  /** A message published on the channel. */
  onMessage(message: string): void;
  /**
   * The subscription was lost (connection dropped, slot moved, primary failed) and is back, maybe
   * on another node: a message may have been missed meanwhile.
   */
  onResubscribed(): void;
  /** A refusal no retry can fix (a fence refusal on the new node, refused credentials): it stopped. */
  onFatal(err: Error): void;
}

/** A running shard subscription. */
export interface Subscription {
  /**
   * Gives the socket a new client name (`CLIENT SETNAME`), kept for every later socket. The
   * socket stays subscribed: `SUNSUBSCRIBE`, `CLIENT SETNAME`, `SSUBSCRIBE` leave in one write
   * (a RESP2 subscriber may send nothing else) and the server runs them in a row. While no socket
   * is up, the next one takes the name.
   */
  rename(name: string): void;
  /** A `PING` on the socket, so `CLIENT LIST` shows it active (its `idle` back to 0). */
  ping(): void;
  /** Ends it: the socket closes and nothing reconnects. */
  close(): Promise<void>;
}

export interface Transport {
  /** The client library object (iovalkey `Redis` on one node, `Cluster` on a cluster). */
  readonly client: Redis | Cluster;
  /** The refusal that stopped the transport for good, if any. */
  readonly fatal: EchoMQError | undefined;
  /** Sockets that passed the fence so far (on a cluster: over every node). */
  readonly fencedSockets: number;
  /** Sockets that passed the fence so far, per node (`host:port` as dialled). */
  readonly fencedByNode: ReadonlyMap<string, number>;
  /**
   * While the server is known to be unreachable (the connection dropped and a reconnect has
   * failed since), what to say of it; else null.
   */
  outage(): string | null;
  /**
   * Null while a command sent now is written at once. Else (the connection is down) the command
   * waits for a socket: the reconnect is tried now rather than after its backoff, and the count
   * of fenced sockets is returned — it moves when a waiting command could have been written.
   */
  queuedAt(): number | null;
  /** The function that sends `command` (bulk replies as Buffers), routed by its keys. */
  command(command: string): (...args: Arg[]) => Promise<unknown>;
  /**
   * Sends `command` to the node that holds `routeKey` — for a command with no key of its own
   * (`WAIT`, `WAITAOF`, `TIME`, `SCRIPT LOAD`) that belongs with a queue. On one node, the node.
   */
  sendTo(routeKey: string, command: string, args: readonly Arg[]): Promise<unknown>;
  /** Which node holds `routeKey` now ("" on one node): lines that met `NOSCRIPT` there share one load. */
  nodeOf(routeKey: string): string;
  /**
   * Subscribes to a shard channel (`SSUBSCRIBE`) on a fenced socket of its own, on the node that
   * owns the channel's slot, and keeps it subscribed until closed. Resolves once subscribed;
   * rejects with the first attempt's error (typed refusals: `ServerError` for `NOPERM` …).
   */
  subscribeShard(channel: string, handlers: ShardHandlers, name: string | undefined): Promise<Subscription>;
  /** True when a client error means this transport was closed for good (not a node lost for now). */
  isClosed(err: Error): boolean;
  /** Ends every socket; replies already asked for are awaited where the client can. */
  close(): Promise<void>;
}
