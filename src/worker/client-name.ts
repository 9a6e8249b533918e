/**
 * The client names a worker gives its sockets (`CLIENT SETNAME`): `emq-wake-<queue>` for a
 * queue's wake subscriber (how `CLIENT LIST` counts workers per queue), `emq-lane-<lane>` for a
 * laned queue's other lanes. The server takes only printable ASCII without spaces (`!` to `~`)
 * in a client name, and a queue name may hold any UTF-8 but braces and control characters, so
 * the name is written with every other byte — and `%` itself — as `%XX`. Pure.
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

/** The wake subscriber's name for `queue`. */
export const wakeClientName = (queue: string): string => `emq-wake-${clientNamePart(queue)}`;

/** The name of a laned queue's other lanes' subscribers. */
export const laneClientName = (lane: string): string => `emq-lane-${clientNamePart(lane)}`;
