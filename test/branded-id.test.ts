import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { InvalidIdError } from "../src/errors.js";
import { IdGenerator, idTime, isValidBrandedId, newId } from "../src/protocol.js";

const run = promisify(execFile);

describe("branded ids", () => {
  test("a new id is 14 bytes: JOB + 11 Base62 characters", () => {
    const id = newId();
    assert.equal(Buffer.byteLength(id), 14);
    assert.match(id, /^JOB[0-9A-Za-z]{11}$/);
    assert.equal(isValidBrandedId(id), true);
    assert.match(newId("ACC"), /^ACC[0-9A-Za-z]{11}$/);
  });

  test("namespace must be three upper-case letters", () => {
    for (const ns of ["JO", "JOBS", "job", "J0B"]) assert.throws(() => newId(ns), InvalidIdError);
  });

  test("isValidBrandedId checks all 14 bytes", () => {
    assert.equal(isValidBrandedId("JOB0Nb1VTbfnu4"), true);
    for (const bad of [
      "JOB0Nb1VTbfnu",
      "JOB0Nb1VTbfnu4x",
      "JOB0Nb1VTbfn_4",
      "jOB0Nb1VTbfnu4",
      "JOB0Nb1VTbfn\u00004",
      5,
      null,
    ]) {
      assert.equal(isValidBrandedId(bad), false, String(bad));
    }
  });

  test("a million ids sort in generation order and are all valid and distinct", () => {
    const ids: string[] = new Array(1_000_000);
    for (let i = 0; i < ids.length; i++) ids[i] = newId();
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i - 1]! < ids[i]!)) assert.fail(`ids out of order at ${i}: ${ids[i - 1]} then ${ids[i]}`);
      if (!isValidBrandedId(ids[i])) assert.fail(`invalid id ${ids[i]}`);
    }
    assert.equal(new Set(ids).size, ids.length);
  });

  test("order holds within one millisecond, across counter wrap-around, and when the clock goes back", () => {
    let now = Date.UTC(2026, 0, 1);
    const gen = new IdGenerator(() => now, 62 ** 4 - 3);
    const ids = [gen.next(), gen.next(), gen.next(), gen.next(), gen.next()];
    now -= 5000;
    ids.push(gen.next(), gen.next());
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]}`);
  });

  test("idTime recovers the creation time", () => {
    const before = Date.now();
    const id = newId();
    assert.ok(Math.abs(idTime(id) - before) <= 5);
  });

  test("ids from two processes never collide (200k each)", async () => {
    const script =
      "import { newId } from './src/branded-id.ts';" +
      "const out = []; for (let i = 0; i < 200000; i++) out.push(newId()); process.stdout.write(out.join('\\n'));";
    const gen = () =>
      run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        maxBuffer: 64 << 20,
      });
    const [a, b] = await Promise.all([gen(), gen()]);
    const ids = [...a.stdout.split("\n"), ...b.stdout.split("\n")];
    assert.equal(ids.length, 400_000);
    assert.equal(new Set(ids).size, 400_000);
  });
});
