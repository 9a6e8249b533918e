/**
 * The migration guide's table of names: docs/migrating-from-bullmq.md's block between
 * `<!-- generated: bullmq-names -->` and `<!-- /generated -->` made from `src/bullmq/names.ts`
 * (the table the code checks and refuses by), so the guide says what the code does.
 *   npx tsx scripts/bullmq-doc.ts           # rewrite the block
 *   npx tsx scripts/bullmq-doc.ts --check   # exit 1 when the guide is not what the table says
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { NAMES, type Scope } from "../src/bullmq/names.js";

const DOC = fileURLToPath(new URL("../docs/migrating-from-bullmq.md", import.meta.url));
const MARK = /<!-- generated: bullmq-names -->\n[\s\S]*?<!-- \/generated -->/;

const cell = (text: string) => text.replace(/\|/g, "\\|");

/** One table per scope, in the table's order. */
function table(): string {
  const scopes = [...new Set(NAMES.map((e) => e.scope))] as Scope[];
  const honoured = NAMES.filter((e) => e.status === "honoured").length;
  const lines = [
    `${NAMES.length} names: ${honoured} honoured, ${NAMES.length - honoured} refused (a \`BullMQRefusalError\` naming it, with the advice below).`,
  ];
  for (const scope of scopes) {
    lines.push("", `#### ${scope}`, "", "| BullMQ | here | EchoMQ / what to use |", "|---|---|---|");
    for (const e of NAMES.filter((n) => n.scope === scope))
      lines.push(`| \`${cell(e.name)}\` | ${e.status} | ${cell(e.echomq)} |`);
  }
  return lines.join("\n");
}

function render(doc: string): string {
  return doc.replace(MARK, () => `<!-- generated: bullmq-names -->\n${table()}\n<!-- /generated -->`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const doc = readFileSync(DOC, "utf8");
  if (!MARK.test(doc)) {
    console.error("docs/migrating-from-bullmq.md has no <!-- generated: bullmq-names --> block");
    process.exit(1);
  }
  const made = render(doc);
  if (process.argv.includes("--check")) {
    if (made !== doc) {
      console.error(
        "docs/migrating-from-bullmq.md is not what src/bullmq/names.ts says: run npm run bullmq:doc",
      );
      process.exit(1);
    }
  } else writeFileSync(DOC, made);
}
