/**
 * The client name a worker's wake subscriber carries (`CLIENT SETNAME`), written here and read
 * back by `CLIENT LIST` (`src/observe/workers.ts`): the queue, then what the worker announces —
 * `emq-wake-<queue>%;i=<id>;c=<concurrency>;b=<busy>;h=<host>;p=<pid>`. Nothing is written to
 * the keyspace: the socket is the announcement, and it ends when the socket does.
 *
 * The server takes only printable ASCII without spaces (`!` to `~`) in a client name, and a queue
 * name may hold any UTF-8 but braces and control characters, so text is written with every other
 * byte — and `%` itself — as `%XX` (`clientNamePart`). A written part therefore never holds `%`
 * followed by `;`, which is what ends the queue's part. Pure.
 */

/** `text`'s UTF-8 bytes, each outside `!`–`~` (and `%`) as `%XX`. */
export function clientNamePart(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    out +=
      byte > 0x20 && byte < 0x7f && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** The text a `clientNamePart` spells. */
export function fromClientNamePart(part: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < part.length; i++) {
    const hex = part[i] === "%" ? /^[0-9A-F]{2}$/.exec(part.slice(i + 1, i + 3)) : null;
    if (hex) {
      bytes.push(Number.parseInt(hex[0], 16));
      i += 2;
    } else bytes.push(part.charCodeAt(i) & 0xff);
  }
  return Buffer.from(bytes).toString("utf8");
}

const WAKE_PREFIX = "emq-wake-";
/** Ends the queue's part of a wake subscriber's name; the announced fields follow. */
const FIELDS = "%;";

/** A field's text: a name part with `;` (which ends a field) as `%3B` too. */
const fieldPart = (text: string): string => clientNamePart(text).replaceAll(";", "%3B");

/** What a worker announces on its wake subscriber. */
export interface Announced {
  /** The worker's own id (random, fixed for its life; a reconnected socket keeps it). */
  id: string;
  concurrency: number;
  /** Slots running a handler now. */
  busy: number;
  host: string;
  pid: number;
}

/** The wake subscriber's name for `queue`, with what the worker announces when given. */
export function wakeClientName(queue: string, announced?: Announced): string {
  const base = `${WAKE_PREFIX}${clientNamePart(queue)}`;
  if (!announced) return base;
  const { id, concurrency, busy, host, pid } = announced;
  return `${base}${FIELDS}i=${fieldPart(id)};c=${concurrency};b=${busy};h=${fieldPart(host)};p=${pid}`;
}

/** A wake subscriber's name read back: the queue, and the announced fields when it carries them. */
export function parseWakeClientName(name: string): { queue: string; announced: Announced | null } | null {
  if (!name.startsWith(WAKE_PREFIX)) return null;
  const rest = name.slice(WAKE_PREFIX.length);
  const at = rest.indexOf(FIELDS);
  const queue = fromClientNamePart(at === -1 ? rest : rest.slice(0, at));
  if (at === -1) return { queue, announced: null };
  const fields = new Map<string, string>();
  for (const pair of rest.slice(at + FIELDS.length).split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0) fields.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  const int = (key: string) => {
    const v = fields.get(key);
    return v !== undefined && /^\d{1,9}$/.test(v) ? Number(v) : null;
  };
  const [concurrency, busy, pid] = [int("c"), int("b"), int("p")];
  if (concurrency === null || busy === null || pid === null) return { queue, announced: null };
  return {
    queue,
    announced: {
      id: fromClientNamePart(fields.get("i") ?? ""),
      concurrency,
      busy,
      host: fromClientNamePart(fields.get("h") ?? ""),
      pid,
    },
  };
}
