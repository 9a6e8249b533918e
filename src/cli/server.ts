/**
 * `install` (brand a module node, `EMQ.INSTALL`) and `events` (a queue's event bus: the last
 * entries, or `--follow` them as they come).
 */
import { WIRE6_BRAND } from "../engine/fence.js";
import { installModuleBrand } from "../connector/install.js";
import { EchoMQError, ServerError } from "../errors.js";
import { type BusEvent, parseEntries } from "../events/entry.js";
import { QueueEvents } from "../events/queue-events.js";
import { assertValidQueue, queueKey } from "../keyspace.js";
import { intOption } from "./args.js";
import { type Command, QUEUE } from "./command.js";
import type { Context } from "./context.js";
import { UsageError } from "./errors.js";
import { eventJson, eventLine } from "./format.js";

export const install: Command = {
  name: "install",
  summary: `brand a module node (or a cluster's record) ${WIRE6_BRAND}, so wire-6 clients accept it`,
  usage: "",
  options: {},
  positionals: [],
  async run(ctx) {
    const installed = await installModuleBrand(ctx.options()).catch((err: unknown) => {
      if (err instanceof ServerError && /unknown command/i.test(err.reply)) {
        throw new EchoMQError(
          "EMQ_NO_MODULE",
          `this node does not run the EchoMQ module (${err.reply}): start it with --loadmodule libechomq.so; a stock node needs no install, wire-4 clients brand it`,
          { cause: err },
        );
      }
      throw err;
    });
    return {
      json: { installed: installed === 1, brand: WIRE6_BRAND },
      text: installed === 1 ? `branded ${WIRE6_BRAND}` : `already branded ${WIRE6_BRAND} (nothing written)`,
    };
  },
};

/** The last `n` entries of a queue's stream, oldest first. */
async function lastEntries(ctx: Context, queue: string, n: number): Promise<BusEvent[]> {
  const conn = await ctx.connection();
  const reply = (await conn.send("XREVRANGE", [queueKey(queue, "events"), "+", "-", "COUNT", String(n)])) as [
    unknown,
    Buffer[],
  ][];
  return reply
    .reverse()
    .flatMap(([id, fields]) => parseEntries(String(id), fields))
    .slice(-n);
}

/** Follows the stream until SIGINT or SIGTERM; each event printed as it comes. */
async function follow(ctx: Context, queue: string, from: string): Promise<void> {
  const conn = await ctx.connection();
  const reader = new QueueEvents(queue, conn, { lastEventId: from });
  const print = (e: BusEvent) =>
    ctx.io.out(ctx.globals.json ? JSON.stringify(eventJson(queue, e)) : `${queue}  ${eventLine(e)}`);
  reader.on("event", print);
  reader.on("gap", (gap) =>
    ctx.io.out(ctx.globals.json ? JSON.stringify({ queue, gap }) : `${queue}  gap: ${JSON.stringify(gap)}`),
  );
  reader.on("error", (err) => ctx.io.err(`echomq events: ${(err as Error).message}`));
  await reader.ready;
  ctx.io.err(`following ${queueKey(queue, "events")} (Ctrl-C to stop)`);
  const stop = () => void reader.close();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    await reader.closed;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

export const events: Command = {
  name: "events",
  summary: "a queue's events: the last entries, or --follow them live",
  usage: "<queue> [--follow [--from $|0|<id>]] [--last n]",
  options: {
    follow: { type: "boolean", short: "f", help: "print events as they happen, until Ctrl-C" },
    from: {
      type: "string",
      value: "<id>",
      help: "--follow from: $ new ones (default), 0 the first kept, or after an entry id",
    },
    last: {
      type: "string",
      value: "<n>",
      help: "without --follow: how many of the latest entries (default 20)",
    },
  },
  positionals: [QUEUE],
  async run(ctx, { values, positionals }) {
    const queue = positionals.queue as string;
    assertValidQueue(queue);
    if (values.follow === true) {
      await follow(ctx, queue, (values.from as string | undefined) ?? "$");
      return undefined;
    }
    if (values.from !== undefined) throw new UsageError("--from needs --follow", "events");
    const n = intOption(values, "last", 20, 1, 100_000, "events")!;
    const entries = await lastEntries(ctx, queue, n);
    return {
      json: entries.map((e) => eventJson(queue, e)),
      text: entries.length === 0 ? "(no events)" : entries.map(eventLine).join("\n"),
    };
  },
};
