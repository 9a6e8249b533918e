/**
 * Writes the verb tables of docs/protocol.md from the protocol data (`protocol/verbs/*.json`):
 * the overview of every command, the classes, the value grammars, and each verb's form and table. Text between
 * `<!-- generated: … -->` and `<!-- /generated -->` is replaced; everything else is kept.
 *
 *   npx tsx scripts/protocol-doc.ts          # rewrite docs/protocol.md
 *   npx tsx scripts/protocol-doc.ts --check  # exit 1 when docs/protocol.md is not what the data says
 *
 * It writes (and checks) `src/verbs/names.ts` too: the verb tokens as a union type, so a call
 * names only a verb the data declares.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { formOf, JOB_CORE, PROTOCOL, VERB_SPECS, type VerbSpec, verbSpec } from "../src/protocol.js";

export const DOC = fileURLToPath(new URL("../docs/protocol.md", import.meta.url));
export const NAMES = fileURLToPath(new URL("../src/verbs/names.ts", import.meta.url));

/** `src/verbs/names.ts` as the data makes it. */
export function names(): string {
  const verbs = [...VERB_SPECS.keys()].map((verb) => `  | "${verb}"`).join("\n");
  return `/** Generated from protocol/verbs/*.json by scripts/protocol-doc.ts: do not edit. */\n\n/** A verb token the protocol declares. */\nexport type VerbName =\n${verbs};\n`;
}

const MARK = /<!-- generated: ([a-z]+)(?: ([A-Z]+))? -->\n[\s\S]*?<!-- \/generated -->/g;

/** The key as the docs write it: `emq:{q}:pending`, the base, the row, the brand key. */
function keyText(spec: VerbSpec, i: number): string {
  const key = spec.keys[i]!;
  const shown = `\`${PROTOCOL.key_slots[key.slot]}\``;
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
export function verbTable(spec: VerbSpec): string {
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

/** The value grammars: the text each accepts, and the rule its refusal names. */
export function grammars(): string {
  return [
    "| grammar | accepted text | rule text |",
    "|---|---|---|",
    ...Object.entries(PROTOCOL.grammars).map(([name, g]) => `| *${name}* | ${g.accepts} | \`${g.rule}\` |`),
  ].join("\n");
}

/** The classes: every verb of each, what it does over `maxmemory`, its script's first line and flags. */
export function classes(): string {
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
export function overview(): string {
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
