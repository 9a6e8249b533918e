/** The CLI's pure parts: parsing a command line, the help texts, tables and JSON of jobs. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { commandOf, intOption, nodesOf, parseInvocation, type Shape } from "../src/cli/args.js";
import { EXIT, failure, UsageError } from "../src/cli/errors.js";
import { bytesJson, eventLine, jobJson, jobText, preview, table } from "../src/cli/format.js";
import { commandHelp, mainHelp } from "../src/cli/help.js";
import { COMMANDS } from "../src/cli/main.js";
import { ConnectionError, InvalidArgumentError, ServerError } from "../src/errors.js";

const shape: Shape = {
  name: "jobs",
  options: { state: { type: "string", help: "s" }, yes: { type: "boolean", help: "y" } },
  positionals: [{ name: "queue", required: true }],
};

test("the command word skips global options and their values", () => {
  assert.equal(commandOf(["--url", "redis://x", "jobs", "q"]), "jobs");
  assert.equal(commandOf(["--url=redis://x", "--json", "status"]), "status");
  assert.equal(commandOf(["--json"]), null);
});

test("an invocation: globals, the command's options, positionals; VALKEY_URL as the default URL", () => {
  const inv = parseInvocation(shape, ["q", "--state", "dead", "--json"], { VALKEY_URL: "redis://h:1" });
  assert.deepEqual(inv.positionals, { queue: "q" });
  assert.deepEqual(inv.values, { state: "dead" });
  assert.deepEqual(inv.globals, { wire: "auto", json: true, help: false, url: "redis://h:1" });
  const own = parseInvocation(shape, ["q", "--url", "redis://mine:2", "--wire", "6"], {
    VALKEY_URL: "redis://h:1",
  });
  assert.equal(own.globals.url, "redis://mine:2");
  assert.equal(own.globals.wire, 6);
  assert.deepEqual(parseInvocation(shape, ["--help"]).globals.help, true);
});

test("usage errors name what is wrong", () => {
  assert.throws(() => parseInvocation(shape, []), /missing <queue>/);
  assert.throws(() => parseInvocation(shape, ["q", "r"]), /unexpected argument "r"/);
  assert.throws(
    () => parseInvocation(shape, ["q", "--nope"]),
    (e: Error) => e instanceof UsageError && /Unknown option '--nope'$/.test(e.message),
  );
  assert.throws(() => parseInvocation(shape, ["q", "--wire", "5"]), /--wire must be 4, 6 or auto, got "5"/);
  assert.throws(
    () => intOption({ limit: "x" }, "limit", 1, 1, 10, "jobs"),
    /--limit must be an integer from 1 to 10, got "x"/,
  );
  assert.equal(intOption({}, "limit", 7, 1, 10, "jobs"), 7);
  assert.equal(intOption({ d: "-3" }, "d", 0, -5, 5, "x"), -3);
  const neg = parseInvocation({ ...shape, options: { priority: { type: "string", help: "p" } } }, [
    "q",
    "--priority",
    "-1",
  ]);
  assert.equal(neg.values.priority, "-1");
});

test("--nodes: host:port pairs", () => {
  assert.deepEqual(nodesOf("127.0.0.1:7000, h:7001"), [
    { host: "127.0.0.1", port: 7000 },
    { host: "h", port: 7001 },
  ]);
  assert.deepEqual(nodesOf("[::1]:7000"), [{ host: "::1", port: 7000 }]);
  assert.throws(() => nodesOf("h"), /"h" is not host:port/);
  assert.throws(() => nodesOf("h:0"), /not host:port/);
  assert.throws(() => nodesOf(","), /no node given/);
});

test("exit codes: usage 2, connection 3, anything else 1", () => {
  assert.equal(failure(new UsageError("x")).code, EXIT.usage);
  assert.equal(failure(new InvalidArgumentError("limit", "bad")).code, EXIT.usage);
  assert.equal(failure(new ConnectionError("down")).code, EXIT.connection);
  assert.equal(failure(new ServerError("ERR EMQ.RETRY job is not dead")).code, EXIT.failed);
  assert.equal(failure(new ServerError("ERR x")).errorCode, "EMQ_SERVER_ERR");
});

test("help lists every command once; each command's help names its usage", () => {
  const main = mainHelp(COMMANDS);
  for (const c of COMMANDS)
    assert.equal(main.split("\n").filter((l) => l.startsWith(`  ${c.name} `)).length, 1, c.name);
  assert.match(
    commandHelp(COMMANDS.find((c) => c.name === "jobs")!),
    /^usage: echomq jobs <queue> \[--state/,
  );
});

test("tables align columns, numbers to the right", () => {
  assert.equal(table(["a", "n"], []), "(none)");
  assert.equal(
    table(
      ["name", "n"],
      [
        ["x", 5],
        ["long", 12],
      ],
    ),
    "name   n\nx      5\nlong  12",
  );
});

test("bytes as text when UTF-8, else base64; previews are one short line", () => {
  assert.equal(bytesJson(Buffer.from("héllo")), "héllo");
  assert.deepEqual(bytesJson(Buffer.from([0xff, 0x00])), { base64: "/wA=" });
  assert.equal(preview(Buffer.from("a\nb")), "a b");
  assert.equal(preview("x".repeat(50), 10), `${"x".repeat(9)}…`);
  const json = jobJson({
    id: "JOB1",
    lane: "q",
    state: "pending",
    attempts: 0,
    payload: Buffer.from("p"),
    priority: 0,
    logs: [],
    attemptsMade: 0,
    score: 0,
  });
  assert.deepEqual(json, {
    id: "JOB1",
    lane: "q",
    state: "pending",
    attempts: 0,
    priority: 0,
    payload: "p",
    logs: [],
    score: 0,
  });
  const named = {
    id: "JOB1",
    lane: "q",
    state: "pending" as const,
    attempts: 0,
    attemptsMade: 0,
    payload: Buffer.from("{}"),
  };
  const shown = jobJson({ ...named, priority: 0, logs: [], name: "charge", backoff: 500 as never });
  assert.equal(shown.name, "charge");
  assert.match(
    jobText({ ...named, priority: 0, logs: [], name: "charge" }),
    /^state +pending\nname +charge\n/m,
  );
  assert.equal(
    eventLine({ eventId: "1700000000000-0", kind: "drained", count: 3 }),
    "2023-11-14T22:13:20.000Z  drained    count 3",
  );
});
