/**
 * One system, one round, in its own process: receives a MeasurePlan over IPC, answers with the
 * MeasureResult, exits. The orchestrator (run.ts) kills it if it outlives its time bound.
 */
import { type MeasurePlan, type MeasureResult, Measurer } from "./measure.js";

process.once("message", (plan: MeasurePlan) => {
  void (async () => {
    let result: MeasureResult | { fatal: string };
    try {
      result = await new Measurer(plan).run();
    } catch (err) {
      result = { fatal: (err as Error).stack ?? String(err) };
    }
    process.send!(result, () => {
      process.disconnect();
      // Everything was closed; a library timer left behind must not hold the round up.
      setTimeout(() => process.exit(0), 2000).unref();
    });
  })();
});
