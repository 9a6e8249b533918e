/**
 * The connector side of the version fence (docs/protocol.md, "The version fence"). Each function
 * runs on a fresh socket after the boot commands and before the socket carries anything else;
 * `send` speaks raw RESP.
 */
import { VersionFenceError } from "../errors.js";
import { VERSION_KEY } from "../keyspace.js";
import { PROTOCOL } from "../verbs/data.js";
import { RespError, type RespReply } from "../resp.js";
import { parseModuleVersion, VERSION_LINE, VERSION_VERB } from "./version.js";

export { type ModuleVersion, parseModuleVersion } from "./version.js";

/** The brands, from the protocol data (`protocol/protocol.json` `brands`). */
export const WIRE4_BRAND = PROTOCOL.brands.wire4;
export const WIRE6_BRAND = PROTOCOL.brands.wire6;
export const MODULE_MAJOR = 0;

export type Send = (args: readonly (string | number)[]) => Promise<RespReply>;

/** A reply that is not what a fence can judge: transient, the connector retries the socket. */
class FenceTransientError extends Error {}

/** Server states that pass with time; any other refusal while fencing is final. */
const TRANSIENT = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY)\b/;

/** True for a reply of a server state that passes with time (loading, busy, failing over). */
export function isTransientReply(message: string): boolean {
  return TRANSIENT.test(message);
}

function refusal(expected: string, step: string, reply: RespError): Error {
  if (isTransientReply(reply.message)) return new FenceTransientError(`${step}: ${reply.message}`);
  const got = reply.message.startsWith("WRONGTYPE") ? "a value that is not a string" : "unreadable";
  return new VersionFenceError(expected, got, `${step}: ${reply.message}`);
}

function brandOf(expected: string, reply: RespReply): string {
  if (reply === null) return "absent";
  if (reply instanceof RespError) throw refusal(expected, `reading ${VERSION_KEY}`, reply);
  return String(reply);
}

/**
 * Wire 4 on one node: refuse a node that runs the module (`noModuleFence`) before anything is
 * written, then the brand (`fenceWire4`).
 */
export async function fenceWire4Node(send: Send): Promise<void> {
  await noModuleFence(send);
  await fenceWire4(send);
}

/** Wire 4: pass on our brand; claim an absent key with SET NX and read it back; refuse all else. */
export async function fenceWire4(send: Send): Promise<void> {
  let got = brandOf(WIRE4_BRAND, await send(["GET", VERSION_KEY]));
  if (got === "absent") {
    const set = await send(["SET", VERSION_KEY, WIRE4_BRAND, "NX"]);
    if (set instanceof RespError) throw refusal(WIRE4_BRAND, `claiming ${VERSION_KEY}`, set);
    got = brandOf(WIRE4_BRAND, await send(["GET", VERSION_KEY]));
  }
  if (got !== WIRE4_BRAND) throw new VersionFenceError(WIRE4_BRAND, got);
}

/**
 * Wire 6: writes nothing. The module must report the wire, module major 0 and every verb the
 * host's scripts declare; then the key must hold the module's brand.
 */
export async function fenceWire6(send: Send, requiredVerbs: readonly string[]): Promise<void> {
  await moduleFence(send, requiredVerbs);
  await brandWire6(send);
}

/** Wire 6, the node half: `EMQ.VERSION` reports wire `WIRE6_BRAND`, module major 0 and every required verb. */
export async function moduleFence(send: Send, requiredVerbs: readonly string[]): Promise<void> {
  const reply = await send(VERSION_LINE);
  if (reply instanceof RespError) {
    if (/unknown command/i.test(reply.message)) {
      throw new VersionFenceError(WIRE6_BRAND, "no module", "EMQ.VERSION is not a command on this node");
    }
    throw refusal(WIRE6_BRAND, VERSION_VERB, reply);
  }
  const version = parseModuleVersion(reply);
  if (!version) throw new VersionFenceError(WIRE6_BRAND, "unreadable EMQ.VERSION reply");
  if (version.brand !== WIRE6_BRAND) throw new VersionFenceError(WIRE6_BRAND, version.brand, "module wire");
  if (Number(version.module.split(".")[0]) !== MODULE_MAJOR) {
    throw new VersionFenceError(
      WIRE6_BRAND,
      `module ${version.module}`,
      `module major ${MODULE_MAJOR} required`,
    );
  }
  const missing = requiredVerbs.filter((verb) => !version.verbs.includes(verb));
  if (missing.length > 0) {
    throw new VersionFenceError(
      WIRE6_BRAND,
      `module ${version.module}`,
      `it lacks verbs ${missing.join(", ")}`,
    );
  }
}

/** Wire 6, the brand half: the brand key (`brands.key`) must read `WIRE6_BRAND` (written by `EMQ.INSTALL`). */
export async function brandWire6(send: Send): Promise<void> {
  const got = brandOf(WIRE6_BRAND, await send(["GET", VERSION_KEY]));
  if (got === "absent") throw new VersionFenceError(WIRE6_BRAND, got, UNBRANDED);
  if (got !== WIRE6_BRAND) throw new VersionFenceError(WIRE6_BRAND, got);
}

/** What a wire-6 refusal of a module node with no brand says to do. */
const UNBRANDED =
  "the node runs the echomq module but is not branded yet: brand it once with `echomq install` (or installModuleBrand())";

/**
 * Wire 4, the node half (on one node and on every node of a cluster): the node must not run the module — `EMQ.VERSION` must be an
 * unknown command. Any other answer (the module's reply, or a refusal such as `NOPERM`, which
 * only a command that exists gets) means it does.
 */
export async function noModuleFence(send: Send): Promise<void> {
  const reply = await send(VERSION_LINE);
  if (reply instanceof RespError) {
    if (/unknown command/i.test(reply.message)) return;
    if (isTransientReply(reply.message)) throw new FenceTransientError(`EMQ.VERSION: ${reply.message}`);
  }
  const module = parseModuleVersion(reply)?.module;
  throw new VersionFenceError(
    WIRE4_BRAND,
    module === undefined ? "the echomq module" : `the echomq module ${module}`,
    "the node runs the echomq module, so it serves wire 6 only: connect with { wire: 6 }, after branding it once with `echomq install` (or installModuleBrand()); nothing was written",
  );
}
