/**
 * The commands that change a queue: `pause`, `resume`, `schedule pause|resume`, `retry`,
 * `remove`, `promote`, `clean`, `drain`, `obliterate`, `enqueue`. Each acts on every lane of a
 * laned queue (a laned queue has no schedules).
 */
import { listQueues, queueExists } from "../operate/discover.js";
import { Queue } from "../queue.js";
import { intOption, type Values } from "./args.js";
import { type Command, QUEUE } from "./command.js";
import { NotFoundError, UsageError } from "./errors.js";
import { isoTime } from "./format.js";

const IDS = { name: "id", required: true, many: true } as const;
const queueOf = async (ctx: Parameters<Command["run"]>[0], name: unknown) =>
  new Queue(name as string, await ctx.connection());

/** The queue's names the error lists, at most. */
const LISTED = 20;

/**
 * Refuses a queue the server does not hold (a typo), naming it and the queues it does hold, before
 * anything is written.
 */
async function assertQueueExists(ctx: Parameters<Command["run"]>[0], queue: Queue, hint: string) {
  const conn = await ctx.connection();
  if (await queueExists(conn, queue.name)) return;
  const found = await listQueues(conn);
  const names = found.queues.map((q) => JSON.stringify(q.name));
  const known =
    names.length === 0
      ? "the server holds no queue"
      : `known queues: ${names.slice(0, LISTED).join(", ")}${names.length > LISTED ? `, … (${names.length} in all)` : ""}`;
  throw new NotFoundError(`no queue ${JSON.stringify(queue.name)} on this server (${known})${hint}`);
}

const flag = (name: string, verb: "pause" | "resume"): Command => ({
  name,
  summary:
    verb === "pause"
      ? "stop claims on a queue (running jobs finish)"
      : "let workers claim from a queue again",
  usage: verb === "pause" ? "<queue> [--create]" : "<queue>",
  options:
    verb === "pause"
      ? {
          create: {
            type: "boolean",
            help: "pause a queue the server does not hold yet (before its first job)",
          },
        }
      : {},
  positionals: [QUEUE],
  async run(ctx, { values, positionals }) {
    const queue = await queueOf(ctx, positionals.queue);
    if (values.create !== true) {
      await assertQueueExists(
        ctx,
        queue,
        verb === "pause" ? ": --create pauses it before its first job" : "",
      );
    }
    const changed = await queue[verb]();
    const now = verb === "pause" ? "paused" : "resumed";
    return {
      json: { queue: queue.name, paused: verb === "pause", changed },
      text: changed
        ? `${queue.name}: ${now}`
        : `${queue.name}: already ${verb === "pause" ? "paused" : "running"}`,
    };
  },
});

export const pause = flag("pause", "pause");
export const resume = flag("resume", "resume");

/** `schedule pause|resume <queue> <name>`: holds one schedule, or re-arms it from now. */
export const schedule: Command = {
  name: "schedule",
  summary: "pause a schedule (it adds no job) or resume it (from its next instant after now)",
  usage: "pause|resume <queue> <name>",
  options: {},
  positionals: [{ name: "action", required: true }, QUEUE, { name: "name", required: true }],
  async run(ctx, { positionals }) {
    const action = positionals.action as string;
    if (action !== "pause" && action !== "resume") {
      throw new UsageError(`schedule takes pause or resume, got ${JSON.stringify(action)}`, "schedule");
    }
    const queue = await queueOf(ctx, positionals.queue);
    const name = positionals.name as string;
    const of = `${queue.name} schedule ${name}`;
    if (action === "pause") {
      const changed = await queue.pauseSchedule(name);
      return {
        json: { queue: queue.name, schedule: name, paused: true, changed },
        text: changed ? `${of}: paused` : `${of}: already paused`,
      };
    }
    const { next } = await queue.resumeSchedule(name);
    return {
      json: { queue: queue.name, schedule: name, paused: false, next },
      text:
        next === null
          ? `${of}: resumed, and ended (no instant left)`
          : `${of}: resumed, next ${isoTime(next)}`,
    };
  },
};

/** A command on one or more jobs by id: `action` runs for each, in order. */
function byIds(
  name: string,
  summary: string,
  done: string,
  action: (queue: Queue, id: string, values: Values) => Promise<void>,
  options: Command["options"] = {},
): Command {
  return {
    name,
    summary,
    usage: `<queue> <id>...${Object.keys(options).length ? " [--extra n]" : ""}`,
    options,
    positionals: [QUEUE, IDS],
    async run(ctx, { values, positionals }) {
      const queue = await queueOf(ctx, positionals.queue);
      const ids = positionals.id as string[];
      for (const id of ids) await action(queue, id, values);
      return {
        json: { queue: queue.name, [name === "retry" ? "retried" : `${name}d`]: ids },
        text: ids.map((id) => `${id}: ${done}`).join("\n"),
      };
    },
  };
}

