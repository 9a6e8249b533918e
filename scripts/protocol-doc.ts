/**
 * Writes the verb tables of docs/protocol.md from the protocol data (`protocol/verbs/*.json`):
 * the overview of every command, the keyspace (every key, the derived ones too), the classes, the value
 * grammars, and each verb's form and table. Text between
 * `<!-- generated: … -->` and `<!-- /generated -->` is replaced; everything else is kept.
 *
 *   npx tsx scripts/protocol-doc.ts          # rewrite docs/protocol.md
 *   npx tsx scripts/protocol-doc.ts --check  # exit 1 when docs/protocol.md is not what the data says
 *
 * It writes (and checks) `src/verbs/names.ts` too: the verb tokens, the key slots, the derived keys
 * and the key types as union types, so a call names only a verb and a key the data declares.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { formOf, JOB_CORE, PROTOCOL, VERB_SPECS, type VerbSpec, verbSpec } from "../src/protocol.js";
import type { KeyTypeSpec } from "../src/verbs/index.js";

const DOC = fileURLToPath(new URL("../docs/protocol.md", import.meta.url));
const NAMES = fileURLToPath(new URL("../src/verbs/names.ts", import.meta.url));

/** A union type of `members`, documented. */
function union(doc: string, name: string, members: readonly string[]): string {
  const line = `export type ${name} = ${members.map((m) => `"${m}"`).join(" | ")};`;
  const body =
    line.length <= 110 ? line : `export type ${name} =\n${members.map((m) => `  | "${m}"`).join("\n")};`;
  return `/** ${doc} */\n${body}\n`;
}

/** What follows the queue's base in a key of the data (`emq:{q}:pending` → `pending`). */
function typeText(pattern: string): string {
  const base = PROTOCOL.key_slots.base.pattern;
  const rest = pattern.startsWith("<base>") ? pattern.slice("<base>".length) : pattern.slice(base.length);
  return rest.replace(/<[a-z]+>$/, "");
}

/** The queue keys of the data (not the brand key): each name with its type text. */
function queueKeys(): [string, string][] {
  const slots = Object.entries(PROTOCOL.key_slots).filter(([name]) => name !== "version");
  return [...slots, ...Object.entries(PROTOCOL.derived_keys)].map(([name, key]) => [
    name,
    typeText(key.pattern),
  ]);
}

/** `src/verbs/names.ts` as the data makes it: the verb tokens and the key names and types. */
function names(): string {
  const keys = queueKeys();
  const fixed = keys.filter(([, type]) => !type.endsWith(":")).map(([, type]) => type);
  const prefixes = keys.filter(([, type]) => type.endsWith(":")).map(([, type]) => type);
  return [
    "/** Generated from protocol/ by scripts/protocol-doc.ts: do not edit. */\n",
    union("A verb token the protocol declares.", "VerbName", [...VERB_SPECS.keys()]),
    union(
      "A key slot a verb may declare (`protocol.json` `key_slots`).",
      "KeySlot",
      Object.keys(PROTOCOL.key_slots),
    ),
    union(
      "A key a transition derives from the queue's base (`protocol.json` `derived_keys`).",
      "DerivedKey",
      Object.keys(PROTOCOL.derived_keys),
    ),
    union(
      'The type of a queue key there is one of per queue: what follows the base (`""`: the base itself).',
      "QueueKeyType",
      fixed,
    ),
    union(
      "The type prefix of a queue key there is one of per parameter (`job:` + an id: the row).",
      "KeyPrefix",
      prefixes,
    ),
  ].join("\n");
}

const MARK = /<!-- generated: ([a-z]+)(?: ([A-Z]+))? -->\n[\s\S]*?<!-- \/generated -->/g;

/** The key as the docs write it: `emq:{q}:pending`, the base, the row, the brand key. */
function keyText(spec: VerbSpec, i: number): string {
  const key = spec.keys[i]!;
  const shown = `\`${PROTOCOL.key_slots[key.slot].pattern}\``;
  const notes = [
    key.anchor ? "anchor" : "",
    key.slot === "base" || key.slot === "row" ? key.slot : "",
    key.about ?? "",
  ];
  const note = notes.filter((n) => n !== "").join("; ");
  return `${i + 1} ${shown}${note ? ` (${note})` : ""}`;
}

function valueText(spec: VerbSpec, i: number): string {
  const value = spec.values[i]!;
  const grammar = value.grammar ? ` *${value.grammar}*${value.name ? ` (\`${value.name}\`)` : ""}` : "";
  const about = value.about ? `: ${value.about}` : "";
  return `${i + 1} \`<${value.slot}>\`${grammar}${about}`;
}

/** The class of a command: its flags on the module and the first line of its script. */
function classText(spec: VerbSpec): string {
  const c = PROTOCOL.classes[spec.class];
  const script = spec.script ? `, \`${spec.script}.lua\` starts \`${c.shebang}\`` : "";
  const flags = spec.blocking ? `${c.flags} blocking` : c.flags;
  return `${spec.class} (module flags \`${flags}\`${script})`;
}

