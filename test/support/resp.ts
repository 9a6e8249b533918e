/**
 * Raw RESP calls for tests, with plain-valued replies: the harness's client (`harness/resp.ts`,
 * on the one encoder and decoder in `src/connector/resp.ts`), its replies turned into strings
 * (or Buffers with `returnBuffers`), numbers, null, arrays and `Error` values.
 *
 * - `rawCommands` pipelines several commands on one fresh socket and returns every reply
 *   (server errors become `Error` values in the result).
 * - `rawCommand` sends one command and returns its reply; a top-level server error is thrown.
 * - `connectResp` keeps a connection open (half-written commands, replies nobody waited for).
 */
import { type ClientOptions, type Reply, RespClient } from "../../harness/resp.js";
import { type RespArg, type RespReply, toRespReply } from "../../src/resp.js";

export type { RespArg, RespReply } from "../../src/resp.js";

export interface ConnectOptions {
  /** Defaults to 127.0.0.1. */
  host?: string;
  /** Sends `AUTH [user] password` before the command(s). */
  password?: string;
  user?: string;
  /** Bound for connecting, and again for all replies; default 5000 ms. */
  timeoutMs?: number;
}

interface RawCommandOptions extends ConnectOptions {
  /** Strings come back as Buffers. */
  returnBuffers?: boolean;
}

const DEFAULT_TIMEOUT_MS = 5000;

/** The harness client's options for `opts` (AUTH only when a password is given). */
export function clientOptions(opts: ConnectOptions): ClientOptions {
  return {
    host: opts.host ?? "127.0.0.1",
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(opts.password === undefined ? {} : { password: opts.password }),
    ...(opts.user === undefined ? {} : { user: opts.user }),
  };
}

/**
 * `work`'s result, or a rejection with `message` after `ms` (then `onTimeout` runs, to close
 * what `work` holds).
 */
export async function within<T>(
  ms: number,
  message: string,
  work: Promise<T>,
  onTimeout: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(message));
    }, ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function commandName(args: readonly RespArg[]): string {
  const name = args.length > 0 ? String(args[0]) : "<empty>";
  return `${name}${args.length > 1 ? ` (+${args.length - 1} args)` : ""}`;
}

/**
 * Pipelines `commands` on one new connection and resolves with one reply per command, in
 * order. Server errors are returned as `Error` values, never thrown; connection problems
 * and timeouts reject. AUTH (when `password` is set) is sent first and its failure rejects.
 */
export async function rawCommands(
  port: number,
  commands: readonly (readonly RespArg[])[],
  opts: RawCommandOptions = {},
): Promise<RespReply[]> {
  const o = clientOptions(opts);
  const client = await RespClient.connect(port, o);
  const what = `raw ${commandName(commands[commands.length - 1] ?? [])} to ${o.host}:${port}`;
  try {
    const replies = await within(
      o.timeoutMs!,
      `${what} timed out after ${o.timeoutMs} ms`,
      client.call(commands),
      () => {
        void client.close();
      },
    );
    return replies.map((r) => toRespReply(r, opts.returnBuffers));
  } finally {
    await client.close();
  }
}

/**
 * Sends one command on a new connection and resolves with its reply. A top-level server
 * error (e.g. `-ERR ...`, `-NOPERM ...`) rejects with an `Error` carrying the server's message.
 */
export async function rawCommand(
  port: number,
  args: readonly RespArg[],
  opts: RawCommandOptions = {},
): Promise<RespReply> {
  const [reply] = await rawCommands(port, [args], opts);
  if (reply instanceof Error) throw reply;
  return reply ?? null;
}

/** A persistent raw connection: commands are answered in order (FIFO). */
export interface RespConnection {
  /** Sends one command; resolves with its reply (server errors as `Error` values, not thrown). */
  send(args: readonly RespArg[]): Promise<RespReply>;
  /** Writes raw bytes (e.g. half a command); replies to them are delivered to `unsolicited`. */
  sendRaw(bytes: Buffer | string): void;
  /** Replies that no `send` was waiting for. */
  readonly unsolicited: RespReply[];
  /** Resolves when the socket closes, for whatever reason. */
  readonly closed: Promise<void>;
  readonly isClosed: boolean;
  close(): Promise<void>;
}

/** Opens a raw connection (AUTH first when `password` is set); pending sends reject on close. */
export async function connectResp(port: number, opts: RawCommandOptions = {}): Promise<RespConnection> {
  const client = await RespClient.connect(port, clientOptions(opts));
  const plain = (reply: Reply) => toRespReply(reply, opts.returnBuffers);
  const unsolicited: RespReply[] = [];
  client.onPush = (reply) => unsolicited.push(plain(reply));
  return {
    send: async (args) => plain(await client.one(...args)),
    sendRaw: (bytes) => client.write(bytes),
    unsolicited,
    closed: client.closed,
    get isClosed() {
      return client.isClosed;
    },
    close: () => client.close(),
  };
}
