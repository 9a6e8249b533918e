/**
 * The connection a BullMQ-shaped object works on: opened from BullMQ's `connection` options when
 * it is built (BullMQ's constructors are synchronous; every call awaits the link), or an EchoMQ
 * `Connection` passed in, which close() leaves open for its owner.
 */
import { Connection, connect } from "../connector/connection.js";
import { connectionOf } from "./options.js";

export class Link {
  private readonly opened: Promise<Connection>;
  private readonly own: boolean;

  constructor(connection: unknown) {
    const of = connectionOf(connection);
    this.own = !(of instanceof Connection);
    this.opened = of instanceof Connection ? Promise.resolve(of) : connect(of);
    this.opened.catch(() => {}); // each call that awaits it rejects with the error
  }

  get(): Promise<Connection> {
    return this.opened;
  }

  /** Closes the connection when this link opened it. */
  async close(): Promise<void> {
    if (!this.own) return;
    const conn = await this.opened.catch(() => undefined);
    await conn?.close();
  }
}
