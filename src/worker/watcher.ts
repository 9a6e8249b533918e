/**
 * The worker's blocking claim (wire 6, on a module that lists `BCLAIM`): one connection of its
 * own per worker, on which one idle slot at a time waits inside the server (`EMQ.BCLAIM`) for the
 * queue's next job, instead of polling. The other idle slots wait on the wake gate; a busy
 * worker claims without blocking, as on wire 4.
 *
 * Nothing can hang a slot here:
 * * the server ends every wait after `blockMs` (nil), and the slot sends the next one;
 * * a watchdog bounds every wait, with the `CLIENT ID` read before it on a new socket, at
 *   `blockMs + WATCHDOG_GRACE_MS` (so the server's timeout is always the shorter): a wait still
 *   unanswered then is on a lost socket (half-open after a
 *   network fault, or a failover that sent no reset), and the connection is dropped and opened
 *   again (`ClaimWatchdogError`, transient);
 * * a wait cut by a reconnect fails with `ConnectionLostError` and is sent again after the
 *   worker's backoff, once the socket has passed the fence again; one the server ended
 *   (`WaitInterruptedError`: the node turned replica, the slot moved) likewise;
 * * `interrupt()` (the worker closing) ends a wait with `CLIENT UNBLOCK` from the worker's own
 *   connection — the server answers it nil, or with the job it had just claimed, which the
 *   worker then hands back — and drops the connection if that does not end it within a second.
 */
import type { Connection } from "../connector/connection.js";
import { ClaimWatchdogError } from "../errors.js";
import type { ClaimOutcome } from "../jobs.js";
import { key } from "../jobs/common.js";
import { claimWaiting } from "../jobs/block.js";
import { blockClientName } from "./client-name.js";

/** How long past its server timeout a wait may stay unanswered before its socket is dropped (ms). */
export const WATCHDOG_GRACE_MS = 5000;

/** How often, and for how long in all, `interrupt()` asks the server to end a wait (ms). */
const UNBLOCK_TRIES = [0, 50, 150, 300, 500];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The watcher of a worker of queue `name` that serves `lanes`, when it may use the blocking
 * claim: wire 6, `blockMs` > 0, one lane (a laned queue's lanes live in many slots: it keeps the
 * wake channel), and a module that lists `BCLAIM` (asked of the node that serves the queue).
 * `undefined` otherwise.
 */
export async function openWatcher(
  conn: Connection,
  name: string,
  lanes: readonly string[],
  blockMs: number,
): Promise<ClaimWatcher | undefined> {
  const [lane, ...others] = lanes;
  if (blockMs === 0 || lane === undefined || others.length > 0) return undefined;
  if (!(await conn.engine.blockingClaim(key(lane, "pending")))) return undefined;
  return new ClaimWatcher(conn, name, blockMs);
}

export class ClaimWatcher {
  private conn: Connection | undefined;
  private opening: Promise<Connection> | undefined;
  /** The wait in flight, if any, and its queue. */
  private waiting: { queue: string; done: Promise<unknown> } | undefined;
  /** The waiting socket's client id, and the fenced-socket count it was read at. */
  private clientId: { sockets: number; id: string } | undefined;
  /** Bumped whenever the connection is dropped on purpose: a wait cut by it is no fault. */
  private generation = 0;
  private closed = false;

  constructor(
    private readonly source: Connection,
    private readonly name: string,
    private readonly blockMs: number,
  ) {}

  /**
   * One wait on `queue`: the job claimed under `leaseMs`, a limited claim (flow control: it does
   * not wait then), or null when the wait ended with nothing (its timeout, an interrupt, the
   * watcher closed). Throws what the claim met, typed.
   */
  async claim(queue: string, leaseMs: number): Promise<ClaimOutcome> {
    if (this.closed) return null;
    const generation = this.generation;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.waiting = { queue, done: finished };
    try {
      const conn = await this.connection(); // bounded by the connection's own timeout
      return await this.bounded(queue, this.waitOn(conn, queue, leaseMs, generation));
    } catch (err) {
      if (this.closed) return null;
      if (this.generation !== generation && !(err instanceof ClaimWatchdogError)) return null;
      throw err;
    } finally {
      this.waiting = undefined;
      done();
    }
  }

  /**
   * Ends the wait in flight, if any: `CLIENT UNBLOCK <id>` sent from `via` (the worker's own
   * connection) to the node the wait is on, a few times while it may not have arrived yet; the
   * connection is dropped when it still waits after that.
   */
  async interrupt(via: Connection): Promise<void> {
    const waiting = this.waiting;
    if (!waiting) return;
    let ended = false;
    void waiting.done.then(() => {
      ended = true;
    });
    for (const pause of UNBLOCK_TRIES) {
      await sleep(pause);
      if (ended) return;
      const id = this.clientId?.id;
      if (id === undefined) continue;
      await via.send("CLIENT", ["UNBLOCK", id], key(waiting.queue, "pending")).catch(() => {});
    }
    await Promise.race([waiting.done, sleep(200)]);
    if (!ended) this.drop();
  }

  /** Stops: a wait in flight is cut (it answers null), the connection is closed. */
  async close(): Promise<void> {
    this.closed = true;
    this.drop();
    await this.waiting?.done;
  }

  private async connection(): Promise<Connection> {
    if (this.conn) return this.conn;
    this.opening ??= this.source.duplicate({ name: blockClientName(this.name) }).finally(() => {
      this.opening = undefined;
    });
    const conn = await this.opening;
    if (this.closed) {
      void conn.close().catch(() => {});
      throw new Error("the blocking claim's connection was closed");
    }
    this.conn = conn;
    this.clientId = undefined;
    return conn;
  }

  /** The socket's id (when not known yet), then the wait: one bound covers both. */
  private async waitOn(
    conn: Connection,
    queue: string,
    leaseMs: number,
    generation: number,
  ): Promise<ClaimOutcome> {
    await this.learnClientId(conn, queue);
    if (this.closed || this.generation !== generation) return null;
    return claimWaiting(conn, queue, leaseMs, this.blockMs);
  }

  /** `CLIENT ID` of the socket that will wait (again after any reconnect). */
  private async learnClientId(conn: Connection, queue: string): Promise<void> {
    const sockets = conn.fencedSockets;
    if (this.clientId?.sockets === sockets) return;
    const id = await conn.send("CLIENT", ["ID"], key(queue, "pending"));
    this.clientId = { sockets, id: String(id) };
  }

  /** The wait, or `ClaimWatchdogError` (the connection dropped) when it outlives its bound. */
  private bounded<T>(queue: string, wait: Promise<T>): Promise<T> {
    const ms = this.blockMs + WATCHDOG_GRACE_MS;
    let timer: NodeJS.Timeout | undefined;
    const watchdog = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.drop();
        reject(new ClaimWatchdogError(queue, ms));
      }, ms);
    });
    wait.catch(() => {}); // settled after the watchdog fired: nothing waits for it then
    return Promise.race([wait, watchdog]).finally(() => clearTimeout(timer));
  }

  /** Drops the connection at once (a waiting command cannot hold a QUIT up). */
  private drop(): void {
    const conn = this.conn;
    this.conn = undefined;
    this.clientId = undefined;
    this.generation += 1;
    if (!conn) return;
    conn.client.disconnect();
    void conn.close().catch(() => {});
  }
}
