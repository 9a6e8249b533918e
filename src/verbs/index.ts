/**
 * The protocol as the host uses it: each verb's spec (from `protocol/`), its form as written in
 * refusals and in the docs, and the job-core verb list. Pure functions over the data.
 */
import { PROTOCOL, VERB_SPECS, type KeySlot, type VerbSpec } from "./data.js";

export {
  parseProtocol,
  PROTOCOL,
  readProtocolFiles,
  VERB_SPECS,
  type DerivedKey,
  type Grammar,
  type KeyPrefix,
  type KeySlot,
  type KeySpec,
  type KeyTypeSpec,
  type ProtocolFiles,
  type QueueKeyType,
  type ProtocolSpec,
  type TimeSet,
  type ValueSpec,
  type VerbClass,
  type VerbSpec,
} from "./data.js";

/** The spec of a command (`CLAIM`, `INSTALL`, …); throws for a token the protocol lacks. */
export function verbSpec(verb: string): VerbSpec {
  const spec = VERB_SPECS.get(verb);
  if (!spec) throw new Error(`the protocol has no command ${verb}`);
  return spec;
}

/** The job-core verb specs, in the order `EMQ.VERSION` lists them. */
export const JOB_CORE: readonly VerbSpec[] = PROTOCOL.job_core.map(verbSpec);

/** A key slot as a form writes it: `<pending>`, `<row>`, `<base>`; the brand key as itself. */
export function placeholder(slot: KeySlot): string {
  return slot === "version" ? PROTOCOL.brands.key : `<${slot}>`;
}

/**
 * The form: `EMQ.<VERB> <numkeys> <keys…> <values…>` (the text shape refusals name). A read
 * command without keys (`EMQ.VERSION`) takes no `numkeys` at all. Repeating values are written
 * once, then again in brackets with an ellipsis: `<id> <token> [<id> <token> ...]`.
 */
export function formOf(spec: VerbSpec): string {
  if (spec.class === "read" && spec.keys.length === 0) return `EMQ.${spec.verb}`;
  const keys = spec.keys.map((k) => placeholder(k.slot));
  const values = spec.values.map((v) => `<${v.slot}>`);
  if (spec.repeat) values.push(`[${values.slice(-spec.repeat.last).join(" ")} ...]`);
  return [`EMQ.${spec.verb}`, String(spec.keys.length), ...keys, ...values].join(" ");
}

/** The index of the verb's anchor key (the key its queue name is recovered from). */
export function anchorOf(spec: VerbSpec): number {
  const at = spec.keys.findIndex((k) => k.anchor === true);
  if (at === -1) throw new Error(`the protocol gives ${spec.verb} no anchor key`);
  return at;
}
