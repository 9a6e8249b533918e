/**
 * Parsing a command line (node:util `parseArgs`, strict): the global options every command takes,
 * then the command's own options and positionals. Pure: argv and environment in, a typed
 * invocation or a `UsageError` out.
 */
import { parseArgs } from "node:util";
import { UsageError } from "./errors.js";

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  /** The value's placeholder in help (`<ms>`), for a string option. */
  value?: string;
  help: string;
}

/** What a command takes: its options, and its positionals (`<queue>`, `[id...]`). */
export interface Shape {
  name: string;
  options: Record<string, OptionSpec>;
  positionals: readonly { name: string; required: boolean; many?: boolean }[];
}

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: {
    type: "string",
    value: "<url>",
    help: "server URL, e.g. redis://127.0.0.1:6379 (default: $VALKEY_URL, else 127.0.0.1:6379)",
  },
  nodes: { type: "string", value: "<host:port,…>", help: "a cluster's seed nodes, comma-separated" },
  wire: {
    type: "string",
    value: "<4|6|auto>",
    help: "the executor: 4 scripts, 6 the module (default auto: 6 when the node runs the module)",
  },
  json: { type: "boolean", help: "machine output: one JSON document (events: one per line)" },
  help: { type: "boolean", short: "h", help: "show help" },
};

export interface Globals {
  url?: string;
  nodes?: { host: string; port: number }[];
  wire: 4 | 6 | "auto";
  json: boolean;
  help: boolean;
}

export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Invocation {
  globals: Globals;
  values: Values;
  positionals: Record<string, string | string[] | undefined>;
}

/** The command word: the first argument that is not an option (null: none). */
export function commandOf(argv: readonly string[]): string | null {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("-")) return a;
    const name = a.replace(/^--?/, "").split("=")[0]!;
    const spec = GLOBAL_OPTIONS[name];
    if (spec?.type === "string" && !a.includes("=")) i++;
  }
  return null;
}

/** Parses `argv` (without the command word) for `shape`; `env` gives `VALKEY_URL`. */
export function parseInvocation(
  shape: Shape,
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
): Invocation {
  const options = { ...GLOBAL_OPTIONS, ...shape.options };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: joinNegatives(argv, options),
      options: Object.fromEntries(
        Object.entries(options).map(([k, o]) => [
          k,
          { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional.*$/s, ""), shape.name);
  }
  const values = { ...parsed.values } as Values;
  const globals = globalsOf(values, env, shape.name);
  const positionals: Invocation["positionals"] = {};
  const given = [...parsed.positionals];
  if (!globals.help) {
    for (const p of shape.positionals) {
      if (p.many) {
        if (p.required && given.length === 0) throw new UsageError(`missing <${p.name}>`, shape.name);
        positionals[p.name] = given.splice(0);
      } else {
        const v = given.shift();
        if (v === undefined && p.required) throw new UsageError(`missing <${p.name}>`, shape.name);
        positionals[p.name] = v;
      }
    }
    if (given.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(given[0])}`, shape.name);
  }
  for (const k of Object.keys(GLOBAL_OPTIONS)) delete values[k];
  return { globals, values, positionals };
}

/** `--priority -1` → `--priority=-1`: a string option's value may be a negative number. */
function joinNegatives(argv: readonly string[], options: Record<string, OptionSpec>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    const name = a.startsWith("--") ? a.slice(2) : null;
    if (name !== null && options[name]?.type === "string" && next !== undefined && /^-\d+$/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

function globalsOf(values: Values, env: Record<string, string | undefined>, command: string): Globals {
  const wireText = (values.wire as string | undefined) ?? "auto";
  if (wireText !== "4" && wireText !== "6" && wireText !== "auto") {
    throw new UsageError(`--wire must be 4, 6 or auto, got ${JSON.stringify(wireText)}`, command);
  }
  const globals: Globals = {
    wire: wireText === "auto" ? "auto" : (Number(wireText) as 4 | 6),
    json: values.json === true,
    help: values.help === true,
  };
  const url = (values.url as string | undefined) ?? env.VALKEY_URL;
  if (url) globals.url = url;
  if (typeof values.nodes === "string") globals.nodes = nodesOf(values.nodes, command);
  return globals;
}

/** `host:port,host:port` → nodes; a malformed entry is a usage error naming it. */
export function nodesOf(text: string, command?: string): { host: string; port: number }[] {
  const nodes = text
    .split(",")
    .filter((s) => s.trim() !== "")
    .map((entry) => {
      const m = /^\s*(\[[^\]]+\]|[^:\s]+):(\d{1,5})\s*$/.exec(entry);
      const port = Number(m?.[2]);
      if (!m || port < 1 || port > 65535) {
        throw new UsageError(`--nodes: ${JSON.stringify(entry)} is not host:port`, command);
      }
      return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
    });
  if (nodes.length === 0) throw new UsageError("--nodes: no node given", command);
  return nodes;
}

/** An integer option: absent → `fallback`; else decimal digits within [min, max]. */
export function intOption(
  values: Values,
  name: string,
  fallback: number | undefined,
  min: number,
  max: number,
  command: string,
): number | undefined {
  const v = values[name];
  if (v === undefined) return fallback;
  if (typeof v !== "string" || !/^-?\d{1,15}$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new UsageError(
      `--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`,
      command,
    );
  }
  return Number(v);
}
