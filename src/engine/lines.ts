/**
 * Sending lines the way both engines do: written in one tick, and a line that meets `NOSCRIPT`
 * sent again once its script is loaded (`SCRIPT LOAD`, once for every line that met it at the
 * same time). Callers never see `NOSCRIPT`.
 */
import { ServerError, typedServerError } from "../errors.js";
import type { Script } from "../scripts/index.js";
import type { Line, Sender } from "./engine.js";

/** A line, and the script to load if it meets `NOSCRIPT` (null for a line that is no `EVALSHA`). */
export type Planned = { line: Line; script: Script | null };

function isNoScript(result: unknown): boolean {
  return result instanceof ServerError && result.reply.startsWith("NOSCRIPT");
}

/** `EVALSHA <sha> <numkeys> <keys…> <args…>` */
export function evalshaLine(script: Script, keys: readonly string[], args: readonly unknown[]): Line {
  return ["EVALSHA", [script.sha1, keys.length, ...keys, ...(args as Line[1])]];
}

/** The first key of a line (`EVALSHA <sha> <numkeys> <key>…`): where its script must be loaded. */
function firstKey(line: Line): string {
  return String(line[1][2] ?? "");
}

export class LineSender {
  constructor(private readonly sender: Sender) {}

  /** Sends one planned line; a refusal is thrown typed. */
  async one(planned: Planned): Promise<unknown> {
    const [command, args] = planned.line;
    try {
      return await this.sender.send(command, args);
    } catch (err) {
      if (!planned.script || !isNoScript(err)) throw typedServerError(err);
    }
    await this.sender.loadScript(planned.script, firstKey(planned.line));
    try {
      return await this.sender.send(command, args);
    } catch (err) {
      throw typedServerError(err);
    }
  }

  /** Sends planned lines in one tick; each result is the reply or its typed error. */
  async all(planned: readonly Planned[]): Promise<unknown[]> {
    const results = (await this.sender.sendAll(planned.map((p) => p.line))).map(typedServerError);
    const missing = results.flatMap((r, i) => (isNoScript(r) && planned[i]?.script ? [i] : []));
    if (missing.length === 0) return results;
    await Promise.all(
      missing.map((i) => this.sender.loadScript(planned[i]!.script!, firstKey(planned[i]!.line))),
    );
    const again = (await this.sender.sendAll(missing.map((i) => planned[i]!.line))).map(typedServerError);
    missing.forEach((at, k) => {
      results[at] = again[k];
    });
    return results;
  }
}
