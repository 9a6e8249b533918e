/**
 * The API report: each entry's exports (`echomq` from `src/index.ts`, `echomq/protocol` from
 * `src/protocol.ts`, `echomq/bullmq` from `src/bullmq.ts`, `echomq/admin` from `src/admin.ts`, `echomq/errors` from `src/errors.ts`) with their signatures, as the type checker sees them — a function's
 * signature, a class's constructor and public members, an interface's or alias's shape. The
 * reports are committed (`api/*.api.md`), so a change to the surface is a visible diff;
 * `npm test` runs `--check` (fails when the code and the report differ), `npm run api:update`
 * rewrites them.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { readTsConfig } from "./tsconfig-read.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ENTRIES = [
  { name: "echomq", source: "src/index.ts", report: "api/echomq.api.md" },
  { name: "echomq/protocol", source: "src/protocol.ts", report: "api/protocol.api.md" },
  { name: "echomq/bullmq", source: "src/bullmq.ts", report: "api/bullmq.api.md" },
  { name: "echomq/admin", source: "src/admin.ts", report: "api/admin.api.md" },
  { name: "echomq/errors", source: "src/errors.ts", report: "api/errors.api.md" },
];
const FLAGS = ts.TypeFormatFlags.NoTruncation;

const config = readTsConfig(ROOT);
const program = ts.createProgram(
  ENTRIES.map((entry) => join(ROOT, entry.source)),
  config.options,
);
const checker = program.getTypeChecker();

/** The public members of an object type, one line each. */
function members(type: ts.Type, at: ts.Node): string[] {
  return checker
    .getPropertiesOfType(type)
    .filter((p) => !p.name.startsWith("#") && !p.name.startsWith("__"))
    .filter((p) => {
      const flags = p.valueDeclaration ? ts.getCombinedModifierFlags(p.valueDeclaration) : 0;
      return (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) === 0;
    })
    .map((p) => {
      const optional = p.flags & ts.SymbolFlags.Optional ? "?" : "";
      return `  ${p.name}${optional}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(p, at), at, FLAGS)}`;
    });
}

/** One export's entry in the report. */
function describe(exported: ts.Symbol, at: ts.Node): string {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const name = exported.name;
  const lines: string[] = [];
  if (symbol.flags & ts.SymbolFlags.Class) {
    const ctor = checker.getTypeOfSymbolAtLocation(symbol, at);
    const sigs = ctor.getConstructSignatures().map((s) => checker.signatureToString(s, at, FLAGS));
    lines.push(
      `class ${name}`,
      ...sigs.map((s) => `  new ${s}`),
      ...members(checker.getDeclaredTypeOfSymbol(symbol), at),
    );
  } else if (symbol.flags & ts.SymbolFlags.Value) {
    lines.push(`${name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, at), at, FLAGS)}`);
  } else {
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    if (symbol.flags & ts.SymbolFlags.Interface) lines.push(`interface ${name}`, ...members(type, at));
    else
      lines.push(`type ${name} = ${checker.typeToString(type, at, FLAGS | ts.TypeFormatFlags.InTypeAlias)}`);
  }
  return lines.join("\n");
}

/** The report of one entry. */
function report(entry: (typeof ENTRIES)[number]): string {
  const file = program.getSourceFile(join(ROOT, entry.source));
  const moduleSymbol = file && checker.getSymbolAtLocation(file);
  if (!file || !moduleSymbol) throw new Error(`${entry.source} could not be read`);
  const exported = checker.getExportsOfModule(moduleSymbol).sort((a, b) => a.name.localeCompare(b.name));
  const isValue = (s: ts.Symbol) =>
    ((s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s).flags & ts.SymbolFlags.Value) !== 0;
  const values = exported.filter(isValue).length;
  return [
    `# API report: \`${entry.name}\``,
    "",
    `Made by \`npm run api:update\` from \`${entry.source}\`; \`npm test\` checks it. ${values} values, ${exported.length - values} types.`,
    "",
    "```ts",
    // a type out of the entry's scope is printed as `import("<path>").Name`: just the name
    exported
      .map((s) => describe(s, file))
      .join("\n\n")
      .replace(/import\("[^"]*"\)\./g, ""),
    "```",
    "",
  ].join("\n");
}

const check = process.argv.includes("--check");
let stale = 0;
for (const entry of ENTRIES) {
  const text = report(entry);
  const path = join(ROOT, entry.report);
  if (!check) {
    writeFileSync(path, text);
    continue;
  }
  let old = "";
  try {
    old = readFileSync(path, "utf8");
  } catch {}
  if (old !== text) {
    stale++;
    console.error(
      `${entry.report} is not the surface of ${entry.source}: run npm run api:update and review the diff`,
    );
  }
}
if (stale > 0) process.exit(1);
