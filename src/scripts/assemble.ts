/**
 * Script assembly. A script names the shared pieces it uses with header lines
 * (`--- @include "release"`); each such line is replaced by the pieces it brings, each piece once
 * per script, the pieces it includes first (pieces may include pieces; a cycle is refused). The
 * result is the body: the text sent with `EVAL` / `SCRIPT LOAD`, the one the harness pins.
 *
 * Pieces are `lib/<name>.lua` (one function a file), except the `protocol/…` ones, made from the
 * verb's protocol data (`protocol/verbs/<verb>.json`, the grammars of `protocol/protocol.json`):
 * `protocol/form` (the form and its shape checks), `protocol/refuse` (the verb's refusal) and
 * `protocol/checks` (each value's grammar check, in the form's order). Pure: the caller says how files are read,
 * so the loader reads the source folder and the harness reads a pinned commit.
 */
import { formOf, type Grammar, type ProtocolSpec, type VerbSpec } from "../verbs/index.js";

/** Reads a file of the scripts folder (`complete.lua`, `lib/release.lua`); undefined when absent. */
export type PieceReader = (path: string) => string | undefined;

/** A script cannot be assembled: an unknown piece, a cycle, a bad include line. */
export class AssemblyError extends Error {
  override readonly name = "AssemblyError";
}

const INCLUDE = /^--- @include "([a-z_/]+)"$/;

/** What the `protocol/…` pieces are made from: the verb's spec and the value grammars. */
export interface ScriptData {
  spec: VerbSpec;
  grammars: ProtocolSpec["grammars"];
}

/** Each grammar's check of the value `v` (Lua), and the pieces it calls. */
function check(grammar: Grammar, v: string, max: number | undefined): [string, string[]] {
  switch (grammar) {
    case "ms":
    case "positive":
      return [`positive(${v})`, ["positive"]];
    case "delay":
    case "count":
      return [`count(${v})`, ["count"]];
    case "limit":
      return [`positive(${v}) and tonumber(${v}) <= 10000`, ["positive"]];
    case "priority":
      return [`integer(${v})`, ["integer"]];
    case "trace":
      return [`traced(${v})`, ["traced"]];
    case "label":
      return [`label(${v})`, ["label"]];
    case "name":
      return [`named(${v})`, ["named"]];
    case "parent":
      return [`parented(${v})`, ["parented"]];
    default:
      if (max === undefined) throw new AssemblyError(`the grammar ${grammar} has no check and no max_bytes`);
      return [`within(${v}, ${max})`, ["within"]];
  }
}