/** One verb's form line and table. */
function verbTable(spec: VerbSpec): string {
  const rows: [string, string][] = [
    ["KEYS", spec.keys.length ? spec.keys.map((_, i) => keyText(spec, i)).join(" · ") : "none"],
    ["ARGV", spec.values.length ? spec.values.map((_, i) => valueText(spec, i)).join(" · ") : "none"],
    ["class", classText(spec)],
    ...spec.doc,
  ];
  return [
    `Form: \`${formOf(spec)}\` — ${spec.summary}`,
    "",
    "| | |",
    "|---|---|",
    ...rows.map(([head, cell]) => `| ${head} | ${cell} |`),
  ].join("\n");
}

/** A key's pattern as the docs write it: whole (`emq:{q}:group:<group>`), a derived key's too. */
function patternText(pattern: string): string {
  return pattern.replace("<base>", PROTOCOL.key_slots.base.pattern);
}

/**
 * The keyspace: every key of the data — the slots a verb declares, then the keys a transition
 * derives from the base — with its type, what it holds and the verbs that touch it (a slot's:
 * the verbs that declare it).
 */
function keys(): string {
  const declaring = (slot: string) =>
    [...VERB_SPECS.values()].filter((s) => s.keys.some((k) => k.slot === slot)).map((s) => s.verb);
  const brands = `: \`${PROTOCOL.brands.wire4}\` (scripts) or \`${PROTOCOL.brands.wire6}\` (module)`;
  const row = (pattern: string, key: KeyTypeSpec, verbs: string[], extra = "") =>
    `| \`${patternText(pattern)}\` | ${key.type} | ${key.holds}${extra} | ${verbs.join(" ")} |`;
  return [
    "| key | type | holds | verbs |",
    "|---|---|---|---|",
    ...Object.entries(PROTOCOL.key_slots).map(([slot, key]) =>
      row(key.pattern, key, declaring(slot), slot === "version" ? brands : ""),
    ),
    ...Object.values(PROTOCOL.derived_keys).map((key) => row(key.pattern, key, key.verbs)),
  ].join("\n");
}

/** The value grammars: the text each accepts, and the rule its refusal names. */
function grammars(): string {
  return [
    "| grammar | accepted text | rule text |",
    "|---|---|---|",
    ...Object.entries(PROTOCOL.grammars).map(([name, g]) => `| *${name}* | ${g.accepts} | \`${g.rule}\` |`),
  ].join("\n");
}

/** The classes: every verb of each, what it does over `maxmemory`, its script's first line and flags. */
function classes(): string {
  const specs = [...VERB_SPECS.values()];
  return [
    "| class | verbs | over `maxmemory` | script's first line | command flags |",
    "|---|---|---|---|---|",
    ...Object.entries(PROTOCOL.classes).map(([name, c]) => {
      const verbs = specs.filter((s) => s.class === name);
      const blocking = verbs.filter((s) => s.blocking).map((s) => `\`${s.verb}\``);
      const flags = `\`${c.flags}\`${blocking.length ? ` (${blocking.join(", ")}: \`${c.flags} blocking\`)` : ""}`;
      return `| ${name} (${verbs.length}) | ${verbs.map((s) => `\`${s.verb}\``).join(", ")} | ${c.about} | ${c.shebang ? `\`${c.shebang}\`` : "none (no script)"} | ${flags} |`;
    }),
  ].join("\n");
}

/** Every command at a glance. */
function overview(): string {
  const order = [...JOB_CORE, ...[...VERB_SPECS.values()].filter((s) => !s.core)];
  return [
    "| command | form | class | script twin | wake | events |",
    "|---|---|---|---|---|---|",
    ...order.map(
      (s) =>
        `| \`EMQ.${s.verb}\` | \`${formOf(s)}\` | ${s.class} | ${s.script ? `\`${s.script}.lua\`` : "none (native only)"} | ${s.wake} | ${s.events} |`,
    ),
  ].join("\n");
}

/** `doc` with every generated block made anew from the data. */
export function render(doc: string): string {
  return doc.replace(MARK, (_all, kind: string, verb: string | undefined) => {
    const body =
      kind === "overview"
        ? overview()
        : kind === "grammars"
          ? grammars()
          : kind === "classes"
            ? classes()
            : kind === "keys"
              ? keys()
              : verbTable(verbSpec(verb ?? ""));
    return `<!-- generated: ${kind}${verb ? ` ${verb}` : ""} -->\n${body}\n<!-- /generated -->`;
  });
}

/** The commands that have no generated table in `doc`. */
export function missing(doc: string): string[] {
  const present = new Set([...doc.matchAll(MARK)].flatMap((m) => (m[2] ? [m[2]] : [])));
  return [...VERB_SPECS.keys()].filter((verb) => !present.has(verb));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const doc = readFileSync(DOC, "utf8");
  const made = render(doc);
  const lacking = missing(doc);
  const typed = names();
  if (process.argv.includes("--check")) {
    if (readFileSync(NAMES, "utf8") !== typed) {
      console.error("src/verbs/names.ts is not what protocol/ says: run npx tsx scripts/protocol-doc.ts");
      process.exit(1);
    }
    if (made !== doc || lacking.length > 0) {
      console.error(
        `docs/protocol.md is not what protocol/ says${lacking.length ? ` (no table for ${lacking.join(", ")})` : ""}: run npx tsx scripts/protocol-doc.ts`,
      );
      process.exit(1);
    }
  } else {
    writeFileSync(DOC, made);
    writeFileSync(NAMES, typed);
    if (lacking.length > 0) console.error(`no generated table for ${lacking.join(", ")}`);
  }
}
