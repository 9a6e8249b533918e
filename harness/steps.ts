/**
 * One case on two fresh queues (one per side): its steps, each classified from the protocol
 * before it runs, then compared — typed reply, every key under each queue's hashtag, wake
 * messages — or, for a declared difference, judged against its declaration.
 */
import type { Action, LastStep, SeedArg } from "./actions.js";
import {
  canon,
  changes,
  diffDumps,
  type NormDump,
  normalize,
  type QueueName,
  showReply,
  type Window,
} from "./compare.js";
import { classify, type DeclaredId, GUARD_TEXT, judge } from "./declared.js";
import type { RawDump } from "./dump.js";
import {
  type Call,
  type Executors,
  type Mode,
  offsetsOf,
  carriedOf,
  queueOf,
  rawKeys,
  resolveKey,
  type Side,
  type SideTag,
  tail,
} from "./executors.js";
import type { Outcome } from "./report.js";
import type { Command, Reply } from "./resp.js";
import { onReplica, type Sides } from "./guards.js";
import { predictRouting, type Routed, routedStep } from "./routing.js";
import { checkInstall, fitNative, predictNative } from "./spec.js";
import { leasedRows, timedReply } from "./step-replies.js";
import { type Verb, VERSION_KEY, verbOf } from "./verbs.js";

interface State {
  raw: RawDump;
  norm: NormDump;
}

let nextCase = 0;

export class CaseRun {
  readonly outcomes: Outcome[] = [];
  readonly script: Side;
  readonly native: Side;
  step = 0;
  last: LastStep | null = null;
  /** The script side is not run for a layout refusal (D3) when false (generated sequences). */
  scriptOnLayout = true;
  /** The step runs over `maxmemory`: an admission is refused before any step of its own. */
  private full = false;
  /** The subscription to this case's wake channels, once its first action runs. */
  private watched: Promise<void> | null = null;
  /** The last call was refused by the cluster's routing (judged by harness/routing.ts). */
  private wasRouted = false;
  private state: Record<SideTag, State> = {
    script: { raw: new Map(), norm: new Map() },
    native: { raw: new Map(), norm: new Map() },
  };

  constructor(
    readonly ex: Executors,
    readonly label: string,
    readonly queues: readonly string[] = ["A", "B"],
  ) {
    const id = nextCase++;
    const named = (tag: "s" | "n") => {
      const names = new Map<string, string>();
      return (q: string) => names.get(q) ?? names.set(q, ex.queueName(id, q, tag)).get(q)!;
    };
    this.script = { tag: "script", name: named("s") };
    this.native = { tag: "native", name: named("n") };
  }

  /** The wake channels of this case's queues, both sides. */
  private channels(): string[] {
    return [this.script, this.native].flatMap((side) => this.queues.map((q) => `emq:{${side.name(q)}}:wake`));
  }

  /** Ends the subscriptions to this case's wake channels. */
  async close(): Promise<void> {
    if (this.watched === null) return;
    await this.watched;
    this.watched = null;
    await this.ex.scratch.sub.unwatch(this.channels());
  }

  /** Deletes every key of this case's queues, both sides; ends its wake subscriptions. */
  async dispose(): Promise<void> {
    await this.close();
    const names = [this.script, this.native].flatMap((side) => this.queues.map((q) => side.name(q)));
    const keys = [...(await this.ex.scratch.keys.dumpQueues(names)).keys()];
    if (keys.length > 0)
      await this.ex.scratch.client.call([["UNLINK", ...keys.map((k) => Buffer.from(k, "latin1"))]]);
  }

  private names(side: Side): QueueName[] {
    return this.queues.map((q) => ({ physical: side.name(q), logical: q }));
  }

  /** The script side's current raw state (the model reads tokens and ids from it). */
  get scriptState(): RawDump {
    return this.state.script.raw;
  }

  private dump(side: Side, extra: readonly Buffer[] = []): Promise<RawDump> {
    return this.ex.scratch.keys.dumpQueues(
      this.queues.map((q) => side.name(q)),
      extra,
    );
  }

  private record(verb: string, problems: string[], ok: { declared?: DeclaredId; routed?: true }): Outcome {
    const outcome: Outcome = {
      verb,
      verdict: problems.length > 0 ? "failed" : ok.declared ? "declared" : "equal",
      label: `${this.label} step ${this.step}`,
      problems,
      ...(ok.declared ? { declared: ok.declared } : {}),
      ...(ok.routed ? { routed: true } : {}),
    };
    this.outcomes.push(outcome);
    return outcome;
  }

