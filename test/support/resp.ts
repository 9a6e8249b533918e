/**
 * A tiny raw RESP2 client for tests: one socket per call, no pooling, no retries.
 *
 * - `rawCommands` pipelines several commands on one fresh socket and returns every reply
 *   (server errors become `Error` values in the result).
 * - `rawCommand` sends one command and returns its reply; a top-level server error is thrown.
 * - `monitor` opens a MONITOR connection that records every line the server feeds it.
 *
 * Replies are parsed with `redis-parser`: bulk and simple strings come back as strings (or
 * Buffers with `returnBuffers`), integers as numbers, nil as null, nested errors as `Error`.
 */
import { createRequire } from "node:module";
import net from "node:net";

export type RespArg = string | Buffer | number;
export type RespReply = string | Buffer | number | null | Error | RespReply[];

export interface ConnectOptions {
  /** Defaults to 127.0.0.1. */
  host?: string;
  /** Sends `AUTH [user] password` before the command(s). */
  password?: string;
  user?: string;
  /** Bound for connecting plus all replies; default 5000 ms. */
  timeoutMs?: number;
}

export interface RawCommandOptions extends ConnectOptions {
  /** Strings come back as Buffers. */
  returnBuffers?: boolean;
}

interface RedisParserOptions {
  returnReply: (reply: unknown) => void;
  returnError: (err: Error) => void;
  returnFatalError?: (err: Error) => void;
  returnBuffers?: boolean;
  stringNumbers?: boolean;
}
interface RedisParser {
  execute(data: Buffer): void;
  reset(): void;
}
type RedisParserCtor = new (options: RedisParserOptions) => RedisParser;

const requireCjs = createRequire(import.meta.url);
const Parser = requireCjs("redis-parser") as RedisParserCtor;

const DEFAULT_TIMEOUT_MS = 5000;

/** Encodes one command as a RESP array of bulk strings. */
export function encodeCommand(args: readonly RespArg[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg));
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from("\r\n"));
  }
  return Buffer.concat(parts);
}

