import type { Executors } from "./executors.js";
import type { Tally } from "./report.js";

export async function runModel(
  _ex: Executors,
  _tally: Tally,
  _o: { steps: number; seed: number; log: (line: string) => void },
): Promise<void> {}