  get failed(): boolean {
    return this.outcomes.some((o) => o.verdict === "failed");
  }

  async run(action: Action): Promise<Outcome | null> {
    // The wake is published on shard channels (SPUBLISH): each is watched by name.
    this.watched ??= this.ex.scratch.sub.watch(this.channels());
    await this.watched;
    switch (action.kind) {
      case "call":
        return this.call(action.call, action.mode ?? "window", action.host ?? true, action.expect);
      case "seed":
        await this.seed(action.commands, action.tolerant ?? false);
        return null;
      case "wait":
        await new Promise((r) => setTimeout(r, action.ms));
        return null;
      case "brand":
        await this.ex.setBrand(action.value);
        return null;
      case "guard":
        return this.guard(action.guard, action.call);
      case "install":
        return this.install(action.brand, action.tail ?? ["1", VERSION_KEY]);
      case "check": {
        const problems = this.last ? action.fn(this.last) : ["no step to check"];
        this.step += 1;
        const declared = action.declared ? { declared: action.declared } : {};
        return this.record(
          action.verb,
          problems.map((p) => `${action.what}: ${p}`),
          declared,
        );
      }
    }
  }

  /** Plain writes on both queues (setup, or the model's adversarial states). */
  async seed(commands: readonly SeedArg[][], tolerant = false): Promise<void> {
    const build = (side: Side): Command[] =>
      commands.map((c) =>
        c.map((a) => (typeof a === "object" && !Buffer.isBuffer(a) ? resolveKey(a, side) : a)),
      );
    const replies = await this.ex.scratch.client.call([...build(this.script), ...build(this.native)]);
    const half = commands.length;
    replies.forEach((r, i) => {
      const twin = replies[i < half ? i + half : i - half]!;
      if ((r.t === "error" && !tolerant) || canon(r) !== canon(twin))
        throw new Error(`seed failed: ${showReply(r)}`);
    });
    this.step += 1;
    this.settle(this.script, await this.dump(this.script));
    this.settle(this.native, await this.dump(this.native));
    await this.ex.scratch.sub.drain();
  }

  /** Takes `raw` as this side's state, scores the step did not explain kept literally. */
  private settle(side: Side, raw: RawDump): void {
    const prev = this.state[side.tag];
    const { norm } = normalize(raw, { queues: this.names(side), step: this.step, prev });
    this.state[side.tag] = { raw, norm };
  }

  private async call(call: Call, mode: Mode, host: boolean, expect?: "equal" | DeclaredId): Promise<Outcome> {
    this.step += 1;
    const verb = verbOf(call.verb);
    // On a cluster the server may refuse the call before it runs (routing): judged as such,
    // whatever the case expected of its executors.
    const routed = await predictRouting(this.ex, verb, call, this.sides);
    this.wasRouted = routed !== null;
    if (routed !== null) return this.routed(verb, call, routed);
    const c = classify(verb, call, {
      host,
      full: this.full,
      brand: this.ex.brand,
      scriptOnLayout: this.scriptOnLayout,
      script: this.script,
      scriptState: this.state.script.raw,
    });
    let outcome: Outcome;
    if (c.kind === "spec") outcome = await this.spec(verb, call, mode);
    else if (c.kind === "judged") outcome = await this.judged(verb, call, c.declared, c.runScript, null);
    else outcome = await this.compare(verb, call, mode, c.hostPause);
    const got = outcome.declared ?? "equal";
    if (expect !== undefined && outcome.verdict !== "failed" && got !== expect) {
      outcome.verdict = "failed";
      outcome.problems.push(`the case expects ${expect}, the harness judged ${got}`);
    }
    return outcome;
  }

  /** The case's sides and logical queues. */
  private get sides(): Sides {
    return { script: this.script, native: this.native, queues: this.queues };
  }

  /** A step the cluster's routing refuses on at least one side (harness/routing.ts). */
  private async routed(verb: Verb, call: Call, routed: Routed): Promise<Outcome> {
    const r = await routedStep(this.ex, verb, call, this.sides, routed);
    const { reply, window } = r.native;
    const before = this.state.native.raw;
    this.settle(this.script, await this.dump(this.script));
    this.settle(this.native, await this.dump(this.native));
    this.last = { reply, window, before, after: this.state.native.raw, side: this.native };
    return this.record(verb.verb, r.problems, {
      routed: true,
      ...(r.declared ? { declared: "C1" as const } : {}),
    });
  }

