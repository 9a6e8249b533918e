/**
 * Every BullMQ name `echomq/bullmq` knows — option, method, event — with what it does here: honoured
 * (and how it maps onto EchoMQ) or refused (and what to use instead). The code checks options and
 * refuses methods through this one table, and the migration guide's table is generated from it
 * (`npm run bullmq:doc`), so the two cannot drift. Pure data.
 */

/** Where a name belongs, as the guide groups them. */
export type Scope =
  | "connection"
  | "Queue options"
  | "job options"
  | "repeat options"
  | "Queue"
  | "Worker options"
  | "Worker"
  | "Job"
  | "QueueEvents options"
  | "QueueEvents"
  | "FlowProducer options"
  | "FlowProducer";

export interface Entry {
  scope: Scope;
  name: string;
  status: "honoured" | "refused";
  /** Honoured: what it maps to. Refused: what to use instead. */
  echomq: string;
}

const h = (scope: Scope, name: string, echomq: string): Entry => ({
  scope,
  name,
  status: "honoured",
  echomq,
});
const r = (scope: Scope, name: string, echomq: string): Entry => ({ scope, name, status: "refused", echomq });

const NO_LIFO = "EchoMQ has no LIFO order: priority orders waiting jobs (lower runs first)";

export const NAMES: readonly Entry[] = [
  h("connection", "host", "connect()'s connection.host"),
  h("connection", "port", "connect()'s connection.port"),
  h("connection", "username", "connect()'s connection.username"),
  h("connection", "password", "connect()'s connection.password"),
  h("connection", "db", "connect()'s connection.db"),
  h("connection", "tls", "connect()'s connection.tls"),
  h("connection", "connectionName", "connect()'s connection.connectionName (the client name)"),
  h("connection", "connectTimeout", "connect()'s connection.connectTimeout"),
  h("connection", "a URL", "redis://, rediss://, valkey://, valkeys:// (connect(url))"),
  h(
    "connection",
    "maxRetriesPerRequest",
    "accepted and not needed: EchoMQ's workers retry a lost connection themselves",
  ),
  h("connection", "wire", "EchoMQ's own: 4 (Lua scripts, default) or 6 (the native module)"),
  h("connection", "nodes", "EchoMQ's own: a Valkey Cluster's start nodes"),
  h("connection", "an EchoMQ Connection", "used as it is (and left open by close())"),
  h(
    "connection",
    "an ioredis / iovalkey client",
    "its options are carried over and its sockets never used (EchoMQ's are fenced): see docs/connecting.md",
  ),
  r(
    "Queue options",
    "prefix",
    "the keyspace is fixed (emq:{<queue>}:…): use another queue name to keep apps apart",
  ),
  h("Queue options", "connection", "connect(), once per Queue"),
  h("Queue options", "defaultJobOptions", "merged under each add's options, as BullMQ does"),
  r("Queue options", "streams", "the event bus is set with the core Queue's setEvents({ maxLen, maxAgeMs })"),
  h("job options", "priority", "priority (lower runs first; 0, the default, before any other)"),
  h("job options", "delay", "delay"),
  h(
    "job options",
    "attempts",
    "the row's maxAttempts (default 1, as BullMQ's: a job runs once unless told); job.opts.attempts reads it back",
  ),
  h(
    "job options",
    "backoff",
    "the row's own backoff (the core's backoff: delay → delayMs), read by any worker: whole ms or { type: 'fixed' | 'exponential', delay, jitter? } (default none: retried at once); jitter spreads ± that share (BullMQ's only takes off), a fixed backoff takes none",
  ),
  h(
    "job options",
    "jobId",
    "the idempotency key: a second add within a day returns the first job (see the guide); job.id stays EchoMQ's id",
  ),
  h("job options", "deduplication", "{ id, ttl }: the idempotency key and its lifetime (ttl; default a day)"),
  h("job options", "repeat", "a job scheduler named repeat:<name>:<pattern | every> (upsertJobScheduler)"),
  r(
    "job options",
    "removeOnComplete",
    "finished jobs are kept per worker, not per job: the Worker's removeOnComplete, or queue.clean()",
  ),
  r(
    "job options",
    "removeOnFail",
    "failed jobs are kept per worker: the Worker's removeOnFail, or queue.clean()",
  ),
  r("job options", "lifo", NO_LIFO),
  r("job options", "timestamp", "a job's id carries its creation time: job.timestamp reads it"),
  r("job options", "parent", "add the parent and its children together with FlowProducer.add()"),
  r("job options", "keepLogs", "a job keeps its last 100 log lines"),
  r(
    "job options",
    "stackTraceLimit",
    "a job keeps its latest failure's stack only (job.stacktrace: one entry, 20 frames, 8 KiB): drop stackTraceLimit",
  ),
  r("job options", "sizeLimit", "a payload's bound is the server's (proto-max-bulk-len)"),
  r("job options", "failParentOnFailure", "a parent fails when a child fails: this is EchoMQ's default"),
  r(
    "job options",
    "ignoreDependencyOnFailure",
    "the core FlowProducer's onChildFailure: 'ignore', set on the parent",
  ),
  r(
    "job options",
    "removeDependencyOnFailure",
    "the core FlowProducer's onChildFailure: 'ignore', set on the parent",
  ),
  r(
    "job options",
    "continueParentOnFailure",
    "the core FlowProducer's onChildFailure: 'ignore', set on the parent",
  ),
  h("repeat options", "pattern", "cron (5 fields, or 6 with seconds first)"),
  h("repeat options", "every", "everyMs: instants at multiples of it"),
  h("repeat options", "tz", "tz"),
  h("repeat options", "limit", "limit: jobs added at most"),
  h("repeat options", "startDate", "startAt"),
  h("repeat options", "endDate", "endAt"),
  r(
    "repeat options",
    "immediately",
    "the first job comes at the first instant: add one job yourself to run now",
  ),
  r("repeat options", "offset", "instants fall on multiples of every: shift them with startDate"),
  r("repeat options", "count", "a schedule counts the jobs it added itself (getJobSchedulers)"),
  r("repeat options", "key", "the scheduler's id is its key"),
  r("repeat options", "utc", "give tz: 'UTC' (the default)"),
  r("repeat options", "jobId", "a scheduler's jobs get EchoMQ ids of their own"),
  h("Queue", "add", "add(); resolves with a Job"),
  h("Queue", "addBulk", "addBulk(): one round trip"),
  h("Queue", "getJob", "the row by EchoMQ id (job.id), or by the jobId an add was given"),
  h(
    "Queue",
    "getJobs",
    "the rows of each state (wait or waiting, prioritized, delayed, active, completed, failed, waiting-children), start to end, newest first unless asc",
  ),
  h(
    "Queue",
    "getJobCounts",
    "one count per state asked, keyed as asked (BullMQ 6's seven when none is named)",
  ),
  h("Queue", "getJobCountByTypes", "the sum of getJobCounts' answer"),
  h("Queue", "getWaiting", "getJobs('waiting', …), oldest first"),
  h("Queue", "getActive", "getJobs('active', …)"),
  h("Queue", "getDelayed", "getJobs('delayed', …)"),
  h("Queue", "getPrioritized", "getJobs('prioritized', …)"),
  h("Queue", "getCompleted", "getJobs('completed', …)"),
  h("Queue", "getFailed", "getJobs('failed', …)"),
  h("Queue", "getWaitingChildren", "getJobs('waiting-children', …)"),
  h("Queue", "getWaitingCount", "getJobCounts('waiting')"),
  h("Queue", "getActiveCount", "getJobCounts('active')"),
  h("Queue", "getDelayedCount", "getJobCounts('delayed')"),
  h("Queue", "getPrioritizedCount", "getJobCounts('prioritized')"),
  h("Queue", "getCompletedCount", "getJobCounts('completed')"),
  h("Queue", "getFailedCount", "getJobCounts('failed')"),
  h("Queue", "getWaitingChildrenCount", "getJobCounts('waiting-children')"),
  h("Queue", "count", "waiting, delayed, prioritized and waiting-children jobs"),
  h("Queue", "pause", "pause(): no claim starts, running jobs finish"),
  h("Queue", "resume", "resume()"),
  h("Queue", "isPaused", "the queue's pause flag"),
  h("Queue", "remove", "remove(id): a job that is not active"),
  h("Queue", "clean", "completed and failed only: the ids of the jobs deleted"),
  h("Queue", "drain", "deletes waiting jobs; drain(true) the delayed ones too"),
  h("Queue", "obliterate", "obliterate({ force }); refuses while a job is active unless force"),
  h(
    "Queue",
    "upsertJobScheduler",
    "schedule(id, { cron | everyMs, … }): the queue's workers add each instant's job; resolves with nothing",
  ),
  h("Queue", "removeJobScheduler", "unschedule(id)"),
  h("Queue", "getJobSchedulers", "schedules(), soonest first"),
  h("Queue", "getRepeatableJobs", "the schedules, as repeatable jobs"),
  h("Queue", "removeRepeatable", "unschedule(repeat:<name>:<pattern | every>)"),
  h("Queue", "removeRepeatableByKey", "unschedule(key)"),
  h("Queue", "close", "closes the connection the Queue opened"),
  h("Queue", "waitUntilReady", "resolves once connected"),
  r("Queue", "retryJobs", "retry each failed job: job.retry() over getFailed()"),
  r("Queue", "promoteJobs", "promote each delayed job: job.promote() over getDelayed()"),
  r("Queue", "trimEvents", "the core Queue's setEvents({ maxLen }) bounds the event bus"),
  r("Queue", "getMetrics", "EchoMQ's Metrics (Prometheus) and its dashboard"),
  r("Queue", "getWorkers", "EchoMQ's dashboard lists the workers"),
  r("Queue", "setGlobalConcurrency", "the core Queue's setLimits({ concurrency })"),
  r("Queue", "setGlobalRateLimit", "the Worker's limiter, or the core Queue's setLimits({ rate })"),
  r("Queue", "rateLimit", "the Worker's limiter, or the core Queue's setLimits({ rate })"),
  r("Queue", "getDeduplicationJobId", "add the same jobId again: the add returns the first job"),
  r("Queue", "removeDeduplicationKey", "the core Queue's forgetKey(key)"),
  h("Worker options", "connection", "connect(), once per Worker"),
  h("Worker options", "concurrency", "concurrency"),
  h("Worker options", "limiter", "{ max, duration }: the queue's rate, kept on the server for every worker"),
  h("Worker options", "autorun", "false: nothing runs until run()"),
  h("Worker options", "lockDuration", "leaseMs (renewed every third of it)"),
  h("Worker options", "stalledInterval", "reapEveryMs"),
  h(
    "Worker options",
    "removeOnComplete",
    "keepCompleted: true → 0, a number → that many, { count, age } (age in seconds, swept by the worker)",
  ),
  h(
    "Worker options",
    "removeOnFail",
    "keepDead: true → 0, a number → that many, { count, age } (age in seconds, swept by the worker)",
  ),
  r(
    "Worker options",
    "maxStalledCount",
    "a job whose lease expires is taken back and uses an attempt: attempts bounds it",
  ),
  r("Worker options", "lockRenewTime", "a lease is renewed every third of lockDuration"),
  r("Worker options", "drainDelay", "an idle worker waits on the queue's wake channel, not a timed poll"),
  r("Worker options", "prefix", "the keyspace is fixed (emq:{<queue>}:…): use another queue name"),
  h(
    "Worker options",
    "useWorkerThreads",
    "accepted: a processor file always runs in worker threads (there are no child processes)",
  ),
  r("Worker options", "settings", "custom backoff strategies: the core Worker's backoff function"),
  r("Worker options", "metrics", "EchoMQ's Metrics (Prometheus) and its dashboard"),
  r("Worker options", "skipStalledCheck", "every worker runs the reaper; set stalledInterval"),
  r("Worker options", "runRetryDelay", "a worker retries errors with its own backoff"),
  r("Worker options", "name", "the core connect()'s name option names the connection"),
  h(
    "Worker",
    "a processor file",
    "a path or file URL: each job runs in a worker thread of its own, the file's default export called with the job (updateProgress and log relayed)",
  ),
  h("Worker", "run", "starts a worker built with autorun: false; resolves when it closes"),
  h("Worker", "close", "stops claiming, waits for running jobs (5 s), hands the rest back"),
  h("Worker", "waitUntilReady", "resolves once connected and claiming"),
  h("Worker", "isRunning", "true between run() and close()"),
  h("Worker", "on('completed')", "(job, returnvalue)"),
  h("Worker", "on('failed')", "(job, error) on every failed attempt"),
  h("Worker", "on('active')", "(job, 'waiting')"),
  h("Worker", "on('progress')", "(job, progress), from this worker's jobs"),
  h("Worker", "on('error')", "(error)"),
  h("Worker", "on('drained')", "after a job settles, when no job waits"),
  h("Worker", "on('stalled')", "(jobId): a lease expired and the reaper took the job back"),
  h(
    "Worker",
    "throw UnrecoverableError",
    "the job fails at once, whatever attempts are left (the core's UnrecoverableError, exported here; BullMQ's is matched by its name)",
  ),
  r("Worker", "close(true)", "close() hands running jobs back after its grace; there is no forced close"),
  r("Worker", "pause", "queue.pause() stops every worker of the queue"),
  r("Worker", "resume", "queue.resume()"),
  r("Worker", "rateLimit", "the Worker's limiter"),
  r("Worker", "startStalledCheckTimer", "a worker's reaper runs by itself"),
  h("Job", "id", "EchoMQ's id (JOB + 11 characters), not the jobId given to add"),
  h(
    "Job",
    "name",
    "the row's name (the core's opts.name, a flow parent's and a schedule's jobs' too); '' for a core job without one",
  ),
  h(
    "Job",
    "data",
    "the payload as JSON, as the core's json serializer writes and reads it (job.data both ways)",
  ),
  h("Job", "opts", "the options given to add (read back from the row: attempts, priority, backoff)"),
  h("Job", "attemptsMade", "the row's attemptsMade: attempts ended (a running job's own not yet counted)"),
  h("Job", "attemptsStarted", "attempts started"),
  h("Job", "timestamp", "the creation time its id carries"),
  h(
    "Job",
    "processedOn",
    "when the current or last attempt's lease was granted (server ms: the row's processed_on, the claim's in a processor); undefined for a job never leased",
  ),
  h(
    "Job",
    "finishedOn",
    "a completed or failed job: when it finished (its score in done / dead); else undefined",
  ),
  h("Job", "returnvalue", "the processor's result (JSON)"),
  h("Job", "failedReason", "the failure's message"),
  h("Job", "stacktrace", "the latest failure's stack as one entry (a worker keeps 20 frames, 8 KiB)"),
  h("Job", "progress", "the latest updateProgress value"),
  h("Job", "updateProgress", "the row keeps it and the event bus announces it"),
  h("Job", "log", "a line on the job's log (its last 100 kept)"),
  h("Job", "remove", "queue.remove(job.id)"),
  h("Job", "retry", "a failed job back to waiting with one more attempt"),
  h("Job", "promote", "a delayed job runs now"),
  h(
    "Job",
    "getState",
    "its state in BullMQ's names (wait, prioritized, delayed, active, …), unknown when gone",
  ),
  h(
    "Job",
    "isCompleted",
    "getState() === 'completed' (isFailed, isActive, isDelayed, isWaiting, isWaitingChildren alike)",
  ),
  h(
    "Job",
    "waitUntilFinished",
    "(queueEvents, ttl): the return value, or rejects with the failure's message",
  ),
  h("Job", "getChildrenValues", "children's results by '<queue>:<id>' (no prefix)"),
  r(
    "Job",
    "updateProgress outside its processor",
    "only the worker holding the job's lease records progress: call it in the processor",
  ),
  r(
    "Job",
    "log outside its processor",
    "only the worker holding the job's lease writes the log: call it in the processor",
  ),
  h("Job", "updateData", "the core's updateData (UPDATE): any state, no lease token; later attempts read it"),
  h(
    "Job",
    "moveToDelayed",
    "in a processor, then throw DelayedError: delayed at the timestamp, lease released; the attempt counts toward attempts (BullMQ's does not)",
  ),
  r("Job", "moveToWaitingChildren", "add the children with the parent (FlowProducer)"),
  r("Job", "moveToCompleted", "return from the processor: the worker completes the job"),
  r("Job", "moveToFailed", "throw from the processor: the worker fails the job"),
  r("Job", "changeDelay", "remove the job and add it again with the new delay"),
  r("Job", "changePriority", "remove the job and add it again with the new priority"),
  r("Job", "extendLock", "the worker renews its lease every third of lockDuration"),
  h(
    "Job",
    "discard",
    "in the processor: its failure is final (thrown on as an UnrecoverableError, the failed event shows the error)",
  ),
  r("Job", "getDependencies", "getChildrenValues() (settled children) or the core Queue's getChildren()"),
  r("Job", "clearLogs", "a job keeps its last 100 log lines"),
  h("QueueEvents options", "connection", "connect(), once per QueueEvents"),
  h("QueueEvents options", "autorun", "false: nothing is read until run()"),
  h("QueueEvents options", "lastEventId", "lastEventId: resume after that entry"),
  h("QueueEvents options", "blockingTimeout", "blockMs"),
  r("QueueEvents options", "prefix", "the keyspace is fixed (emq:{<queue>}:…): use another queue name"),
  h("QueueEvents", "waiting", "{ jobId }: added, promoted, or back to waiting for a retry"),
  h(
    "QueueEvents",
    "added",
    "{ jobId }, for every add — delayed, or a flow's parent — (no name: the bus does not carry it)",
  ),
  h("QueueEvents", "active", "{ jobId, prev: 'waiting' }"),
  h("QueueEvents", "progress", "{ jobId, data }"),
  h(
    "QueueEvents",
    "completed",
    "{ jobId, returnvalue }: the result read from the row (absent when removeOnComplete deleted it)",
  ),
  h("QueueEvents", "failed", "{ jobId, failedReason }: the final failure (no retry left)"),
  h("QueueEvents", "delayed", "{ jobId, delay }: delay is the time it is due (ms since the epoch)"),
  h("QueueEvents", "stalled", "{ jobId }"),
  h("QueueEvents", "removed", "{ jobId }"),
  h("QueueEvents", "paused", "{}"),
  h("QueueEvents", "resumed", "{}"),
  h("QueueEvents", "cleaned", "{ count }"),
  h("QueueEvents", "waiting-children", "{ jobId }: a flow parent waits for its children"),
  h("QueueEvents", "error", "(error)"),
  h("QueueEvents", "close", "closes the reader and the connection it opened"),
  r("QueueEvents", "drained", "the Worker's drained event"),
  r("QueueEvents", "duplicated", "an add with a held jobId resolves with the first job; no event is written"),
  r(
    "QueueEvents",
    "deduplicated",
    "an add with a held jobId resolves with the first job; no event is written",
  ),
  r("QueueEvents", "retries-exhausted", "failed is written once, when no retry is left"),
  r("QueueEvents", "debounced", "an add with a held jobId resolves with the first job; no event is written"),
  h("FlowProducer options", "connection", "connect(), once per FlowProducer"),
  r("FlowProducer options", "prefix", "the keyspace is fixed (emq:{<queue>}:…): use another queue name"),
  h(
    "FlowProducer",
    "add",
    "{ name, queueName, data, opts, children }: the parent runs once every child has completed",
  ),
  h("FlowProducer", "addBulk", "add() for each flow"),
  h("FlowProducer", "close", "closes the connection it opened"),
  r("FlowProducer", "jobId in a flow", "a flow's jobs are added once each: keep the ids add() returns"),
  r("FlowProducer", "getFlow", "the core Queue's getJob() and getChildren()"),
];

/** The entry of `name` in `scope`, if the table has one. */
export function entryOf(scope: Scope, name: string): Entry | undefined {
  return NAMES.find((e) => e.scope === scope && e.name === name);
}
