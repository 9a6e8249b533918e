/** The shape of a CLI command: its parse shape, help, and what it runs. */
import type { Invocation, Shape } from "./args.js";
import type { Context } from "./context.js";

/** A command's output: the JSON document (`--json`) and the text for people. */
interface Result {
  json: unknown;
  text: string;
}

export interface Command extends Shape {
  summary: string;
  /** The arguments after the command word, as help shows them. */
  usage: string;
  /** A finished command's result; a streaming one (`events --follow`) writes as it goes. */
  run(ctx: Context, inv: Invocation): Promise<Result | undefined>;
}

/** The `<queue>` positional most commands take. */
export const QUEUE = { name: "queue", required: true } as const;
