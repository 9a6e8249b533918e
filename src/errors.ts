/**
 * Every error EchoMQ throws is one of these classes. Each has a stable `code`, keeps the original
 * `cause`, and says what was wrong and what to do. They live in `src/errors/` by subject; this is
 * the one place that exports them all.
 */
export * from "./errors/arguments.js";
export * from "./errors/base.js";
export * from "./errors/cli.js";
export * from "./errors/connection.js";
export * from "./errors/jobs.js";
export * from "./errors/schedules.js";
export * from "./errors/server.js";
export * from "./errors/worker.js";
