/**
 * The `version` family's host side (module/src/verbs/version.rs on the native side): the one line
 * that asks a node what it runs (`EMQ.VERSION`), and the reading of its reply. The fence
 * (./fence.ts), the native engine's capabilities, the CLI's wire detection and the queue's module
 * extensions all ask through here.
 */
import type { RespReply } from "../resp.js";

/** The command itself. */
export const VERSION_VERB = "EMQ.VERSION";
/** The whole line: `EMQ.VERSION` takes no key and no value. */
export const VERSION_LINE: readonly string[] = [VERSION_VERB];

/** A sender that routes by a key (a queue's slot on a cluster). */
type RoutedSend = (command: string, args: readonly [], routeKey: string) => Promise<unknown>;

export interface ModuleVersion {
  /** The brand the module speaks (the reply's `wire` field). */
  brand: string;
  module: string;
  verbs: string[];
  /** The verbs beside the job core (`BCLAIM`); none from a module before 0.4.0. */
  extensions: string[];
  /** What the module does beyond its verbs (`timers`: it promotes and reaps by itself); none before 0.4.0. */
  features: string[];
}

export function parseModuleVersion(reply: RespReply): ModuleVersion | null {
  if (!Array.isArray(reply)) return null;
  const fields = new Map<string, RespReply>();
  for (let i = 0; i + 1 < reply.length; i += 2) fields.set(String(reply[i]), reply[i + 1]!);
  const verbs = fields.get("verbs");
  if (!Array.isArray(verbs)) return null;
  const extensions = fields.get("extensions");
  const features = fields.get("features");
  return {
    brand: String(fields.get("wire")),
    module: String(fields.get("module")),
    verbs: verbs.map(String),
    extensions: Array.isArray(extensions) ? extensions.map(String) : [],
    features: Array.isArray(features) ? features.map(String) : [],
  };
}

/** `EMQ.VERSION` of the node that holds `routeKey`: null from a module before 0.4.0 or a node without it. */
export async function versionAt(send: RoutedSend, routeKey: string): Promise<ModuleVersion | null> {
  return parseModuleVersion((await send(VERSION_VERB, [], routeKey)) as RespReply);
}
