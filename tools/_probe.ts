import { startCluster } from "./local-cluster.js";
const cluster = await startCluster({ primaries: 3, module: process.env.ECHOMQ_MODULE });
try {
  const [p0, p1] = cluster.primaries();
  console.log(await p0!.cli("EMQ.VERSION"));
  const t0 = Date.now();
  await cluster.migrateSlots(p0!, p1!, 0, 9);
  console.log("migrated in", Date.now() - t0, "ms");
  console.log(JSON.stringify(await p0!.cli("CLUSTER", "GETSLOTMIGRATIONS")));
  console.log(JSON.stringify(await p0!.cli("CLUSTER", "GETSLOTMIGRATIONS")));
} finally { await cluster.stop(); }
