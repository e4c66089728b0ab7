#!/usr/bin/env bash
# `npm run test:container`: builds the image and smoke-tests it, where a Docker engine with
# Compose v2 exists (our machines and CI have none; npm test checks what it can without one).
# It runs the README's "Run with Docker" walk-through against `docker compose up` with the values
# of .env.example, in its own compose project (own volumes), on port 8080 of 127.0.0.1, then:
# arguments instead of variables, a read-only root as non-root with no capabilities (as deploy/
# runs it), uploads and tokens surviving a restart, and a clean exit on SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "test-container: FAILED: $*" >&2
  exit 1
}
step() { printf '\n== %s\n' "$*"; }
expect_contains() {
  case "$1" in
    *"$2"*) ;;
    *) fail "expected '$2' in: $1" ;;
  esac
}

docker info >/dev/null 2>&1 || {
  echo "test-container: no Docker engine answers (docker info); nothing was tested" >&2
  exit 2
}
docker compose version >/dev/null 2>&1 || {
  echo "test-container: needs Docker Compose v2 (docker compose)" >&2
  exit 2
}

project="tablegate-smoke-$$"
image="tablegate:smoke"
base="http://localhost:8080"
work=$(mktemp -d)
compose() { docker compose -p "$project" --env-file .env.example "$@"; }
cleanup() {
  status=$?
  if [ "$status" -ne 0 ]; then
    compose logs --no-color --tail=80 >&2 || true
    docker logs "$project-args" >&2 2>&1 || true
  fi
  docker rm -f "$project-args" >/dev/null 2>&1 || true
  compose down -v --remove-orphans >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
set -a
# shellcheck source=/dev/null
. ./.env.example
set +a

step "docker build"
docker build -t "$image" .
[ "$(docker run --rm --entrypoint id "$image" -u)" = 1000 ] || fail "the image does not run as uid 1000"
docker run --rm "$image" --help | grep -q 'tablegate run auth -h <host>' || fail "--help"

step "docker compose up (waits for both health checks)"
compose up -d --build --wait --wait-timeout 240

step "README walk-through"
health=$(curl -fsS http://localhost:8080/health)
[ "$health" = '{"status":"ok"}' ] || fail "health: $health"
registered=$(curl -fsS -X POST http://localhost:8080/auth/register \
  -H 'Content-Type: application/json' \
  -d '{"email":"ada@example.com","password":"correct horse battery"}')
expect_contains "$registered" 'User register succesful'
TOKEN=$(curl -fsS -X POST http://localhost:8080/auth/login \
  -H 'Content-Type: application/json' \
  -d '{"email":"ada@example.com","password":"correct horse battery"}' |
  sed -E 's/.*"token":"([^"]+)".*/\1/')
# shellcheck disable=SC2016 # $filter and $orderby are query options, not shell variables.
products=$(curl -fsS -H "Authorization: Bearer $TOKEN" \
  'http://localhost:8080/table/products/read?$filter=category+eq+%27tea%27&$orderby=price+desc')
expect_contains "$products" '"name":"Earl Grey tea, 250 g","category":"tea","price":12.90'
created=$(curl -fsS -X POST http://localhost:8080/table/customers/create \
  -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"name":"Ada Lovelace","email":"ada@example.com","city":"London"}')
expect_contains "$created" '"message":"Data inserted successfully"'
printf 'hello from tablegate\n' >"$work/hello.txt"
uploaded=$(cd "$work" && curl -fsS -H "Authorization: Bearer $TOKEN" -F 'files=@hello.txt' \
  http://localhost:8080/upload)
URL=$(printf '%s' "$uploaded" | sed -E 's/.*"accessURL":"([^"]+)".*/\1/')
expect_contains "$URL" "$base/@/"
[ "$(curl -fsS -H "Authorization: Bearer $TOKEN" "$URL")" = 'hello from tablegate' ] ||
  fail "the uploaded file did not come back"
status=$(curl -s -o /dev/null -w '%{http_code}' http://localhost:8080/table/products/read)
[ "$status" = 401 ] || fail "a read without a token answered $status"

step "arguments instead of variables; read-only root, uid 1000, no capabilities, shared uploads"
docker run -d --name "$project-args" --network "${project}_default" \
  --read-only --tmpfs /tmp --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges \
  -v "${project}_uploads:/home/node/.tablegate/uploads" \
  -e TABLEGATE_DB_PASSWORD -e TABLEGATE_JWT_SECRET \
  "$image" run auth -h db -u tablegate -P 3306 -D shop -o 8080 >/dev/null
for _ in $(seq 1 60); do
  state=$(docker inspect -f '{{.State.Health.Status}}' "$project-args")
  [ "$state" = healthy ] && break
  [ "$(docker inspect -f '{{.State.Running}}' "$project-args")" = true ] || fail "it stopped"
  sleep 1
done
[ "$state" = healthy ] || fail "not healthy after 60 s: $state"
file=${URL##*/}
docker exec -e TOKEN="$TOKEN" -e FILE="$file" "$project-args" node -e "
  fetch('http://127.0.0.1:8080/@/' + process.env.FILE, { headers: { authorization: 'Bearer ' + process.env.TOKEN } })
    .then(async (r) => process.exit(r.ok && (await r.text()) === 'hello from tablegate\n' ? 0 : 1), () => process.exit(1))" ||
  fail "the second container did not serve the first one's upload with the first one's token"
docker stop -t 20 "$project-args" >/dev/null
[ "$(docker inspect -f '{{.State.ExitCode}}' "$project-args")" = 0 ] || fail "exit code after SIGTERM"

step "restart: the token and the upload survive"
compose restart tablegate
compose up -d --wait --wait-timeout 60
[ "$(curl -fsS -H "Authorization: Bearer $TOKEN" "$URL")" = 'hello from tablegate' ] ||
  fail "after a restart"

step "SIGTERM: exits 0, well before docker's 10 s SIGKILL"
started=$(date +%s)
compose stop tablegate
elapsed=$(($(date +%s) - started))
container=$(compose ps -a -q tablegate)
code=$(docker inspect -f '{{.State.ExitCode}}' "$container")
[ "$code" = 0 ] || fail "exit code $code after SIGTERM"
[ "$elapsed" -lt 10 ] || fail "stopping took ${elapsed} s"

printf '\ntest-container: all passed\n'
