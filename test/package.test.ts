/**
 * The package as a user gets it: `npm pack` (from the built dist/), the tarball installed into a
 * scratch project (its dependencies from the npm cache when there, else the registry), then:
 * CommonJS `require` and ESM `import` of the three entries, the CLI bin, TypeScript resolving the
 * entries' types under moduleResolution node10, node16 (a CommonJS and an ESM file) and bundler,
 * the tarball's LICENSE and source maps, and a job end to end through the CommonJS build against
 * a real server on wire 4 and wire 6 (the build finds the .lua scripts, protocol/ and the
 * dashboard's page).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import ts from "typescript";
import { modulePath } from "../tools/module-path.js";
import { packAndInstall, REPO, run } from "./support/scratch-package.js";
import { startValkey } from "./support/valkey.js";

let dir = "";
let app = "";
let packed: string[] = [];

/** Runs `node <args>` in the scratch project; stdout trimmed. */
async function node(args: string[], env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run(process.execPath, args, {
    cwd: app,
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return stdout.trim();
}

/**
 * `tsc --noEmit` over the scratch project's `files` with `options` (a tsconfig's
 * compilerOptions), in this process, reporting the errors in those files and in the package's
 * own declarations (which `skipLibCheck` would skip; the other libraries' are not checked, which
 * keeps each mode to a second); the parsed declaration files are shared between the modes. Returns the errors' text and which of the package's entry
 * declarations the program read (`dist/cjs/src/index.d.ts`, …).
 */
const parsed = new Map<string, ts.SourceFile | undefined>();
function typeCheck(files: string[], options: Record<string, unknown>): { errors: string; entries: string[] } {
  const { options: compilerOptions, errors: invalid } = ts.convertCompilerOptionsFromJson(options, app);
  assert.deepEqual(invalid, []);
  const host = ts.createCompilerHost(compilerOptions);
  const read = host.getSourceFile.bind(host);
  host.getCurrentDirectory = () => app;
  host.getSourceFile = (name, version, ...rest) => {
    const format = typeof version === "object" ? version.impliedNodeFormat : undefined;
    const key = `${name}\0${format}`;
    if (!parsed.has(key)) parsed.set(key, read(name, version, ...rest));
    return parsed.get(key);
  };
  const program = ts.createProgram(
    files.map((file) => join(app, file)),
    compilerOptions,
    host,
  );
  // the consumer's files and the package's declarations; not the rest of node_modules
  const ours = program
    .getSourceFiles()
    .filter(
      (file) => !file.fileName.includes("/node_modules/") || file.fileName.includes("/node_modules/echomq/"),
    );
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...ours.flatMap((file) => [
      ...program.getSyntacticDiagnostics(file),
      ...program.getSemanticDiagnostics(file),
    ]),
  ];
  const errors = ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => app,
    getNewLine: () => "\n",
  });
  const entries = program
    .getSourceFiles()
    .map(
      (file) =>
        /node_modules\/echomq\/(dist\/(cjs\/)?src\/(index|protocol|bullmq|admin|errors)\.d\.ts)$/.exec(
          file.fileName,
        )?.[1],
    )
    .filter((file): file is string => file !== undefined)
    .sort();
  return { errors, entries };
}

