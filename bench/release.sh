#!/usr/bin/env bash
# What a change costs on the hot path, release against release: the same narrowed bench run on an
# earlier commit (a release) and on this tree, interleaved round by round on the same machine, so
# the load of the moment falls on both alike.
#
#   bash bench/release.sh <ref> [rounds] [-- bench flags…]
#   bash bench/release.sh v0.1.0 2 -- --only=echomq-w4,echomq-w6 --measures=process --jobs=20000
#
# The earlier tree is checked out outside this one (a detached git worktree under
# $ECHOMQ_RELEASE_DIR, default ${TMPDIR:-/tmp}/echomq-release, so no tool of this tree reads it), built
# (the package and, when its module/ has one, the module) and benched with this tree's
# node_modules. Each round runs the earlier tree first on odd rounds and this one first on even
# ones; every round's tables land in <that folder>/out/<round>-<tree>.md and the rows the two trees
# share are printed side by side at the end (medians over the rounds are left to the reader:
# with two rounds on a busy machine, compare only large gaps).
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:?usage: bash bench/release.sh <ref> [rounds] [-- bench flags…]}
shift
rounds=1
if [ $# -gt 0 ] && [ "$1" != "--" ]; then rounds=$1; shift; fi
[ "${1:-}" = "--" ] && shift
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(--only=echomq-w4,echomq-w6 --measures=process --jobs=20000 --persistence=none)
here=$PWD
base=${ECHOMQ_RELEASE_DIR:-${TMPDIR:-/tmp}/echomq-release}
tree=$base/$(git rev-parse --short "$ref")
out=$base/out
mkdir -p "$out"
if [ ! -d "$tree" ]; then
  git worktree add --detach "$tree" "$ref" >/dev/null
  ln -s "$here/node_modules" "$tree/node_modules"
fi
echo "[release] building $ref in $tree"
(cd "$tree" && npm run -s build >/dev/null)
if [ -f "$tree/module/Cargo.toml" ]; then
  [ -d "$tree/module/target" ] || { [ -d module/target ] && cp -r module/target "$tree/module/"; }
  (cd "$tree/module" && cargo build --release --quiet)
fi
npm run -s build >/dev/null
run() { # <round> <name> <dir>
  echo "[release] round $1: $2"
  (cd "$3" && npm run -s bench -- --rounds=1 "${flags[@]}" >/dev/null 2>"$out/$1-$2.log") ||
    { cat "$out/$1-$2.log"; exit 1; }
  cp "$3/bench/results/partial.md" "$out/$1-$2.md"
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then run "$r" release "$tree"; run "$r" this "$here"
  else run "$r" this "$here"; run "$r" release "$tree"; fi
done
for r in $(seq 1 "$rounds"); do
  echo; echo "## round $r: $ref (first line) vs this tree (second line)"
  grep '^| ' "$out/$r-release.md" | grep -v -- '---' | while IFS= read -r line; do
    label=${line%%|*}; label=$(cut -d'|' -f2 <<<"$line")
    [ -z "${label// /}" ] && continue
    other=$(grep -F -- "|$label|" "$out/$r-this.md" | head -1 || true)
    [ -n "$other" ] && printf '%s\n%s\n' "$line" "$other"
  done
done
