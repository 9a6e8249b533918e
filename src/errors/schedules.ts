/**
 * The refusals of an operator's schedule transitions: a schedule that is not there, a resume of a
 * schedule that is not paused. Nothing was written.
 */

import { EchoMQError } from "./base.js";

/**
 * `queue.pauseSchedule(name)` / `queue.resumeSchedule(name)` found no schedule of that name on the
 * queue (never created, removed, or ended by its limit or end time). Nothing was written.
 */
export class ScheduleNotFoundError extends EchoMQError {
  constructor(
    readonly queue: string,
    readonly schedule: string,
  ) {
    super("EMQ_SCHEDULE_NOT_FOUND", `queue ${queue} has no schedule ${JSON.stringify(schedule)}`);
  }
}

/**
 * `queue.resumeSchedule(name)` found the schedule running, not paused: there is nothing to resume
 * (a wrong name, or another operator resumed it first). Nothing was written.
 */
export class ScheduleNotPausedError extends EchoMQError {
  constructor(
    readonly queue: string,
    readonly schedule: string,
  ) {
    super(
      "EMQ_SCHEDULE_NOT_PAUSED",
      `schedule ${JSON.stringify(schedule)} of queue ${queue} is not paused: nothing to resume`,
    );
  }
}
