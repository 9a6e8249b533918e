/**
 * A small MONITOR reader for the stand: one raw socket, `MONITOR`, then every line the server
 * feeds it, parsed into its time, client and arguments. No dependencies beyond `node:net`.
 */
import net from "node:net";

/** One MONITOR line: `<time> [<db> <client>] "arg" "arg" …`. */
export interface MonitorLine {
  /** The line as the server sent it. */
  raw: string;
  /** Server time of the command, seconds with microseconds. */
  time: number;
  /** `ip:port` of the client that sent it, or `lua` for a command a script ran. */
  client: string;
  /** The arguments, unescaped (bytes as latin1). */
  args: string[];
}

export interface Monitor {
  /** Every parsed line received so far, in order. */
  readonly lines: MonitorLine[];
  /** Resolves with the first line (received or still to come) matching `match`. */
  waitFor(match: (line: MonitorLine) => boolean, timeoutMs?: number): Promise<MonitorLine>;
  stop(): void;
}

const ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", a: "\x07", b: "\b" };

/** Parses one MONITOR line; null when it does not have the expected shape. */
export function parseMonitorLine(raw: string): MonitorLine | null {
  const head = /^(\d+\.\d+) \[\d+ ([^\]]*)\]/.exec(raw);
  if (!head) return null;
  const args: string[] = [];
  let i = head[0].length;
  while (i < raw.length) {
    if (raw[i] === " ") {
      i++;
      continue;
    }
    if (raw[i] !== '"') return null;
    let arg = "";
    for (i++; i < raw.length && raw[i] !== '"'; i++) {
      if (raw[i] !== "\\") {
        arg += raw[i];
      } else if (raw[i + 1] === "x") {
        arg += String.fromCharCode(Number.parseInt(raw.slice(i + 2, i + 4), 16));
        i += 3;
      } else {
        const next = raw[i + 1] ?? "";
        arg += ESCAPES[next] ?? next;
        i++;
      }
    }
    args.push(arg);
    i++;
  }
  return { raw, time: Number(head[1]), client: head[2] ?? "", args };
}

/** Opens a MONITOR on `host:port`; resolves once the server acknowledged it with `+OK`. */
export function openMonitor(host: string, port: number, timeoutMs = 5000): Promise<Monitor> {
  const lines: MonitorLine[] = [];
  const waiters = new Set<{ match: (line: MonitorLine) => boolean; resolve: (line: MonitorLine) => void }>();
  const socket = net.connect({ host, port });
  let buffered = "";
  let acknowledged = false;
  return new Promise<Monitor>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`MONITOR on ${host}:${port} not acknowledged`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (!acknowledged) reject(err);
    };
    socket.on("error", (err) => fail(new Error(`MONITOR on ${host}:${port}: ${err.message}`)));
    socket.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("latin1");
      for (let end = buffered.indexOf("\r\n"); end !== -1; end = buffered.indexOf("\r\n")) {
        const reply = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (reply.startsWith("-")) return fail(new Error(`MONITOR on ${host}:${port}: ${reply.slice(1)}`));
        if (!acknowledged) {
          acknowledged = true;
          clearTimeout(timer);
          resolve(monitor);
          continue;
        }
        const line = parseMonitorLine(reply.slice(1));
        if (!line) continue;
        lines.push(line);
        for (const waiter of waiters) {
          if (waiter.match(line)) {
            waiters.delete(waiter);
            waiter.resolve(line);
          }
        }
      }
    });
    const monitor: Monitor = {
      lines,
      waitFor(match, waitMs = 5000) {
        const seen = lines.find(match);
        if (seen) return Promise.resolve(seen);
        return new Promise<MonitorLine>((res, rej) => {
          const waiter = {
            match,
            resolve: (line: MonitorLine) => {
              clearTimeout(t);
              res(line);
            },
          };
          const t = setTimeout(() => {
            waiters.delete(waiter);
            rej(new Error(`MONITOR on ${host}:${port}: no matching line within ${waitMs} ms`));
          }, waitMs);
          waiters.add(waiter);
        });
      },
      stop: () => socket.destroy(),
    };
    socket.write("MONITOR\r\n");
  });
}
