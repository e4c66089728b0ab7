#!/usr/bin/env bash
# Offline stand-ins for the two public images the Dockerfile and docker-compose.yml name, for
# machines that reach Debian's mirrors and the npm registry but no image registry. For each of
# node:22-bookworm-slim and mysql:8.4: nothing if the image is present; else `docker pull`; only
# if that fails, build a stand-in under the very same name, so the Dockerfile, the compose file
# and the tests stay as they are. On a machine with a registry the real images are pulled.
#   node:22-bookworm-slim  Debian bookworm minbase + this machine's node (>= 20) and npm, user
#                          node (uid 1000), this machine's CA bundle (NODE_EXTRA_CA_CERTS).
#   mysql:8.4              Debian's MariaDB behind an entrypoint with the official image's
#                          interface (scripts/offline-images/mysql/docker-entrypoint.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_IMAGE=node:22-bookworm-slim
MYSQL_IMAGE=mysql:8.4
BASE_IMAGE=tablegate-offline/bookworm-minbase:latest
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
export DOCKER_BUILDKIT=0 # the stand-ins build with any engine, BuildKit or not

log() { printf 'offline-images: %s\n' "$*" >&2; }
present() { docker image inspect "$1" >/dev/null 2>&1; }
# True when the image is here, or could be pulled.
available() {
  present "$1" && return 0
  log "$1 is not here; trying docker pull"
  timeout 120 docker pull -q "$1" >/dev/null 2>&1
}
seconds() { echo $(($(date +%s) - $1)); }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Debian bookworm, minbase (what the -slim images are made of), with the sources the real
# images carry, so `apt-get install` works in images built on it.
base_image() {
  present "$BASE_IMAGE" && return 0
  command -v debootstrap >/dev/null || { log "needs debootstrap (apt-get install debootstrap)"; exit 1; }
  local started root=$work/rootfs
  started=$(date +%s)
  log "debootstrap --variant=minbase bookworm from $MIRROR"
  debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log" >&2
    exit 1
  }
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  # As in Debian's own container images (debuerreotype, the -slim variant): apt keeps no package
  # caches and no translations in image layers, dpkg installs no documentation.
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
  echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Acquire::GzipIndexes "true";' >"$root/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
  cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/info/*
path-exclude /usr/share/man/*
path-exclude /usr/share/locale/*
DPKG
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
    "$root"/usr/share/man/* "$root"/usr/share/info/*
  tar -C "$root" -c . | docker import -c 'CMD ["bash"]' - "$BASE_IMAGE" >/dev/null
  log "$BASE_IMAGE made in $(seconds "$started") s"
}

node_image() {
  available "$NODE_IMAGE" && return 0
  local started node npm_dir version ctx=$work/node
  started=$(date +%s)
  node=$(command -v node) || { log "needs node >= 20 on this machine"; exit 1; }
  version=$("$node" -p 'process.versions.node')
  [ "${version%%.*}" -ge 20 ] || { log "needs node >= 20 on this machine, found $version"; exit 1; }
  npm_dir="$("$node" -p 'require("path").dirname(require.resolve("npm/package.json", {paths: [process.argv[1]]}))' \
    "$(npm root -g 2>/dev/null)")"
  [ -f "$CA_BUNDLE" ] || { log "no CA bundle at $CA_BUNDLE"; exit 1; }
  base_image
  mkdir -p "$ctx"
  cp "$node" "$ctx/node"
  cp -a "$npm_dir" "$ctx/npm"
  cp "$CA_BUNDLE" "$ctx/ca-certificates.crt"
  cp scripts/offline-images/node.Dockerfile "$ctx/Dockerfile"
  log "building $NODE_IMAGE (stand-in: node $version, npm $(npm --version 2>/dev/null))"
  docker build -q --build-arg BASE="$BASE_IMAGE" --build-arg NODE_VERSION="$version" \
    -t "$NODE_IMAGE" "$ctx" >/dev/null
  log "$NODE_IMAGE made in $(seconds "$started") s"
}

mysql_image() {
  available "$MYSQL_IMAGE" && return 0
  local started
  started=$(date +%s)
  base_image
  log "building $MYSQL_IMAGE (stand-in: Debian's MariaDB)"
  docker build -q --build-arg BASE="$BASE_IMAGE" -t "$MYSQL_IMAGE" scripts/offline-images/mysql >/dev/null
  log "$MYSQL_IMAGE made in $(seconds "$started") s"
}

docker info >/dev/null 2>&1 || { log "no Docker engine answers (docker info)"; exit 2; }
case "${1:-all}" in
  node) node_image ;;
  mysql) mysql_image ;;
  all) node_image && mysql_image ;;
  *) log "usage: $0 [node|mysql|all]"; exit 2 ;;
esac