function authCommand(opts: ConnectOptions): RespArg[] | null {
  if (opts.password === undefined) return null;
  return opts.user === undefined ? ["AUTH", opts.password] : ["AUTH", opts.user, opts.password];
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
export function rawCommands(
  port: number,
  commands: readonly (readonly RespArg[])[],
  opts: RawCommandOptions = {},
): Promise<RespReply[]> {
  const auth = authCommand(opts);
  const all = auth ? [auth, ...commands] : [...commands];
  const host = opts.host ?? "127.0.0.1";
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise<RespReply[]>((resolve, reject) => {
    const replies: RespReply[] = [];
    const socket = net.connect({ host, port });
    let settled = false;
    const finish = (err: Error | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(auth ? replies.slice(1) : replies);
    };
    const timer = setTimeout(() => {
      finish(
        new Error(
          `raw ${commandName(all[all.length - 1] ?? [])} to ${host}:${port} timed out after ${timeoutMs} ms (${replies.length}/${all.length} replies)`,
        ),
      );
    }, timeoutMs);
    const onReply = (reply: RespReply): void => {
      replies.push(reply);
      if (auth && replies.length === 1 && reply instanceof Error) {
        finish(new Error(`AUTH to ${host}:${port} failed: ${reply.message}`));
      } else if (replies.length === all.length) {
        finish(null);
      }
    };
    const parser = new Parser({
      returnReply: (reply) => onReply(reply as RespReply),
      returnError: (err) => onReply(err),
      returnFatalError: (err) =>
        finish(new Error(`RESP protocol error from ${host}:${port}: ${err.message}`)),
      returnBuffers: opts.returnBuffers ?? false,
    });
    socket.on("data", (chunk: Buffer) => parser.execute(chunk));
    socket.on("error", (err) =>
      finish(new Error(`raw connection to ${host}:${port} failed: ${err.message}`)),
    );
    socket.on("close", () => {
      finish(new Error(`connection to ${host}:${port} closed after ${replies.length}/${all.length} replies`));
    });
    if (all.length === 0) {
      finish(null);
      return;
    }
    socket.write(Buffer.concat(all.map(encodeCommand)));
  });
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

/** One parsed MONITOR line: `<time> [<db> <client>] "arg" "arg" ...`. */
export interface MonitorEntry {
  /** Unix time in seconds, with microseconds. */
  time: number;
  db: number;
  /** `ip:port`, `lua`, `unix:...`, as the server reports it. */
  client: string;
  args: string[];
  line: string;
}

export interface MonitorHandle {
  /** Every raw line received so far, in order. */
  readonly lines: string[];
  /** The lines parsed (lines that do not parse are skipped). */
  entries(): MonitorEntry[];
  /** Just the arguments of every parsed entry. */
  commands(): string[][];
  /** Resolves with the first entry (already received or future) matching `predicate`. */
  waitFor(predicate: (entry: MonitorEntry) => boolean, timeoutMs?: number): Promise<MonitorEntry>;
  /** Closes the MONITOR connection. */
  stop(): Promise<void>;
}

const ESCAPES: Record<string, string> = {
  n: "\n",
  r: "\r",
  t: "\t",
  a: "\x07",
  b: "\b",
  '"': '"',
  "\\": "\\",
};

/** Reads one quoted argument starting at `start` (the opening quote); returns it and the next index. */
function readQuoted(line: string, start: number): [string, number] {
  let out = "";
  let i = start + 1;
  while (i < line.length && line[i] !== '"') {
    const ch = line[i] as string;
    if (ch !== "\\") {
      out += ch;
      i += 1;
      continue;
    }
    const next = line[i + 1] ?? "";
    if (next === "x") {
      out += String.fromCharCode(Number.parseInt(line.slice(i + 2, i + 4), 16));
      i += 4;
    } else {
      out += ESCAPES[next] ?? next;
      i += 2;
    }
  }
  return [out, i + 1];
}

/** Parses one MONITOR line; null when it does not have the expected shape. */
export function parseMonitorLine(line: string): MonitorEntry | null {
  const head = /^(\d+(?:\.\d+)?) \[(\d+) ([^\]]*)\] /.exec(line);
  if (!head) return null;
  const args: string[] = [];
  let i = head[0].length;
  while (i < line.length) {
    if (line[i] === " ") {
      i += 1;
      continue;
    }
    if (line[i] !== '"') return null;
    const [arg, next] = readQuoted(line, i);
    args.push(arg);
    i = next;
  }
  return { time: Number(head[1]), db: Number(head[2]), client: head[3] ?? "", args, line };
}

interface Waiter {
  predicate: (entry: MonitorEntry) => boolean;
  resolve: (entry: MonitorEntry) => void;
}

/**
 * Opens a MONITOR connection and resolves once the server acknowledged it (`+OK`), so every
 * command the server executes afterwards is recorded in `lines`.
 */
export function monitor(port: number, opts: ConnectOptions = {}): Promise<MonitorHandle> {
  const host = opts.host ?? "127.0.0.1";
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const auth = authCommand(opts);
  const lines: string[] = [];
  const waiters = new Set<Waiter>();
  let expectedAcks = auth ? 2 : 1;
  return new Promise<MonitorHandle>((resolve, reject) => {
    const socket = net.connect({ host, port });
    const startTimer = setTimeout(
      () => fail(new Error(`MONITOR on ${host}:${port} not acknowledged within ${timeoutMs} ms`)),
      timeoutMs,
    );
    let started = false;
    function fail(err: Error): void {
      clearTimeout(startTimer);
      socket.destroy();
      if (!started) reject(err);
    }
    const onLine = (line: string): void => {
      lines.push(line);
      const entry = parseMonitorLine(line);
      if (!entry) return;
      for (const waiter of waiters) {
        if (waiter.predicate(entry)) {
          waiters.delete(waiter);
          waiter.resolve(entry);
        }
      }
    };
    const parser = new Parser({
      returnReply: (reply) => {
        if (expectedAcks > 0) {
          expectedAcks -= 1;
          if (expectedAcks === 0) {
            started = true;
            clearTimeout(startTimer);
            resolve(handle);
          }
          return;
        }
        onLine(String(reply));
      },
      returnError: (err) => fail(new Error(`MONITOR on ${host}:${port} refused: ${err.message}`)),
      returnFatalError: (err) =>
        fail(new Error(`RESP protocol error on MONITOR ${host}:${port}: ${err.message}`)),
    });
    socket.on("data", (chunk: Buffer) => parser.execute(chunk));
    socket.on("error", (err) =>
      fail(new Error(`MONITOR connection to ${host}:${port} failed: ${err.message}`)),
    );

    const entries = (): MonitorEntry[] =>
      lines.map(parseMonitorLine).filter((e): e is MonitorEntry => e !== null);
    const handle: MonitorHandle = {
      lines,
      entries,
      commands: () => entries().map((e) => e.args),
      waitFor(predicate, waitMs = DEFAULT_TIMEOUT_MS) {
        const seen = entries().find(predicate);
        if (seen) return Promise.resolve(seen);
        return new Promise<MonitorEntry>((res, rej) => {
          const timer = setTimeout(() => {
            waiters.delete(waiter);
            rej(
              new Error(
                `MONITOR on ${host}:${port}: no matching command within ${waitMs} ms (saw ${lines.length} lines)`,
              ),
            );
          }, waitMs);
          const waiter: Waiter = {
            predicate,
            resolve: (entry) => {
              clearTimeout(timer);
              res(entry);
            },
          };
          waiters.add(waiter);
        });
      },
      stop() {
        if (socket.destroyed) return Promise.resolve();
        return new Promise<void>((res) => {
          socket.once("close", () => res());
          socket.destroy();
        });
      },
    };
    const commands = auth ? [auth, ["MONITOR"]] : [["MONITOR"]];
    socket.write(Buffer.concat(commands.map(encodeCommand)));
  });
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
export function connectResp(port: number, opts: RawCommandOptions = {}): Promise<RespConnection> {
  const host = opts.host ?? "127.0.0.1";
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const socket = net.connect({ host, port });
  const waiting: { resolve: (r: RespReply) => void; reject: (e: Error) => void }[] = [];
  const unsolicited: RespReply[] = [];
  let isClosed = false;
  const closed = new Promise<void>((resolve) => {
    socket.once("close", () => {
      isClosed = true;
      for (const w of waiting.splice(0))
        w.reject(new Error(`connection to ${host}:${port} closed before the reply`));
      resolve();
    });
  });
  socket.on("error", () => {});
  const deliver = (reply: RespReply): void => {
    const w = waiting.shift();
    if (w) w.resolve(reply);
    else unsolicited.push(reply);
  };
  const parser = new Parser({
    returnReply: (reply) => deliver(reply as RespReply),
    returnError: (err) => deliver(err),
    returnFatalError: () => socket.destroy(),
    returnBuffers: opts.returnBuffers ?? false,
  });
  socket.on("data", (chunk: Buffer) => parser.execute(chunk));
  const connection: RespConnection = {
    send(args) {
      return new Promise<RespReply>((resolve, reject) => {
        if (isClosed) {
          reject(new Error(`connection to ${host}:${port} is closed`));
          return;
        }
        waiting.push({ resolve, reject });
        socket.write(encodeCommand(args));
      });
    },
    sendRaw(bytes) {
      socket.write(bytes);
    },
    unsolicited,
    closed,
    get isClosed() {
      return isClosed;
    },
    close() {
      socket.destroy();
      return closed;
    },
  };
  return new Promise<RespConnection>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connecting to ${host}:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`could not connect to ${host}:${port}: ${err.message}`));
    });
    socket.once("connect", async () => {
      clearTimeout(timer);
      const auth = authCommand(opts);
      if (auth === null) return resolve(connection);
      const reply = await connection.send(auth).catch((err: Error) => err);
      if (reply instanceof Error) {
        socket.destroy();
        reject(new Error(`AUTH to ${host}:${port} failed: ${reply.message}`));
      } else resolve(connection);
    });
  });
}

/**
 * Sends `ECHO sentinel` through `conn`, waits until `mon` has seen it, stops `mon`, and returns
 * every entry it saw (the sentinel's `ECHO` last): what reached the server before the sentinel.
 */
export async function untilSentinel(
  mon: MonitorHandle,
  conn: { send(command: string, args: string[]): Promise<unknown> },
): Promise<MonitorEntry[]> {
  await conn.send("ECHO", ["sentinel"]);
  await mon.waitFor((e) => e.args[0]?.toUpperCase() === "ECHO");
  await mon.stop();
  return mon.entries();
}

/** The command names (upper case) of `entries`, in order. */
export function names(entries: MonitorEntry[]): string[] {
  return entries.map((e) => e.args[0]!.toUpperCase());
}
