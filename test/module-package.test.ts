/**
 * The native module as a user of the packed package gets it: the crate's source in the tarball,
 * `echomq module build` (cargo, from that source, into the installed package's module/target),
 * `echomq module path`, `echomq server` (a dev node with the module loaded and branded) taking a
 * wire-6 job end to end, the message when cargo, libclang or a C compiler is missing, and a
 * platform package made by scripts/platform-packages.sh installed beside it and found first.
 *
 * A cold cargo build takes minutes; the installed package's module/target is seeded from the
 * repository's build (the module test files' ECHOMQ_MODULE), timestamps kept, so cargo reuses
 * the compiled dependencies and rebuilds only the crate (about 45 s here; cold, minutes).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { freePort } from "../tools/embedded-valkey.js";
import { modulePath } from "../tools/module-path.js";
import { npmInstall, packAndInstall, REPO, run, type Scratch } from "./support/scratch-package.js";

let scratch: Scratch;
let bin = "";
let pkg = "";

/** The environment of a user with no module set up. */
function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = { ...process.env, CARGO_NET_OFFLINE: "true", ...extra } as Record<string, string>;
  delete env.ECHOMQ_MODULE;
  delete env.CARGO_TARGET_DIR;
  return env;
}

/** `echomq <args>` in the scratch project: exit code, stdout, stderr. */
async function echomq(
  args: string[],
  env = userEnv(),
  timeout = 60_000,
): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      cwd: scratch.app,
      env,
      timeout,
    });
    return { code: 0, out: stdout.trim(), err: stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, out: (err.stdout ?? "").trim(), err: err.stderr ?? "" };
  }
}

before(async () => {
  scratch = await packAndInstall("echomq-module-package-");
  pkg = join(scratch.app, "node_modules", "echomq");
  bin = join(scratch.app, "node_modules", ".bin", "echomq");
});

after(async () => {
  if (scratch?.dir) await rm(scratch.dir, { recursive: true, force: true });
});