/** The pieces made from the protocol data, by name: the verb's data → the piece's text. */
const GENERATED: Record<string, (data: ScriptData) => string> = {
  "protocol/form": ({ spec }) => {
    const tag = `ERR EMQ.${spec.verb}`;
    const n = spec.values.length;
    // Repeating values: the fixed ones, then 1 to `max` groups of `last`.
    const arity = spec.repeat
      ? `#ARGV < ${n} or #ARGV > ${n + (spec.repeat.max - 1) * spec.repeat.last} or (#ARGV - ${n}) % ${spec.repeat.last} ~= 0`
      : `#ARGV ~= ${n}`;
    return [
      `local form = '${formOf(spec)}'`,
      `if #KEYS ~= ${spec.keys.length} then return redis.error_reply('${tag} wrong number of keys: ' .. form) end`,
      `if ${arity} then return redis.error_reply('${tag} wrong number of values: ' .. form) end`,
      "",
    ].join("\n");
  },
  "protocol/refuse": ({ spec }) =>
    `local function refuse(text) return redis.error_reply('ERR EMQ.${spec.verb} ' .. text) end\n`,
  // Each value with a grammar, in the order of the form: refused by its rule, `<name> must be
  // <rule>`; repeating values checked group by group, each group in the form's order.
  "protocol/checks": ({ spec, grammars }) => {
    const pieces = new Set<string>(["protocol/refuse"]);
    const lines: string[] = [];
    const first = spec.repeat ? spec.values.length - spec.repeat.last : spec.values.length;
    const line = (i: number, at: string, indent: string) => {
      const value = spec.values[i]!;
      if (!value.grammar) return;
      const g = grammars[value.grammar];
      const [test, uses] = check(value.grammar, `ARGV[${at}]`, g.max_bytes);
      for (const use of uses) pieces.add(use);
      const text = `${value.name ?? value.slot} must be ${g.rule}`.replace(/'/g, "\\'");
      lines.push(`${indent}if not (${test}) then return refuse('${text}') end`);
    };
    for (let i = 0; i < first; i++) line(i, String(i + 1), "");
    if (spec.repeat) {
      const { last } = spec.repeat;
      lines.push(`for at = ${first}, #ARGV - 1, ${last} do`);
      for (let i = first; i < spec.values.length; i++) line(i, `at + ${i - first + 1}`, "  ");
      lines.push("end");
    }
    return [...[...pieces].map((p) => `--- @include "${p}"`), ...lines, ""].join("\n");
  },
};

/** The piece names a text includes, in order, with the text less its include lines. */
function split(where: string, text: string): { includes: string[]; rest: string } {
  const includes: string[] = [];
  const lines = text.split("\n").filter((line) => {
    if (!line.startsWith("--- @include")) return true;
    const m = INCLUDE.exec(line);
    if (!m)
      throw new AssemblyError(
        `${where}: bad include line ${JSON.stringify(line)}: write --- @include "<piece>"`,
      );
    includes.push(m[1]!);
    return false;
  });
  return { includes, rest: lines.join("\n") };
}

/**
 * The body of `<name>.lua`: each include line replaced by the pieces it brings that the script
 * has not brought yet, dependencies first. `data` is the protocol data of the verb the script
 * is the twin of (needed only by the `protocol/…` pieces).
 */
export function assemble(name: string, read: PieceReader, data?: ScriptData): string {
  const source = read(`${name}.lua`);
  if (source === undefined) throw new AssemblyError(`no script ${name}.lua`);
  const placed = new Set<string>();
  const bring = (piece: string, chain: string[]): string => {
    if (chain.includes(piece)) {
      throw new AssemblyError(`${name}.lua: the pieces include each other: ${[...chain, piece].join(" → ")}`);
    }
    if (placed.has(piece)) return "";
    let text: string;
    const made = GENERATED[piece];
    if (made) {
      if (!data)
        throw new AssemblyError(`${name}.lua includes ${piece}, but no verb's protocol data names ${name}`);
      text = made(data);
    } else {
      const file = read(`lib/${piece}.lua`);
      if (file === undefined)
        throw new AssemblyError(`${name}.lua includes ${piece}: no piece lib/${piece}.lua`);
      text = file;
    }
    const { includes, rest } = split(`lib/${piece}.lua`, text);
    const before = includes.map((dep) => bring(dep, [...chain, piece])).join("");
    placed.add(piece);
    return before + rest;
  };
  return source
    .split("\n")
    .map((line) => {
      if (!line.startsWith("--- @include")) return `${line}\n`;
      const m = INCLUDE.exec(line);
      if (!m)
        throw new AssemblyError(
          `${name}.lua: bad include line ${JSON.stringify(line)}: write --- @include "<piece>"`,
        );
      return bring(m[1]!, []);
    })
    .join("")
    .slice(0, -1);
}

/** The pieces a script's body holds (its includes and theirs, those of the protocol pieces too), sorted. */
export function piecesOf(name: string, read: PieceReader, data?: ScriptData): string[] {
  const seen = new Set<string>();
  const walk = (text: string, where: string) => {
    for (const dep of split(where, text).includes) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      const made = GENERATED[dep];
      if (made) walk(data ? made(data) : "", dep);
      else walk(read(`lib/${dep}.lua`) ?? "", `lib/${dep}.lua`);
    }
  };
  walk(read(`${name}.lua`) ?? "", `${name}.lua`);
  return [...seen].sort();
}