before(async () => {
  ({ dir, app, packed } = await packAndInstall("echomq-package-"));
  // the consumer's own @types/node, as any TypeScript project on Node has
  await mkdir(join(app, "node_modules", "@types"), { recursive: true });
  await symlink(join(REPO, "node_modules", "@types", "node"), join(app, "node_modules", "@types", "node"));
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the packed package", () => {
  test("CommonJS require and ESM import of every entry, and the CLI bin", async () => {
    const probe = `({ root: Object.keys(m).length, Queue: typeof m.Queue, Worker: typeof m.Worker,
      connect: typeof m.connect, scripts: p.SCRIPTS.size > 0, verbs: p.VERB_SPECS.size > 0,
      bullmq: [typeof b.Queue, typeof b.Worker, typeof b.QueueEvents, typeof b.FlowProducer, b.NAMES.length > 0],
      dashboard: typeof a.startDashboard,
      errors: ((classes) => classes.length > 30 && classes.every((c) => typeof c === "function" && c.prototype instanceof Error))(
        Object.entries(e).filter(([k]) => /^[A-Z][A-Za-z]*Error$/.test(k)).map(([, c]) => c)),
      sameClass: e.ConnectionError === m.ConnectionError, onlyThere: [typeof e.InvalidIdError, typeof m.InvalidIdError] })`;
    const cjs = await node([
      "-e",
      `const m = require("echomq"); const p = require("echomq/protocol"); const b = require("echomq/bullmq"); const a = require("echomq/admin"); const e = require("echomq/errors");
       console.log(JSON.stringify({ ...${probe}, from: require.resolve("echomq") }))`,
    ]);
    const esm = await node([
      "--input-type=module",
      "-e",
      `import * as m from "echomq"; import * as p from "echomq/protocol"; import * as b from "echomq/bullmq"; import * as a from "echomq/admin"; import * as e from "echomq/errors";
       console.log(JSON.stringify(${probe}))`,
    ]);
    const { from, ...required } = JSON.parse(cjs);
    assert.match(from, /[/\\]dist[/\\]cjs[/\\]src[/\\]index\.js$/, "require loads the CommonJS build");
    assert.deepEqual(required, JSON.parse(esm), "both builds export the same names");
    assert.equal(required.Queue, "function");
    assert.equal(required.Worker, "function");
    assert.equal(required.connect, "function");
    assert.equal(required.scripts, true);
    assert.equal(required.verbs, true);
    assert.deepEqual(required.bullmq, ["function", "function", "function", "function", true]);
    assert.equal(required.dashboard, "function");
    assert.equal(required.errors, true, "every …Error of echomq/errors is an error class");
    assert.equal(required.sameClass, true, "a class is the same object from echomq and echomq/errors");
    assert.deepEqual(required.onlyThere, ["function", "undefined"], "InvalidIdError is echomq/errors' alone");

    const help = await node([join(app, "node_modules", ".bin", "echomq"), "--help"]);
    assert.match(help, /^usage: echomq <command>/);
  });

  test("types resolve for every entry under node10, node16 and bundler", async () => {
    const use = [
      `import { connect, Queue, Worker } from "echomq";`,
      `import { SCRIPTS } from "echomq/protocol";`,
      `import { Queue as BullQueue } from "echomq/bullmq";`,
      `import { listQueues } from "echomq/admin";`,
      `import { InvalidIdError } from "echomq/errors";`,
      "export const made = [connect, Queue, Worker, BullQueue, listQueues, InvalidIdError] as const;",
      "export const size: number = SCRIPTS.size;",
      "// @ts-expect-error: the types are real, not `any`: a class is no number",
      "export const notAny: number = Queue;",
      "// @ts-expect-error: and a map's size is no string",
      "export const notAnyEither: string = SCRIPTS.size;",
      "",
    ].join("\n");
    await writeFile(join(app, "use.ts"), use);
    await writeFile(join(app, "use-esm.mts"), use);
    // each mode, its files, and the declarations it must read: `require` → dist/cjs, `import` → dist/src
    const cjs = [
      "dist/cjs/src/admin.d.ts",
      "dist/cjs/src/bullmq.d.ts",
      "dist/cjs/src/errors.d.ts",
      "dist/cjs/src/index.d.ts",
      "dist/cjs/src/protocol.d.ts",
    ];
    const esm = [
      "dist/src/admin.d.ts",
      "dist/src/bullmq.d.ts",
      "dist/src/errors.d.ts",
      "dist/src/index.d.ts",
      "dist/src/protocol.d.ts",
    ];
    const modes = {
      node10: {
        module: "commonjs",
        moduleResolution: "node10",
        files: ["use.ts"],
        reads: cjs,
      },
      node16: {
        module: "node16",
        moduleResolution: "node16",
        files: ["use.ts", "use-esm.mts"],
        reads: [...cjs, ...esm],
      },
      bundler: { module: "esnext", moduleResolution: "bundler", files: ["use.ts"], reads: esm },
    };
    const failures: string[] = [];
    const read: Record<string, string[]> = {};
    for (const [mode, { files, reads: _, ...options }] of Object.entries(modes)) {
      const { errors, entries } = typeCheck(files, {
        ...options,
        skipLibCheck: false,
        strict: true,
        noEmit: true,
        types: ["node"],
      });
      if (errors) failures.push(`${mode}: ${errors}`);
      read[mode] = entries;
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(
      read,
      Object.fromEntries(Object.entries(modes).map(([mode, { reads }]) => [mode, reads])),
    );
  });

  test("the tarball holds the LICENSE", () => {
    assert.ok(packed.includes("LICENSE"), `LICENSE is not in the tarball: ${packed.slice(0, 5)}…`);
    const text = readFileSync(join(app, "node_modules", "echomq", "LICENSE"), "utf8");
    assert.match(text, /^MIT License\n\nCopyright \(c\) \d{4} EchoMQ contributors\n/);
  });

  test("no source map or sourceMappingURL names a file the tarball lacks", () => {
    const root = join(app, "node_modules", "echomq");
    const missing: string[] = [];
    for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
      const path = join(root, file);
      if (file.endsWith(".js")) {
        const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(path, "utf8"))?.[1];
        if (url && !url.startsWith("data:") && !existsSync(join(dirname(path), url))) {
          missing.push(`${file} → ${url}`);
        }
      } else if (file.endsWith(".map")) {
        const map = JSON.parse(readFileSync(path, "utf8")) as {
          sources: string[];
          sourcesContent?: string[];
        };
        map.sources.forEach((source, i) => {
          if (map.sourcesContent?.[i] == null && !existsSync(join(dirname(path), source))) {
            missing.push(`${file} → ${source}`);
          }
        });
      }
    }
    assert.deepEqual(missing.slice(0, 5), [], `${missing.length} references to files not shipped`);
  });

  for (const wire of [4, 6] as const) {
    test(`a job end to end through the CommonJS build, and its dashboard page [wire ${wire}]`, async () => {
      const server = await startValkey(wire === 6 ? { module: modulePath() } : {});
      try {
        const job = `
          const { connect, Queue, Worker } = require("echomq");
          const { installModuleBrand, startDashboard } = require("echomq/admin");
          (async () => {
            const port = Number(process.env.PORT), wire = Number(process.env.WIRE);
            if (wire === 6) await installModuleBrand({ port });
            const conn = await connect({ port, wire });
            const queue = new Queue("packaged", conn);
            const { id } = await queue.add("ping");
            const worker = new Worker(queue, async (job) => ({ echoed: job.text() }));
            const [done, result] = await new Promise((resolve) =>
              worker.once("completed", (job, result) => resolve([job.id, result])));
            await worker.close();
            const dashboard = await startDashboard(conn, { port: 0 }); // its page, from dist/src
            const reply = await fetch(dashboard.url);
            const page = { status: reply.status, html: (await reply.text()).startsWith("<!doctype html>") };
            await dashboard.close();
            await conn.close();
            console.log(JSON.stringify({ same: done === id, result, page }));
          })().catch((err) => { console.error(err); process.exit(1); });`;
        const out = await node(["-e", job], { PORT: String(server.port), WIRE: String(wire) });
        assert.deepEqual(JSON.parse(out), {
          same: true,
          result: { echoed: "ping" },
          page: { status: 200, html: true },
        });
      } finally {
        await server.stop();
      }
    });
  }
});