export const retry = byIds(
  "retry",
  "move dead jobs back to pending, with more attempts",
  "pending again",
  async (queue, id, values) =>
    queue.retry(id, intOption(values, "extra", 1, 1, 999_999_999_999_999, "retry")),
  { extra: { type: "string", value: "<n>", help: "attempts granted on top of those used (default 1)" } },
);

export const remove = byIds("remove", "delete jobs that are not active", "removed", async (queue, id) => {
  if (!(await queue.remove(id)))
    throw new NotFoundError(`no job ${id} in queue ${JSON.stringify(queue.name)}`);
});

export const promote = byIds(
  "promote",
  "run scheduled jobs now (delayed, or waiting out a retry's backoff)",
  "pending now",
  (queue, id) => queue.promote(id),
);

export const clean: Command = {
  name: "clean",
  summary: "delete completed or dead jobs, optionally only those older than a grace period",
  usage: "<queue> --state completed|dead [--older-than ms] [--limit n]",
  options: {
    state: { type: "string", value: "<state>", help: "completed or dead (required)" },
    "older-than": {
      type: "string",
      value: "<ms>",
      help: "only jobs finished at least this long ago (default 0: all)",
    },
    limit: { type: "string", value: "<n>", help: "delete at most this many (default: all)" },
  },
  positionals: [QUEUE],
  async run(ctx, { values, positionals }) {
    if (values.state !== "completed" && values.state !== "dead") {
      throw new UsageError(
        `--state must be completed or dead, got ${JSON.stringify(values.state ?? "")}`,
        "clean",
      );
    }
    const olderThanMs = intOption(values, "older-than", 0, 0, 999_999_999_999_999, "clean")!;
    const limit = intOption(values, "limit", undefined, 1, Number.MAX_SAFE_INTEGER, "clean");
    const queue = await queueOf(ctx, positionals.queue);
    const deleted = await queue.clean(values.state, {
      olderThanMs,
      ...(limit !== undefined ? { limit } : {}),
    });
    return {
      json: { queue: queue.name, state: values.state, deleted },
      text: `${queue.name}: ${deleted} ${values.state} job(s) deleted`,
    };
  },
};

const YES = { yes: { type: "boolean", help: "confirm: this deletes jobs" } } as const;
function confirm(values: Record<string, unknown>, command: string, what: string): void {
  if (values.yes !== true) throw new UsageError(`${command} deletes ${what}: add --yes to confirm`, command);
}

export const drain: Command = {
  name: "drain",
  summary: "delete every waiting job (pending and scheduled); running jobs finish",
  usage: "<queue> --yes",
  options: { ...YES },
  positionals: [QUEUE],
  async run(ctx, { values, positionals }) {
    confirm(values, "drain", "every waiting job of the queue");
    const queue = await queueOf(ctx, positionals.queue);
    const deleted = await queue.drain();
    return { json: { queue: queue.name, deleted }, text: `${queue.name}: ${deleted} waiting job(s) deleted` };
  },
};

export const obliterate: Command = {
  name: "obliterate",
  summary: "delete a queue: every job, its settings and its events (refused while jobs run, unless --force)",
  usage: "<queue> --yes [--force]",
  options: { ...YES, force: { type: "boolean", help: "delete running jobs too" } },
  positionals: [QUEUE],
  async run(ctx, { values, positionals }) {
    confirm(values, "obliterate", "the whole queue");
    const queue = await queueOf(ctx, positionals.queue);
    const deleted = await queue.obliterate({ force: values.force === true });
    return {
      json: { queue: queue.name, deleted },
      text: `${queue.name}: obliterated (${deleted} job(s) deleted)`,
    };
  },
};

export const enqueue: Command = {
  name: "enqueue",
  summary: "add a job (the payload as given: text, e.g. JSON)",
  usage: "<queue> <payload> [--delay ms] [--priority n] [--max-attempts n] [--id JOB…]",
  options: {
    delay: { type: "string", value: "<ms>", help: "run after this many ms (default 0)" },
    priority: { type: "string", value: "<n>", help: "lower runs first (default 0)" },
    "max-attempts": { type: "string", value: "<n>", help: "attempts before dead (default: the worker's)" },
    id: { type: "string", value: "<id>", help: "the job id (a branded JOB id; default: a new one)" },
  },
  positionals: [QUEUE, { name: "payload", required: true }],
  async run(ctx, { values, positionals }) {
    const max = 999_999_999_999_999;
    const delay = intOption(values, "delay", 0, 0, max, "enqueue")!;
    const priority = intOption(values, "priority", 0, -max, max, "enqueue")!;
    const maxAttempts = intOption(values, "max-attempts", 0, 0, max, "enqueue")!;
    const queue = await queueOf(ctx, positionals.queue);
    const id = values.id as string | undefined;
    const result = await queue.add(positionals.payload as string, {
      delay,
      priority,
      maxAttempts,
      ...(id ? { id } : {}),
    });
    return {
      json: { queue: queue.name, ...result },
      text: `${result.id}${result.duplicate ? " (duplicate: nothing written)" : delay > 0 ? " scheduled" : " pending"}`,
    };
  },
};
