/**
 * One system, one round, in its own process: receives a MeasurePlan (or, for the cluster
 * measure, a ClusterChildPlan) over IPC, answers with its result, exits. The orchestrator
 * (run.ts) kills it if it outlives its time bound.
 */
import { type ClusterChildPlan, type ClusterChildResult, runClusterChild } from "./cluster-measure.js";
import { type LanesChildPlan, type LanesChildResult, runLanesChild } from "./lanes-child.js";
import { type MeasurePlan, type MeasureResult, Measurer } from "./measure.js";

process.once("message", (plan: MeasurePlan | ClusterChildPlan | LanesChildPlan) => {
  void (async () => {
    let result: MeasureResult | ClusterChildResult | LanesChildResult | { fatal: string };
    try {
      if (!("kind" in plan)) result = await new Measurer(plan).run();
      else if (plan.kind === "lanes") result = await runLanesChild(plan);
      else result = await runClusterChild(plan);
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
