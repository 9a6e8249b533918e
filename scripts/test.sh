#!/usr/bin/env bash
# The whole test suite: setup (idempotent), type check, lint, no import cycle, the protocol doc
# in step with the protocol data, the folder layering, the API report, the module's format check, clippy (warnings are errors) and
# cargo tests, the bench smoke run, and the TypeScript suite against real valkey-server processes
# (each test starts its own; the differential harness and the fault experiments run their short
# forms there).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "[test] typecheck"; npx tsc -p tsconfig.json --noEmit
echo "[test] lint"; npx biome check . >/dev/null || npx biome check .
echo "[test] import cycles"; npm run -s check:cycles > .cycles.log 2>&1 || { cat .cycles.log; exit 1; }
echo "[test] folder layering (scripts/layers.json)"; npx tsx scripts/layers.ts
echo "[test] API report (api/*.api.md) in step with the entries"; npx tsx scripts/api.ts --check
echo "[test] docs/protocol.md in step with protocol/"; npx tsx scripts/protocol-doc.ts --check
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
node --import tsx --test --test-concurrency=2 --test-timeout=600000 --test-force-exit --test-reporter=spec "${files[@]}"
