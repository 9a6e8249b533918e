/**
 * `echomq cancel <queue> <id>...`: cancels jobs that have not finished (docs/jobs.md,
 * "Cancelling a job"): pending, scheduled or active, each is dead at once with the error
 * `cancelled`; a finished job is left and said so. An unknown id stops the command there.
 */
import { Queue } from "../queue.js";
import { type Command, QUEUE } from "./command.js";

const HOW: Record<string, string> = {
  active: "cancelled (it was active: its worker's signal aborts at its next heartbeat)",
  pending: "cancelled (it was pending)",
  scheduled: "cancelled (it was scheduled)",
};

export const cancel: Command = {
  name: "cancel",
  summary: "cancel jobs that have not finished: dead at once with the error cancelled, no retry",
  usage: "<queue> <id>...",
  options: {},
  positionals: [QUEUE, { name: "id", required: true, many: true }],
  async run(ctx, { positionals }) {
    const queue = new Queue(positionals.queue as string, await ctx.connection());
    const results = [];
    for (const id of positionals.id as string[]) results.push({ id, ...(await queue.cancel(id)) });
    return {
      json: { queue: queue.name, results },
      text: results.map((r) => `${r.id}: ${HOW[r.state] ?? `not cancelled (it is ${r.state})`}`).join("\n"),
    };
  },
};
