/**
 * MONITOR, read once for the tests and the stand: a connection that records every line the
 * server feeds it, each parsed into its time, db, client and arguments.
 */
import { RespClient } from "../../harness/resp.js";
import { type ConnectOptions, clientOptions, within } from "./resp.js";

/** One parsed MONITOR line: `<time> [<db> <client>] "arg" "arg" ...`. */
export interface MonitorEntry {
  /** Unix time in seconds, with microseconds. */
  time: number;
  db: number;
  /** `ip:port`, `lua`, `unix:...`, as the server reports it. */
  client: string;
  /** The arguments, unescaped (bytes as latin1). */
  args: string[];
  line: string;
}

export interface MonitorHandle {
  /** Every raw line received so far, in order. */
  readonly lines: string[];
  /** The lines parsed (lines that do not parse are skipped), the same objects every time. */
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
 * command the server executes afterwards is recorded.
 */
export async function monitor(port: number, opts: ConnectOptions = {}): Promise<MonitorHandle> {
  const o = clientOptions(opts);
  const where = `MONITOR on ${o.host}:${port}`;
  const client = await RespClient.connect(port, o);
  const lines: string[] = [];
  const parsed: MonitorEntry[] = [];
  const waiters = new Set<Waiter>();
  client.onPush = (reply) => {
    if (reply.t !== "status") return;
    lines.push(reply.v);
    const entry = parseMonitorLine(reply.v);
    if (!entry) return;
    parsed.push(entry);
    for (const waiter of waiters) {
      if (waiter.predicate(entry)) {
        waiters.delete(waiter);
        waiter.resolve(entry);
      }
    }
  };
  const stop = () => client.close();
  const ack = await within(
    o.timeoutMs!,
    `${where} not acknowledged within ${o.timeoutMs} ms`,
    client.one("MONITOR"),
    () => {
      void stop();
    },
  );
  if (ack.t === "error") {
    await stop();
    throw new Error(`${where} refused: ${ack.v}`);
  }
  return {
    lines,
    entries: () => [...parsed],
    commands: () => parsed.map((e) => e.args),
    waitFor(predicate, waitMs = 5000) {
      const seen = parsed.find(predicate);
      if (seen) return Promise.resolve(seen);
      let waiter: Waiter | undefined;
      const found = new Promise<MonitorEntry>((resolve) => {
        waiter = { predicate, resolve };
        waiters.add(waiter);
      });
      const message = `${where}: no matching command within ${waitMs} ms (saw ${lines.length} lines)`;
      return within(waitMs, message, found, () => waiters.delete(waiter!));
    },
    stop,
  };
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
