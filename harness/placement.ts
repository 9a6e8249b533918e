/**
 * Queue names in a chosen cluster slot. A queue's keys are `emq:{<name>}:…`, so the name is the
 * hashtag and its slot is `crc16(name) mod 16384`. On a cluster the harness gives every queue of
 * a case a name in one slot — the script side's and the native side's alike, so a lease-exact
 * `MULTI … EXEC` holds both — by appending a short suffix: `<base>.<suffix>`.
 *
 * The suffix is found without a search: CRC16-XMODEM (init 0, no final xor) is linear over GF(2),
 * so for a suffix of fixed length n, crc16(x ‖ s) = crc16(x ‖ 0ⁿ) ⊕ crc16(s) for any prefix x.
 * One table maps each 14-bit value to a suffix whose CRC16 ends in those bits (the slot is the
 * CRC's low 14 bits).
 */
import { crc16 } from "../src/keyspace.js";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/** Suffix length: 62³ = 238,328 suffixes cover all 16,384 slots. */
const N = 3;
const SLOTS = 16384;

/** The first suffix (in alphabet order) whose CRC16's low 14 bits are each value. */
const SUFFIX_BY_BITS: readonly string[] = (() => {
  const table: string[] = new Array(SLOTS);
  let found = 0;
  for (const a of ALPHABET)
    for (const b of ALPHABET)
      for (const c of ALPHABET) {
        const s = a + b + c;
        const bits = crc16(Buffer.from(s, "latin1")) % SLOTS;
        if (table[bits] === undefined) {
          table[bits] = s;
          found += 1;
        }
      }
  if (found !== SLOTS) throw new Error(`placement: ${N}-character suffixes cover ${found} slots only`);
  return table;
})();

/** The slot of a queue name (its keys' hashtag). */
export function nameSlot(name: string): number {
  return crc16(Buffer.from(name, "latin1")) % SLOTS;
}

/** `<base>.<suffix>`, a queue name whose keys are in `slot`. */
export function nameInSlot(base: string, slot: number): string {
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS) throw new RangeError(`no slot ${slot}`);
  const head = `${base}.`;
  const zeros = crc16(Buffer.from(head + "\0".repeat(N), "latin1")) % SLOTS;
  return head + SUFFIX_BY_BITS[zeros ^ slot];
}
