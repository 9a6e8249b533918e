/**
 * The listed cases of `ADD`'s trace context (`<trace>`, the *trace* grammar): kept on the row,
 * with a tracestate, at the 512-byte bound; every kind the grammar refuses; and where its check
 * stands among the refusals (after max attempts, before the id gate).
 */
import { addJob, BAD_TRACES, type Case, J, TRACE } from "./build.js";

export const TRACE_CASES: Case[] = [
  { name: "ADD: trace context kept on the row", actions: [addJob(J(1), "0", "0", "0", "A", TRACE)] },
  {
    name: "ADD: every field on the row (priority, max attempts, trace)",
    actions: [addJob(J(1), "-3", "0", "7", "A", TRACE)],
  },
  {
    name: "ADD: trace context with a tracestate, delayed",
    actions: [addJob(J(1), "2", "10", "0", "A", `${TRACE};congo=t61rcWkgMzE,rojo=00f067aa0ba902b7`)],
  },
  {
    name: "ADD: trace context of 512 bytes",
    actions: [addJob(J(1), "0", "0", "0", "A", `${TRACE};${"s".repeat(456)}`)],
  },
  ...BAD_TRACES.map((t) => ({
    name: `ADD: trace ${JSON.stringify(t.length > 60 ? `${t.slice(0, 57)}…` : t)} refused`,
    actions: [addJob(J(1), "0", "0", "0", "A", t)],
  })),
  {
    name: "ADD: a bad max attempts is refused before a bad trace",
    actions: [addJob(J(1), "0", "0", "x", "A", "x")],
  },
  {
    name: "ADD: a bad trace is refused before the id gate",
    actions: [addJob("job00000000001", "0", "0", "0", "A", "x")],
  },
];