describe("the module from the packed package", () => {
  test("the tarball ships the crate's source and the protocol data its build reads, not a build", () => {
    const crate = [
      "module/Cargo.toml",
      "module/Cargo.lock",
      "module/build.rs",
      "module/build/read.rs",
      "module/src/lib.rs",
    ];
    for (const file of crate) {
      assert.ok(scratch.packed.includes(file), `${file} is packed`);
    }
    assert.ok(scratch.packed.includes("protocol/protocol.json"));
    assert.deepEqual(
      scratch.packed.filter((file) => file.startsWith("module/target") || file.startsWith("module/tests")),
      [],
    );
  });

  test("module path before a build: exit 1, saying what to run", async () => {
    const { code, out, err } = await echomq(["module", "path"]);
    assert.equal(code, 1);
    assert.equal(out, "");
    assert.match(err, /the native module is not built: run 'npx echomq module build'/);
  });

  test("module build without cargo on PATH: exit 1, saying how to get it", async () => {
    const path = (process.env.PATH ?? "")
      .split(delimiter)
      .filter((d) => !existsSync(join(d, "cargo")))
      .join(delimiter);
    const { code, err } = await echomq(["module", "build"], userEnv({ PATH: path }));
    assert.equal(code, 1);
    assert.match(err, /cargo is not installed \(or not on PATH\).*rustup/);
  });

  test("module build from the shipped source, module path finds it, server takes a wire-6 job", async () => {
    const seed = dirname(dirname(modulePath())); // the repository's target dir
    const target = join(pkg, "module", "target");
    if (existsSync(join(seed, "release"))) {
      await mkdir(target, { recursive: true });
      await cp(join(seed, "release"), join(target, "release"), {
        recursive: true,
        preserveTimestamps: true, // cargo compares mtimes: fresh copies would look rebuilt
        filter: (src) => !src.includes("/incremental"),
      });
      await rm(join(target, "release", "libechomq.so"), { force: true });
    }
    const built = await echomq(["module", "build"], userEnv(), 600_000);
    assert.equal(built.code, 0, built.err.slice(-2000));
    const so = join(target, "release", "libechomq.so");
    assert.equal(built.out, so);
    const found = await echomq(["module", "path"]);
    assert.deepEqual([found.code, found.out], [0, so]);

    const port = await freePort();
    const server = spawn(process.execPath, [bin, "server", "--port", String(port)], {
      cwd: scratch.app,
      env: userEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = await firstLine(server, /^redis:\/\/\S+/);
      assert.equal(url, `redis://127.0.0.1:${port}`);
      const job = `
        import { connect, Queue, Worker } from "echomq";
        const conn = await connect({ port: ${port}, wire: 6 });
        const version = await conn.send("EMQ.VERSION", []);
        const queue = new Queue("packaged", conn);
        const { id } = await queue.add("ping");
        const worker = new Worker(queue, async (job) => ({ echoed: job.text() }));
        const [done, result] = await new Promise((resolve) =>
          worker.once("completed", (job, result) => resolve([job.id, result])));
        await worker.close();
        await conn.close();
        console.log(JSON.stringify({ version: version != null, wire: conn.wire, same: done === id, result }));`;
      const { stdout } = await run(process.execPath, ["--input-type=module", "-e", job], {
        cwd: scratch.app,
        timeout: 60_000,
      });
      assert.deepEqual(JSON.parse(stdout), {
        version: true,
        wire: 6,
        same: true,
        result: { echoed: "ping" },
      });
    } finally {
      const exited = new Promise((done) => server.once("exit", done));
      server.kill("SIGTERM");
      await exited;
    }
    assert.equal(server.exitCode, 0);
  });

  // After the build above (its target seeded): cargo runs the build scripts again when
  // LIBCLANG_PATH or CC changes (bindgen and cc declare them), so each fails within seconds.
  test("module build without libclang: exit 1, saying which package to install", async () => {
    const nowhere = await mkdtemp(join(tmpdir(), "echomq-no-libclang-"));
    try {
      const { code, err } = await echomq(["module", "build"], userEnv({ LIBCLANG_PATH: nowhere }), 600_000);
      assert.equal(code, 1);
      assert.match(err, /the build needs libclang \(the module's bindings are made by bindgen\)/);
      assert.match(err, /apt-get install libclang-dev clang.*or set LIBCLANG_PATH/);
      assert.doesNotMatch(err, /cargo build failed/);
    } finally {
      await rm(nowhere, { recursive: true, force: true });
    }
  });

  test("module build without a C compiler: exit 1, saying which package to install", async () => {
    const missing = join(tmpdir(), "echomq-no-such-compiler", "cc");
    const { code, err } = await echomq(["module", "build"], userEnv({ CC: missing }), 600_000);
    assert.equal(code, 1);
    assert.match(err, /the build needs a C compiler/);
    assert.match(err, /apt-get install build-essential.*or set CC/);
    assert.doesNotMatch(err, /cargo build failed/);
  });

  test("a platform package made by scripts/platform-packages.sh is installed and found first", async (t) => {
    if (process.platform !== "linux" || !["x64", "arm64"].includes(process.arch))
      return t.skip("linux x64/arm64");
    const out = join(scratch.dir, "npm");
    const { stdout } = await run(
      "bash",
      ["scripts/platform-packages.sh", "--so", modulePath(), "--out", out],
      {
        cwd: REPO,
      },
    );
    const dir = stdout.trim();
    assert.equal(dir, join(out, `linux-${process.arch}-gnu`));
    await npmInstall(scratch.app, [dir]);
    const found = await echomq(["module", "path"]);
    assert.equal(found.code, 0, found.err);
    assert.equal(
      await realpath(found.out),
      await realpath(join(scratch.app, "node_modules", `echomq-linux-${process.arch}-gnu`, "libechomq.so")),
    );
  });
});

/** Resolves the first stdout line matching `pattern`; rejects if the process exits first. */
function firstLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    let errText = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      errText += chunk.toString();
    });
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const match = pattern.exec(text.split("\n").find((line) => pattern.test(line)) ?? "");
      if (match) resolve(match[0]);
    });
    child.once("exit", (code) => reject(new Error(`echomq server exited ${code}: ${errText.slice(-2000)}`)));
  });
}
