/**
 * `echomq/admin`: what an operator runs beside the applications — branding a node for the native
 * module (wire 6), finding the queues a server holds and the workers connected to it, and the dashboard. Applications use
 * `echomq`; the wire contract itself is `echomq/protocol`.
 */
export { installModuleBrand } from "./connector/install.js";
export { type Dashboard, type DashboardOptions, startDashboard } from "./dashboard/server.js";
export type { ListenOptions } from "./dashboard/guard.js";
export { listQueues, type Discovery, type QueueListing } from "./operate/discover.js";
export { listWorkers, type QueueWorkers, type WorkerInfo, workersPerQueue } from "./observe/workers.js";
