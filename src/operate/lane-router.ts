/**
 * Where a queue's jobs go and are found: a plain queue is its own one lane; a laned queue spreads
 * its adds over its lanes (by `laneKey`, else in turn), records its lane count once before its
 * first add, and finds a job by asking every lane in use in one round trip.
 */
import { assertValidBrandedId } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { recordLanes } from "../jobs.js";
import { jobKey } from "../keyspace.js";
import { laneNames, laneOfKey } from "../lanes/naming.js";
import { lanesOf, recordedLanes } from "../lanes/registry.js";

export class LaneRouter {
  private readonly own: readonly string[];
  private turn = 0;
  private recorded: Promise<unknown> | undefined;

  constructor(
    private readonly name: string,
    private readonly connection: Connection,
    private readonly lanes: number,
  ) {
    this.own = laneNames(name, lanes);
  }

  /** Every lane the queue's jobs may be in: its own, and those of every lane count recorded. */
  async inUse(): Promise<string[]> {
    return lanesOf(this.name, [this.lanes, ...(await recordedLanes(this.connection, this.name))]);
  }

  /** The lane a job goes to: by `laneKey`, else the next in turn. */
  pick(laneKey: unknown): string {
    if (this.lanes === 1) return this.name;
    if (laneKey !== undefined) {
      if (typeof laneKey !== "string")
        throw new InvalidArgumentError("laneKey", `must be a string, got ${typeof laneKey}`);
      return this.own[laneOfKey(laneKey, this.lanes)]!;
    }
    const lane = this.own[this.turn % this.lanes]!;
    this.turn = (this.turn + 1) % this.lanes;
    return lane;
  }

  /** A laned queue records its lane count once (`LANES`), before its first add. */
  record(): Promise<unknown> {
    if (this.lanes === 1) return Promise.resolve();
    this.recorded ??= recordLanes(this.connection, this.name, this.lanes).catch((err: unknown) => {
      this.recorded = undefined;
      throw err;
    });
    return this.recorded;
  }

  /** The lane holding job `id` — every lane asked in one round trip — or null. */
  async find(id: string): Promise<string | null> {
    assertValidBrandedId(id);
    if (this.lanes === 1 && (await recordedLanes(this.connection, this.name)).length === 0) return this.name;
    const lanes = await this.inUse();
    const found = await Promise.all(lanes.map((lane) => this.connection.send("EXISTS", [jobKey(lane, id)])));
    const at = found.findIndex((n) => Number(n) === 1);
    return at === -1 ? null : lanes[at]!;
  }

  /** The lane holding job `id`, else the queue's first lane (where a call then says "no job"). */
  async laneOrFirst(id: string): Promise<string> {
    return (await this.find(id)) ?? this.own[0]!;
  }
}
