/** The help texts, made from the command table. Pure. */
import { GLOBAL_OPTIONS, type OptionSpec } from "./args.js";
import type { Command } from "./command.js";

function optionLines(options: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(options).map(([name, o]) => [
    `${o.short ? `-${o.short}, ` : "    "}--${name}${o.value ? ` ${o.value}` : ""}`,
    o.help + (o.multiple ? " (repeatable)" : ""),
  ]);
  const width = Math.max(...rows.map(([a]) => a!.length));
  return rows.map(([a, b]) => `  ${a!.padEnd(width)}  ${b}`);
}

/** `echomq --help`: every command with its summary, then the global options. */
export function mainHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    "usage: echomq <command> [options]",
    "",
    "Operate EchoMQ queues on a Valkey server or cluster.",
    "",
    "commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "options of every command:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    "`echomq <command> --help` shows a command's own options.",
    "exit codes: 0 done, 1 the operation failed, 2 a usage error, 3 no connection (unreachable, refused, fenced)",
  ].join("\n");
}

/** `echomq <command> --help`. */
export function commandHelp(command: Command): string {
  const own =
    Object.keys(command.options).length > 0 ? ["", "options:", ...optionLines(command.options)] : [];
  return [
    `usage: echomq ${command.name}${command.usage ? ` ${command.usage}` : ""} [--url <url> | --nodes <host:port,…>] [--wire 4|6] [--json]`,
    "",
    `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`,
    ...own,
    "",
    "options of every command:",
    ...optionLines(GLOBAL_OPTIONS),
  ].join("\n");
}
