#!/usr/bin/env bash
# The prebuilt module's platform package from a local build: npm/<platform>/ with a package.json
# (name echomq-<platform>, the main package's version, os/cpu/libc so npm installs it only where
# it runs) and the .so. Once published, a release lists each as an optional dependency of echomq:
# npm installs the one that fits and skips the others (docs/module.md says why not before).
#   bash scripts/platform-packages.sh [--so <libechomq.so>] [--platform linux-x64-gnu|linux-arm64-gnu] [--out <dir>]
# Defaults: module/target/release/libechomq.so, this machine's platform, npm/. Publish with
#   (cd npm/linux-x64-gnu && npm publish)   # before or with the main package, same version
set -euo pipefail
cd "$(dirname "$0")/.."
so=module/target/release/libechomq.so
case "$(uname -m)" in
  x86_64) platform=linux-x64-gnu ;;
  aarch64 | arm64) platform=linux-arm64-gnu ;;
  *) platform="" ;;
esac
out=npm
while [ $# -gt 0 ]; do
  case "$1" in
    --so) so="$2"; shift 2 ;;
    --platform) platform="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "platform-packages: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$platform" in
  linux-x64-gnu) cpu=x64 ;;
  linux-arm64-gnu) cpu=arm64 ;;
  *) echo "platform-packages: no platform package for '$platform' (linux-x64-gnu or linux-arm64-gnu)" >&2; exit 2 ;;
esac
[ -f "$so" ] || { echo "platform-packages: $so is not there: build it (cd module && cargo build --release)" >&2; exit 1; }
version=$(node -p 'require("./package.json").version')
dir="$out/$platform"
rm -rf "$dir" && mkdir -p "$dir"
cp "$so" "$dir/libechomq.so"
cp LICENSE "$dir/LICENSE"
cat > "$dir/package.json" <<JSON
{
  "name": "echomq-$platform",
  "version": "$version",
  "description": "EchoMQ's native Valkey module (wire 6), prebuilt for $platform",
  "license": "MIT",
  "os": ["linux"],
  "cpu": ["$cpu"],
  "libc": ["glibc"],
  "files": ["libechomq.so", "LICENSE"]
}
JSON
echo "$dir"
