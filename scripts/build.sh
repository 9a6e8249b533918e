#!/usr/bin/env bash
# The package build (`npm run build`): dist/ from scratch.
#   * dist/src/      the ESM build (tsc -p tsconfig.build.json) with the files it reads at run
#                    time: the .lua scripts with their pieces (lib/) and the dashboard's assets;
#                    dist/protocol/ beside it (the pieces made from the protocol data read it)
#   * dist/cjs/src/  the CommonJS build of the five entries (tsc -p tsconfig.cjs.json), in a
#                    folder whose package.json says "type": "commonjs"; it compiles here.cjs.ts
#                    as its here.js, which points at dist/src/ for those files (one copy)
# No source maps: tsc's output is plain, unminified JavaScript, so a stack trace lands in a file
# the package ships.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf dist
npx tsc -p tsconfig.build.json
cp src/scripts/*.lua dist/src/scripts/
mkdir -p dist/src/scripts/lib && cp src/scripts/lib/*.lua dist/src/scripts/lib/
cp -r src/dashboard/public dist/src/dashboard/public
cp -r protocol dist/protocol
chmod +x dist/src/cli/main.js

npx tsc -p tsconfig.cjs.json
for ext in js d.ts; do mv "dist/cjs/src/here.cjs.$ext" "dist/cjs/src/here.$ext"; done
printf '{ "type": "commonjs" }\n' > dist/cjs/package.json
