#!/usr/bin/env bash
# Installs the Debian packages Tidemark needs and a deb-src entry derived from this machine's own
# Debian apt source, so `apt-get source` can fetch pinned engine sources. Idempotent: a second run
# that finds everything in place does no network work.
set -euo pipefail

APT_PACKAGES=(
  build-essential g++ cmake python3-venv python3-dev ninja-build ccache pkg-config dpkg-dev git
  libgflags-dev libsnappy-dev libzstd-dev liblz4-dev zlib1g-dev libbz2-dev
  libgtest-dev libgmock-dev libbenchmark-dev util-linux linux-perf valgrind hyperfine
  meson
  chromium chromium-driver docker.io
)
# Newer suites only as deb-src, for newer engine versions (conf/engine/rocksdb.yaml `versions`).
EXTRA_SRC_SUITES=(trixie sid)
SRC_LIST=/etc/apt/sources.list.d/tidemark-src.sources
STAMP=/var/lib/tidemark/apt-setup.stamp

need_sudo() { if [ "$(id -u)" -ne 0 ]; then echo sudo; fi; }
SUDO=$(need_sudo)

# The first Debian "deb" stanza's URI (deb822 or one-line format), whatever mirror this machine uses.
debian_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk '/^URIs:/ {print $2}' "$f"
  done | grep -v -- '-security' | grep '/debian' | head -n 1 && return 0
  grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | grep -v -- '-security' | awk '{for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' | head -n 1
}

write_deb_src() {
  local mirror codename keyring
  mirror=$(debian_mirror)
  if [ -z "$mirror" ]; then
    echo "tidemark setup: no Debian apt source found in /etc/apt; add one, then re-run 'make setup'" >&2
    exit 1
  fi
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  local suites want
  suites=$(printf '%s\n' "$codename" "${EXTRA_SRC_SUITES[@]}" | awk '!seen[$0]++' | xargs)
  want=$(printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
    "$mirror" "$suites" "$keyring")
  if [ ! -f "$SRC_LIST" ] || [ "$(cat "$SRC_LIST")" != "$want" ]; then
    echo "$want" | $SUDO tee "$SRC_LIST" >/dev/null
    $SUDO rm -f "$STAMP"
  fi
}

missing_packages() {
  local p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

write_deb_src
missing=$(missing_packages)
if [ -n "$missing" ] || [ ! -f "$STAMP" ]; then
  export DEBIAN_FRONTEND=noninteractive
  # Other engineers' setups may hold the dpkg lock: wait for it instead of failing.
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing
  fi
  $SUDO mkdir -p "$(dirname "$STAMP")"
  $SUDO touch "$STAMP"
fi

# runner=docker needs a daemon. There is no systemd here: start dockerd in the background when
# none answers, and leave it running for later commands (its log is in /var/log/dockerd.log).
if command -v dockerd >/dev/null && ! docker info >/dev/null 2>&1; then
  echo "tidemark setup: starting dockerd in the background (log: /var/log/dockerd.log)"
  $SUDO sh -c 'setsid nohup dockerd >>/var/log/dockerd.log 2>&1 </dev/null &'
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || echo "tidemark setup: dockerd did not answer within 30 s; see /var/log/dockerd.log (runner=docker will say so; runner=host is unaffected)" >&2
fi

# npm installs the site's DuckDB-WASM (package.json); a machine with its own Node.js keeps it
# (Debian's npm would conflict with a Node.js that bundles npm).
if ! command -v npm >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends nodejs npm
fi