  /** Replies, keyspaces and wakes of both sides after a step; the differences. */
  private async finish(
    verb: Verb,
    call: Call,
    replies: { script: Reply; native: Reply },
    windows: { script: Window; native: Window },
    wakesScript: string[] | null,
  ): Promise<string[]> {
    const values = call.values.map((v) => Buffer.from(v));
    const offsets = offsetsOf(verb, values);
    const carried = carriedOf(verb);
    const given = new Set(call.values.map((v) => Buffer.from(v).toString("latin1")));
    const [rawS, rawN, published] = await Promise.all([
      this.dump(this.script),
      this.dump(this.native),
      this.ex.scratch.sub.drain(),
    ]);
    const leased = leasedRows(verb, call, replies.native, this.native);
    const s = normalize(rawS, {
      queues: this.names(this.script),
      step: this.step,
      prev: this.state.script,
      window: windows.script,
      offsets,
      carried,
      given,
      leased: leasedRows(verb, call, replies.script, this.script),
    });
    const n = normalize(rawN, {
      queues: this.names(this.native),
      step: this.step,
      prev: this.state.native,
      window: windows.native,
      offsets,
      carried,
      given,
      epoch: { runId: this.ex.scratch.runId, leasedRows: leased },
      leased,
    });
    const problems = [...s.issues.map((i) => `script: ${i}`), ...n.issues.map((i) => `native: ${i}`)];
    const replyIssues: string[] = [];
    const rs = timedReply(verb, values, replies.script, windows.script, this.step, replyIssues);
    const rn = timedReply(verb, values, replies.native, windows.native, this.step, replyIssues);
    problems.push(...replyIssues);
    if (canon(rs) !== canon(rn)) problems.push(`reply: script ${showReply(rs)} vs native ${showReply(rn)}`);
    problems.push(...diffDumps(s.norm, n.norm));
    for (const q of this.queues) {
      const messages = (side: Side) =>
        published.filter((p) => p.channel === `emq:{${side.name(q)}}:wake`).map((p) => p.message);
      const predicted = q === queueOf(call) ? wakesScript : [];
      const ws = wakesScript === null ? messages(this.script) : (predicted ?? []);
      const wn = messages(this.native);
      if (JSON.stringify(ws) !== JSON.stringify(wn))
        problems.push(
          `wake on queue ${q}: script published ${JSON.stringify(ws)}, native ${JSON.stringify(wn)}`,
        );
    }
    this.last = {
      reply: replies.native,
      window: windows.native,
      before: this.state.native.raw,
      after: rawN,
      side: this.native,
    };
    this.state.script = { raw: rawS, norm: s.norm };
    this.state.native = { raw: rawN, norm: n.norm };
    return problems;
  }

  private async compare(verb: Verb, call: Call, mode: Mode, hostPause: boolean): Promise<Outcome> {
    const tS = tail(call, this.script);
    let host: "paused" | Reply | null = null;
    if (hostPause)
      host = await this.ex.hostPauseRead(resolveKey({ q: queueOf(call)!, slot: "meta" }, this.script));
    if (host === "paused") return this.judged(verb, call, "D2", false, "host");
    const script = host === null ? this.ex.evalCommand(verb, tS) : null;
    const pair = await this.ex.pair(script, this.ex.nativeCommand(verb, tail(call, this.native)), mode);
    const native = await this.ex.injectFault(verb, pair.native, this.native);
    const problems = await this.finish(
      verb,
      call,
      { script: pair.script ?? (host as Reply), native },
      { script: pair.scriptWindow, native: pair.nativeWindow },
      null,
    );
    return this.record(verb.verb, problems, {});
  }

