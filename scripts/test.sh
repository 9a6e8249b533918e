#!/usr/bin/env bash
# The whole test suite: setup (idempotent), type check, lint, no import cycle, the protocol doc
# in step with the protocol data, the migration guide's table in step with src/bullmq/names.ts,
# the folder layering, the API report, no unused export, every relative doc link reaching its file and heading, the
# module's format check, clippy (warnings are errors) and cargo tests, the bench smoke run, and
# the TypeScript suite against real valkey-server processes (each test starts its own; the
# differential harness and the fault experiments run their short forms there) on Debian's
# Valkey 8; then a Valkey 9 pass (the pinned binary in .valkey9/) of the files where the server's
# version matters (docs/cluster.md, "Valkey 8 and Valkey 9").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "[test] typecheck"; npx tsc -p tsconfig.json --noEmit
echo "[test] lint"; npx biome check . >/dev/null || npx biome check .
echo "[test] import cycles"; npm run -s check:cycles > .cycles.log 2>&1 || { cat .cycles.log; exit 1; }
echo "[test] folder layering (scripts/layers.json)"; npx tsx scripts/layers.ts
echo "[test] API report (api/*.api.md) in step with the entries"; npx tsx scripts/api.ts --check
echo "[test] no unused export (each imported by another file, or public)"; npx tsx scripts/unused-exports.ts
echo "[test] docs/protocol.md in step with protocol/"; npx tsx scripts/protocol-doc.ts --check
echo "[test] docs/migrating-from-bullmq.md in step with src/bullmq/names.ts"; npx tsx scripts/bullmq-doc.ts --check
echo "[test] doc links (README.md, docs/, bench/README.md)"; npx tsx scripts/doc-links.ts
if [ -f module/Cargo.toml ]; then
  for tool in fmt clippy; do
    cargo "$tool" --version >/dev/null 2>&1 || rustup component add "$([ "$tool" = fmt ] && echo rustfmt || echo clippy)"
  done
  echo "[test] cargo fmt --check (module)"; (cd module && cargo fmt --check)
  echo "[test] cargo clippy (module)"; (cd module && cargo clippy --release --all-targets --quiet -- -D warnings)
  echo "[test] cargo test (module)"
  (cd module && cargo test --release --quiet > ../.cargo-test.log 2>&1) || { cat .cargo-test.log; exit 1; }
  tail -n 25 .cargo-test.log
fi
echo "[test] bench smoke (tiny sizes: every system must process every job)"
npm run -s bench:smoke > .bench-smoke.log 2>&1 || { cat .bench-smoke.log; exit 1; }
tail -n 3 .bench-smoke.log
echo "[test] node test suite"
mapfile -t files < <(find test -name '*.test.ts' | sort)
node --import tsx --test --test-concurrency=2 --test-timeout=600000 --test-reporter=spec "${files[@]}"
# Valkey 9: the job core on both wires, the module's blocking claim and server timers (the module
# API they use), a cluster on both wires (routing, redirects), atomic slot migration (9 only),
# the harness's short runs (single node, cluster, BCLAIM) and the cluster fault experiments
# (resharding both ways, failover). The rest does not depend on the server's version (the host's
# own logic, the CLI, the dashboard), and runs on 8 only.
v9=(env ECHOMQ_VALKEY_SERVER="$PWD/.valkey9/valkey-server")
echo "[test] Valkey 9 pass: $(.valkey9/valkey-server --version | cut -d" " -f3,5)"
v9_run() { "${v9[@]}" node --import tsx --test --test-concurrency=2 --test-timeout=600000 --test-reporter=spec "$@"; }
v9_run test/jobs.test.ts test/bclaim.test.ts test/module.timers.test.ts test/cluster-executors.test.ts \
  test/cluster.atomic.test.ts test/harness.bclaim.test.ts
v9_run --test-name-pattern='short run|^fault experiment: (resharding|failover)' \
  test/harness.test.ts test/harness.cluster.test.ts test/faults.test.ts
