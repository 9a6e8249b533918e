/**
 * The built `echomq` binary against real servers: a stock server (wire 4) and a module node
 * (wire 6, branded by `echomq install`). Every command runs as a child process; `--json` output
 * is parsed, exit codes and messages checked, human output read.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { claim, fail } from "../src/protocol.js";
import { type Connection, connect, type JobCounts, Queue, type Wire, Worker } from "../src/index.js";
import { modulePath } from "../tools/module-path.js";
import { assertBuilt, echomq, echomqJson, follow } from "./support/cli.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import { until } from "./support/until.js";
import { WIRE4, WIRE6 } from "./support/module.js";

interface Listed {
  id: string;
  state: string;
  attempts: number;
  payload: string;
  error?: string;
  score: number;
  processedOn?: number;
  finishedOn?: number;
}
interface QueueRow extends Omit<JobCounts, "paused"> {
  name: string;
  lanes: number;
  paused: boolean;
  workers?: number;
}

describe("echomq: usage", () => {
  before(assertBuilt);

  test("--help lists every command; each command has --help", async () => {
    const help = await echomq(["--help"]);
    assert.equal(help.code, 0);
    const commands = [
      "status",
      "queues",
      "jobs",
      "job",
      "workers",
      "schedules",
      "flows",
      "groups",
      "pause",
      "resume",
      "retry",
      "remove",
      "promote",
      "clean",
      "drain",
      "obliterate",
      "enqueue",
      "install",
      "events",
      "metrics",
    ];
    for (const c of commands) assert.match(help.stdout, new RegExp(`^  ${c} `, "m"), c);
    for (const c of commands) {
      const own = await echomq([c, "--help"]);
      assert.equal(own.code, 0, c);
      assert.match(own.stdout, new RegExp(`^usage: echomq ${c}`), c);
      assert.match(own.stdout, /--json/, c);
    }
  });

  test("usage errors exit 2 with a message naming what is wrong", async () => {
    const cases: [string[], RegExp][] = [
      [[], /no command given/],
      [["frobnicate"], /unknown command "frobnicate"/],
      [["jobs"], /missing <queue>/],
      [["jobs", "q", "--bogus"], /Unknown option '--bogus'/],
      [["jobs", "q", "--limit", "0"], /--limit must be an integer from 1 to 1000, got "0"/],
      [
        ["jobs", "q", "--state", "nope"],
        /invalid state: must be one of pending, scheduled, active, completed, dead, waiting, got "nope"/,
      ],
      [["jobs", "q", "--wire", "5"], /--wire must be 4, 6 or auto/],
      [["queues", "--nodes", "nohost"], /--nodes: "nohost" is not host:port/],
      [["drain", "q"], /add --yes to confirm/],
      [["clean", "q"], /--state must be completed or dead/],
      [["job", "q", "JOB00000000001", "extra"], /unexpected argument "extra"/],
      [["queues", "--url", "http://x"], /scheme must be redis:/],
    ];
    for (const [args, message] of cases) {
      const ran = await echomq(args);
      assert.equal(ran.code, 2, `${args.join(" ")}: ${ran.stderr}`);
      assert.match(ran.stderr, message, args.join(" "));
      assert.match(ran.stderr, /^echomq: /);
    }
    const json = await echomq(["frobnicate", "--json"]);
    assert.deepEqual(JSON.parse(json.stdout).error.code, "EMQ_CLI_USAGE");
  });

  test("an unreachable server exits 3 naming host and port", async () => {
    const ran = await echomq(["queues"], { VALKEY_URL: "redis://127.0.0.1:1" });
    assert.equal(ran.code, 3);
    assert.match(ran.stderr, /127\.0\.0\.1:1/);
  });
});

for (const wire of [4, 6] as Wire[]) {
  describe(`echomq against a server [wire ${wire}]`, () => {
    let server: ValkeyServer;
    let conn: Connection;
    let url: string;
    const run = (args: string[]) => echomq(args, { VALKEY_URL: url });
    const json = <T>(args: string[]) => echomqJson<T>(args, { VALKEY_URL: url });

    before(async () => {
      assertBuilt();
      server = await startValkey(wire === 6 ? { module: modulePath() } : {});
      url = `redis://127.0.0.1:${server.port}`;
      if (wire === 6) {
        const first = await json<{ installed: boolean }>(["install"]);
        assert.equal(first.installed, true);
        const again = await run(["install"]);
        assert.equal(again.code, 0);
        assert.match(again.stdout, /already branded echomq:6\.0\.0/);
      }
      conn = await connect({ port: server.port, wire });
    });
    after(async () => {
      await conn?.close();
      await server?.stop();
    });

    test("the wrong wire is refused by the fence (exit 3); install on a stock node says what is missing", async () => {
      const wrong = await run(["queues", "--wire", wire === 6 ? "4" : "6"]);
      assert.equal(wrong.code, 3, wrong.stderr);
      if (wire === 4) {
        const install = await run(["install"]);
        assert.equal(install.code, 1);
        assert.match(install.stderr, /this node does not run the EchoMQ module/);
      }
    });

    test("enqueue, queues, jobs by state, job, promote, retry, remove", async () => {
      const a = await json<{ id: string; duplicate: boolean }>(["enqueue", "mail", '{"to":"a"}']);
      assert.equal(a.duplicate, false);
      const later = await json<{ id: string }>(["enqueue", "mail", "later", "--delay", "60000"]);
      await json(["enqueue", "mail", "b", "--priority", "-1"]);
      const dup = await json<{ duplicate: boolean }>(["enqueue", "mail", "x", "--id", a.id]);
      assert.equal(dup.duplicate, true);

      const { queues } = await json<{ queues: QueueRow[] }>(["queues"]);
      const mail = queues.find((q) => q.name === "mail")!;
      assert.deepEqual([mail.pending, mail.scheduled, mail.active, mail.lanes], [2, 1, 0, 1]);
      const human = await run(["queues"]);
      assert.match(
        human.stdout,
        /^queue\s+lanes\s+pending\s+scheduled\s+active\s+completed\s+dead\s+waiting\s+paused$/m,
      );
      assert.match(human.stdout, /^mail\s+1\s+2\s+1\s+0\s+0\s+0\s+0\s+no$/m, "mail: 0 waiting");

      const pending = await json<{ jobs: Listed[] }>(["jobs", "mail"]);
      assert.deepEqual(
        pending.jobs.map((j) => j.payload),
        ["b", '{"to":"a"}'],
      );
      const scheduled = await json<{ jobs: Listed[] }>(["jobs", "mail", "--state", "scheduled"]);
      assert.deepEqual(
        scheduled.jobs.map((j) => j.id),
        [later.id],
      );

      assert.equal((await run(["promote", "mail", later.id])).code, 0);
      const notScheduled = await run(["promote", "mail", later.id]);
      assert.equal(notScheduled.code, 1);
      assert.match(
        notScheduled.stderr,
        new RegExp(`promote\\(${later.id}\\): job ${later.id} is not scheduled \\(it is pending\\)`),
      );

      // one job to dead, then retry it from the CLI
      const claimed = await claim(conn, "mail", 30_000);
      await fail(conn, "mail", claimed!.id, claimed!.attempts, "smtp down", {
        backoffMs: 0,
        maxAttempts: 1,
        keep: 100,
      });
      const dead = await json<{ jobs: Listed[] }>(["jobs", "mail", "--state", "dead", "--limit", "10"]);
      assert.deepEqual(
        dead.jobs.map((j) => [j.id, j.error]),
        [[claimed!.id, "smtp down"]],
      );
      const deadText = await run(["jobs", "mail", "--state", "dead"]);
      assert.match(deadText.stdout, /^id\s+attempts\s+died\s+payload\s+error$/m);
      assert.match(deadText.stdout, /smtp down/);
      const one = await json<Listed>(["job", "mail", claimed!.id]);
      assert.equal(one.state, "dead");
      const leasedAt = claimed!.deadline - 30_000;
      assert.equal(one.processedOn, leasedAt, "started: when its lease was granted");
      assert.equal(one.finishedOn, dead.jobs[0]!.score, "finished: when it died");
      const oneText = (await run(["job", "mail", claimed!.id])).stdout;
      assert.match(oneText, new RegExp(`^started +${new Date(leasedAt).toISOString()}$`, "m"));
      assert.match(oneText, new RegExp(`^finished +${new Date(one.finishedOn!).toISOString()}$`, "m"));
      assert.equal((await run(["retry", "mail", claimed!.id])).code, 0);
      assert.equal((await json<Listed>(["job", "mail", claimed!.id])).state, "pending");

      const missing = await run(["job", "mail", "JOB00000000009"]);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /no job JOB00000000009 in queue "mail"/);
      const badId = await run(["job", "mail", "nope"]);
      assert.equal(badId.code, 2);
      assert.equal((await run(["remove", "mail", a.id])).code, 0);
      assert.equal((await run(["remove", "mail", a.id])).code, 1);
    });

    test("pause, resume and status (brand, wire, module, counts, workers)", async () => {
      await json(["enqueue", "stat", "s1"]);
      assert.deepEqual(await json(["pause", "stat"]), { queue: "stat", paused: true, changed: true });
      const worker = new Worker(new Queue("stat", conn), async () => "ok", { idleCheckMs: 50 });
      try {
        await until("the worker's wake connection", async () =>
          String(await server.cli("CLIENT", "LIST")).includes(" name=emq-wake-stat%;"),
        );
        const status = await json<{
          mode: string;
          brand: string;
          wire: number;
          module: string | null;
          servers: { version: string }[];
          queues: QueueRow[];
          workers: number;
        }>(["status"]);
        assert.equal(status.mode, "standalone");
        assert.equal(status.wire, wire);
        assert.equal(status.brand, wire === 6 ? WIRE6 : WIRE4);
        assert.equal(status.module, wire === 6 ? "0.5.0" : null);
        assert.match(status.servers[0]!.version, /^\d+\.\d+/);
        const stat = status.queues.find((q) => q.name === "stat")!;
        assert.equal(stat.paused, true);
        assert.equal(stat.pending, 1);
        assert.equal(stat.workers, 1);
        const text = await run(["status"]);
        assert.match(text.stdout, /^standalone, 1 primary: /);
        assert.match(
          text.stdout,
          new RegExp(`wire ${wire}, module ${wire === 6 ? "0\\.5\\.0" : "not loaded"}`),
        );
        assert.deepEqual(await json(["resume", "stat"]), { queue: "stat", paused: false, changed: true });
        await until(
          "the worker to run the job after resume",
          async () => (await new Queue("stat", conn).counts()).completed >= 1,
        );
      } finally {
        await worker.close();
      }
    });

    test("clean, drain and obliterate (refused while active, unless --force)", async () => {
      for (let i = 0; i < 3; i++) await json(["enqueue", "bulk", `p${i}`]);
      await json(["enqueue", "bulk", "d", "--delay", "60000"]);
      const running = await claim(conn, "bulk", 30_000);
      assert.deepEqual(await json(["drain", "bulk", "--yes"]), { queue: "bulk", deleted: 3 });
      const refused = await run(["obliterate", "bulk", "--yes"]);
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        /queue "bulk" has 1 active job: close its workers first, or pass \{ force: true \}/,
      );
      await fail(conn, "bulk", running!.id, running!.attempts, "x", {
        backoffMs: 0,
        maxAttempts: 1,
        keep: 100,
      });
      assert.deepEqual(await json(["clean", "bulk", "--state", "dead", "--older-than", "3600000"]), {
        queue: "bulk",
        state: "dead",
        deleted: 0,
      });
      assert.deepEqual(await json(["clean", "bulk", "--state", "dead"]), {
        queue: "bulk",
        state: "dead",
        deleted: 1,
      });
      await json(["enqueue", "bulk", "again"]);
      await claim(conn, "bulk", 30_000);
      assert.deepEqual(await json(["obliterate", "bulk", "--yes", "--force"]), { queue: "bulk", deleted: 1 });
      assert.deepEqual(await server.cli("KEYS", "emq:{bulk}:*"), []);
    });

    test("events: the last entries, and --follow prints them live until SIGTERM", async () => {
      const { id } = await json<{ id: string }>(["enqueue", "ev", "e1"]);
      const last = await json<{ kind: string; jobId: string }[]>(["events", "ev"]);
      assert.deepEqual(
        last.map((e) => [e.kind, e.jobId]),
        [["added", id]],
      );
      const live = follow(["events", "ev", "--follow", "--json", "--url", url]);
      try {
        await live.until(() => /following/.test(live.stderr()), "the reader started");
        await new Queue("ev", conn).add("e2");
        await new Queue("ev", conn).pause();
        await live.until(() => live.lines.length >= 2, "two events");
        assert.deepEqual(
          live.lines.map((l) => JSON.parse(l).kind),
          ["added", "paused"],
        );
      } finally {
        assert.equal(await live.stop(), 0);
      }
      const human = await run(["events", "ev", "--last", "1"]);
      assert.match(human.stdout, /^\d{4}-\d\d-\d\dT[\d:.]+Z\s+paused\s*$/m);
    });

    test("dashboard serves until SIGTERM: its URL printed, the page and the API answer, the token asked", async () => {
      await json(["enqueue", "dash", "d1"]);
      const served = follow([
        "dashboard",
        "--port",
        "0",
        "--token",
        "cli-token-42",
        "--read-only",
        "--json",
        "--url",
        url,
      ]);
      try {
        await served.until(() => served.lines.length >= 1, "the dashboard's URL");
        const { url: page } = JSON.parse(served.lines[0]!) as { url: string };
        assert.match(page, /^http:\/\/127\.0\.0\.1:\d+\/\?token=cli-token-42$/);
        const origin = new URL(page).origin;
        assert.equal((await fetch(`${origin}/api/queues`)).status, 401);
        const res = await fetch(`${origin}/api/queues`, {
          headers: { authorization: "Bearer cli-token-42" },
        });
        const body = (await res.json()) as { queues: { name: string; counts: { pending: number } }[] };
        assert.deepEqual(
          body.queues.find((q) => q.name === "dash")?.counts.pending,
          1,
          "the queue enqueued through the CLI, counted",
        );
        const pause = await fetch(`${origin}/api/queues/dash/pause`, {
          method: "POST",
          headers: { authorization: "Bearer cli-token-42" },
        });
        assert.equal(pause.status, 403);
      } finally {
        assert.equal(await served.stop(), 0);
      }
      const bad = await run(["dashboard", "--port", "70000"]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--port must be an integer from 0 to 65535, got "70000"/);
    });

    test("metrics prints the Prometheus text of every queue", async () => {
      await json(["enqueue", "prom", "m"]);
      const text = await run(["metrics"]);
      assert.equal(text.code, 0);
      assert.match(text.stdout, /^echomq_jobs\{queue="prom",state="pending"\} 1$/m);
      assert.match(text.stdout, /^# TYPE echomq_queue_latency_seconds gauge$/m);
      const parsed = await json<{ name: string }[]>(["metrics", "--queue", "prom"]);
      assert.ok(parsed.some((m) => m.name === "echomq_jobs"));
    });
  });
}
