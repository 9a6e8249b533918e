/**
 * The unused-exports check (`npm test`): every export declared in a file of the project
 * (tsconfig.json's `include`) is imported by another file, or is part of a public entry
 * (`src/index.ts`, `src/protocol.ts`, `src/admin.ts`, `src/bullmq.ts`, `src/errors.ts`: what they export, the package's surface).
 * A re-export counts only through a file that imports it (a barrel nobody imports from keeps
 * nothing alive); `import * as` and a dynamic `import()` keep every export of their module; a
 * `x.cjs.ts` (the CommonJS build's `x.ts`) keeps what its twin's importers use. An
 * export only its own file uses loses its `export`; one nobody uses goes. Prints each offender as
 * `file:line name`, and fails when there is one.
 */
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { readTsConfig } from "./tsconfig-read.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ENTRIES = ["src/index.ts", "src/protocol.ts", "src/admin.ts", "src/bullmq.ts", "src/errors.ts"].map(
  (f) => join(ROOT, f),
);

const config = readTsConfig(ROOT);
const program = ts.createProgram(config.fileNames, config.options);
const checker = program.getTypeChecker();
const ours = program
  .getSourceFiles()
  .filter((f) => !f.isDeclarationFile && !f.fileName.includes("/node_modules/"));

/** The symbol an alias ends at (through every re-export), or the symbol itself. */
function target(symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/** Every export of the module a specifier names (an `import * as` or `import()` keeps them all). */
function allOf(specifier: ts.Expression, used: Set<ts.Symbol>): void {
  const module = checker.getSymbolAtLocation(specifier);
  if (module) for (const s of checker.getExportsOfModule(module)) used.add(target(s));
}

const used = new Set<ts.Symbol>();
for (const entry of ENTRIES) {
  const file = program.getSourceFile(entry);
  const module = file && checker.getSymbolAtLocation(file);
  if (!module) throw new Error(`${relative(ROOT, entry)} could not be read`);
  for (const s of checker.getExportsOfModule(module)) used.add(target(s));
}
for (const file of ours) {
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && node.importClause) {
      const { name, namedBindings } = node.importClause;
      if (name) {
        const s = checker.getSymbolAtLocation(name);
        if (s) used.add(target(s));
      }
      if (namedBindings && ts.isNamespaceImport(namedBindings)) allOf(node.moduleSpecifier, used);
      else if (namedBindings)
        for (const element of namedBindings.elements) {
          const s = checker.getSymbolAtLocation(element.name);
          if (s) used.add(target(s));
        }
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments;
      if (specifier) allOf(specifier, used);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      allOf(node.argument.literal, used);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
}

/** `x.cjs.ts` is `x.ts` in the CommonJS build (scripts/build.sh): its exports are its twin's. */
function twinUsed(file: ts.SourceFile, name: string): boolean {
  if (!file.fileName.endsWith(".cjs.ts")) return false;
  const twin = program.getSourceFile(file.fileName.replace(/\.cjs\.ts$/, ".ts"));
  const module = twin && checker.getSymbolAtLocation(twin);
  const same = module && checker.getExportsOfModule(module).find((s) => s.name === name);
  return same !== undefined && used.has(target(same));
}

const offenders: string[] = [];
for (const file of ours) {
  if (ENTRIES.includes(file.fileName)) continue;
  // a fixture is loaded at run time (a child process, a dynamic import of a rewritten copy)
  if (relative(ROOT, file.fileName).startsWith("test/fixtures/")) continue;
  const module = checker.getSymbolAtLocation(file);
  if (!module) continue;
  for (const exported of checker.getExportsOfModule(module)) {
    if (twinUsed(file, exported.name)) continue;
    const symbol = target(exported);
    // only what this file declares: a re-export is judged where it is declared
    const declared = symbol.declarations?.some((d) => d.getSourceFile() === file);
    if (!declared || used.has(symbol)) continue;
    const at = symbol.declarations!.find((d) => d.getSourceFile() === file)!;
    const line = file.getLineAndCharacterOfPosition(at.getStart()).line + 1;
    offenders.push(`${relative(ROOT, file.fileName)}:${line} ${exported.name}`);
  }
}
if (offenders.length > 0) {
  console.error(
    `${offenders.length} exports no other file imports (drop the export, or the declaration if nothing uses it):\n  ${offenders.join("\n  ")}`,
  );
  process.exit(1);
}
console.log(`unused exports: none (${ours.length} files)`);