  /**
   * A declared difference: the script side runs (or not) for the record, the native side is
   * judged against the declaration alone, with a snapshot before and after it.
   */
  private async judged(
    verb: Verb,
    call: Call,
    declared: DeclaredId,
    runScript: boolean,
    host: "host" | null,
  ): Promise<Outcome> {
    const extra = rawKeys(call);
    const scriptBefore = await this.dump(this.script, extra);
    const script = runScript ? await this.ex.alone(this.ex.evalCommand(verb, tail(call, this.script))) : null;
    const scriptAfter = await this.dump(this.script, extra);
    const nativeBefore = await this.dump(this.native, extra);
    const run = await this.ex.alone(this.ex.nativeCommand(verb, tail(call, this.native)));
    const native = await this.ex.injectFault(verb, run.reply, this.native);
    const nativeAfter = await this.dump(this.native, extra);
    const published = await this.ex.scratch.sub.drain();
    const nativeWakes = published.filter((p) =>
      this.queues.some((q) => p.channel === `emq:{${this.native.name(q)}}:wake`),
    );
    const problems = judge(declared, {
      verb,
      brand: this.ex.brandValue,
      script: script?.reply ?? null,
      scriptSent: script !== null,
      scriptChanges: changes(scriptBefore, scriptAfter),
      native,
      nativeChanges: changes(nativeBefore, nativeAfter),
      nativeWakes: nativeWakes.length,
      hostAnswered: host !== null,
      full: this.full && verb.admission,
    });
    this.last = {
      reply: native,
      window: run.window,
      before: nativeBefore,
      after: nativeAfter,
      side: this.native,
    };
    this.settle(this.script, await this.dump(this.script));
    this.settle(this.native, await this.dump(this.native));
    return this.record(verb.verb, problems, { declared });
  }

  /**
   * D8: the native-only verb, held to the executable check (harness/spec.ts) computed from the
   * native queue's state before the call at a server time in the call's window; the same
   * prediction is applied to the script side's queue so both stay in step.
   */
  private async spec(verb: Verb, call: Call, mode: Mode): Promise<Outcome> {
    const name = verb.verb as "RESCHEDULE";
    const tN = tail(call, this.native);
    const before = this.state.native.raw;
    const pair = await this.ex.pair(null, this.ex.nativeCommand(verb, tN), mode);
    const native = await this.ex.injectFault(verb, pair.native, this.native);
    const after = await this.dump(this.native);
    const { now, problems } = fitNative(
      name,
      tN,
      { before, after },
      this.ex.brandValue,
      pair.nativeWindow,
      native,
    );
    const predicted = predictNative(
      name,
      tail(call, this.script),
      this.state.script.raw,
      this.ex.brandValue,
      now,
    );
    for (const r of await this.ex.scratch.client.call(predicted.writes)) {
      if (r.t === "error") throw new Error(`applying the executable check's writes: ${r.v}`);
    }
    problems.push(
      ...(await this.finish(
        verb,
        call,
        { script: predicted.reply, native },
        { script: pair.nativeWindow, native: pair.nativeWindow },
        predicted.wakes,
      )),
    );
    return this.record(verb.verb, problems, problems.length === 0 ? { declared: "D8" } : {});
  }

  /** `EMQ.INSTALL` on a node whose brand is `brand`, held to its executable check. */
  private async install(brand: string | null | "hash", t: string[]): Promise<Outcome> {
    this.step += 1;
    return this.record("INSTALL", await checkInstall(this.ex, brand, t), {});
  }

  /**
   * A call over `maxmemory` (window mode: the server refuses any command queued in MULTI while
   * short of memory), compared like any other; the step also checks that the limit held: an
   * admission is refused with the server's `OOM` text, a drain is not.
   */
  private async overMaxmemory(call: Call): Promise<Outcome> {
    const verb = verbOf(call.verb);
    this.full = true;
    const outcome = await this.ex
      .overMaxmemory(() => this.call(call, "window", true))
      .finally(() => {
        this.full = false;
      });
    const reply = this.last?.reply;
    const refused = reply?.t === "error" && reply.v === GUARD_TEXT.oom;
    // The cluster's routing refuses before the memory check: that step was judged by routing.
    if (verb.admission !== refused && !this.wasRouted) {
      outcome.verdict = "failed";
      outcome.problems.push(
        verb.admission
          ? `over maxmemory: the admission ${verb.verb} was not refused (native ${reply ? showReply(reply) : "nothing"})`
          : `over maxmemory: the drain ${verb.verb} was refused (${reply ? showReply(reply) : "nothing"})`,
      );
    }
    return outcome;
  }

  /**
   * On a fresh replica. Read-only: the server refuses both sides up front with its `READONLY`
   * text, and neither writes (compared). Writable (`replica-read-only no`): the script runs and
   * may write there, the native guard refuses (D5).
   */
  private async guard(kind: "oom" | "replica" | "writable-replica", call: Call): Promise<Outcome> {
    if (kind === "oom") return this.overMaxmemory(call);
    this.step += 1;
    const verb = verbOf(call.verb);
    const writable = kind === "writable-replica";
    const problems = await onReplica(this.ex, verb, call, this.sides, writable);
    return this.record(verb.verb, problems, writable ? { declared: "D5" } : {});
  }
}
