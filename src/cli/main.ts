#!/usr/bin/env node
/**
 * `echomq`: the operator's command line. `echomq --help` lists the commands; each takes `--url`
 * (or `VALKEY_URL`), `--nodes` for a cluster, `--wire`, `--json` and `--help`.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as act from "./act.js";
import { cancel } from "./cancel.js";
import { commandOf, parseInvocation } from "./args.js";
import type { Command } from "./command.js";
import { Context, type Output } from "./context.js";
import { dashboard } from "./dashboard.js";
import { EXIT, failure, UsageError } from "./errors.js";
import { commandHelp, mainHelp } from "./help.js";
import * as inspect from "./inspect.js";
import * as mod from "./module.js";
import * as observe from "./observe.js";
import * as server from "./server.js";

export const COMMANDS: readonly Command[] = [
  inspect.status,
  inspect.queues,
  inspect.jobs,
  inspect.job,
  observe.workers,
  observe.schedules,
  observe.flows,
  observe.groups,
  act.pause,
  act.resume,
  act.schedule,
  act.retry,
  act.remove,
  cancel,
  act.promote,
  act.clean,
  act.drain,
  act.obliterate,
  act.enqueue,
  server.install,
  server.events,
  inspect.metrics,
  dashboard,
  mod.module,
  mod.server,
];

/** Runs one command line; returns the exit code. */
async function main(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  io: Output,
): Promise<number> {
  const name = commandOf(argv);
  const json = argv.includes("--json");
  if (name === null) {
    if (argv.includes("--help") || argv.includes("-h")) {
      io.out(mainHelp(COMMANDS));
      return EXIT.ok;
    }
    return report(new UsageError("no command given (echomq --help lists them)"), json, io);
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command)
    return report(
      new UsageError(`unknown command ${JSON.stringify(name)} (echomq --help lists them)`),
      json,
      io,
    );
  let ctx: Context | undefined;
  try {
    const rest = [...argv];
    rest.splice(rest.indexOf(name), 1);
    const inv = parseInvocation(command, rest, env);
    if (inv.globals.help) {
      io.out(commandHelp(command));
      return EXIT.ok;
    }
    ctx = new Context(inv.globals, io);
    const result = await command.run(ctx, inv);
    if (result) io.out(inv.globals.json ? JSON.stringify(result.json, null, 2) : result.text);
    return EXIT.ok;
  } catch (err) {
    return report(err, json, io);
  } finally {
    await ctx?.close();
  }
}

function report(err: unknown, json: boolean, io: Output): number {
  const { code, message, errorCode } = failure(err);
  const command = err instanceof UsageError && err.command ? ` (echomq ${err.command} --help)` : "";
  if (json) io.out(JSON.stringify({ error: { code: errorCode, message } }, null, 2));
  io.err(`echomq: ${message}${command}`);
  return code;
}

const invoked =
  process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (invoked) {
  const io: Output = {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  };
  main(process.argv.slice(2), process.env, io).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`echomq: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exitCode = EXIT.failed;
    },
  );
}
