#!/usr/bin/env bash
# `npm run test:container`: the image, compose and the integration flows on a real Docker engine
# (CI runs it after `npm test`; see README "Run with Docker"). In order, each part timed:
#   images      node:22-bookworm-slim and mysql:8.4 present, pulled, or offline stand-ins
#               (scripts/offline-images.sh, for machines that reach no image registry);
#   build       the Dockerfile with BuildKit and with the classic builder; size; the run stage
#               holds dist/ and production dependencies only;
#   hardened    the image run as deploy/ runs it (read-only root, tmpfs /tmp, uid 1000, no
#               capabilities, no-new-privileges, secrets as TABLEGATE_*_FILE) in auth mode:
#               healthy within its start period, the API flows, uploads surviving a re-created
#               container, `docker stop` during a slow request (it finishes; exit code 0);
#   compose     `cp .env.example .env && docker compose up --build` and the README walk-through
#               as printed (test/container/readme-walkthrough.mjs), restart keeps rows and
#               uploads, `down -v` removes them; Compose v2, else v1 (`docker-compose`);
#   kubernetes  deploy/'s Deployment turned into a `docker run` (test/container/deploy-run.mjs);
#   demo        `tablegate demo` with no mariadbd or mysqld (hidden in a mount namespace): the
#               database in a mysql:8.4 container, removed on Ctrl-C (test/container/demo-container.mjs);
#   testcontainers  the read/filter/write/upload/auth integration tests on a mysql:8.4 container.
# Needs port 8080 of 127.0.0.1 free (compose publishes it). Everything it starts is removed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

fail() {
  echo "test-container: FAILED: $*" >&2
  exit 1
}
expect_equal() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }
expect_contains() {
  case "$1" in
    *"$2"*) ;;
    *) fail "expected '$2' in: $1" ;;
  esac
}

timings=()
part=''
part_started=0
finish_part() {
  if [ -n "$part" ]; then timings+=("$(printf '%-15s %4d s' "$part" $(($(date +%s) - part_started)))"); fi
  part=''
}
begin() {
  finish_part
  part=$1
  part_started=$(date +%s)
  printf '\n== %s: %s\n' "$1" "$2"
}

docker info >/dev/null 2>&1 || {
  echo "test-container: no Docker engine answers (docker info); nothing was tested" >&2
  exit 2
}
if docker compose version >/dev/null 2>&1; then compose_v2=1; else compose_v2=0; fi
[ "$compose_v2" = 1 ] || command -v docker-compose >/dev/null ||
  fail "needs Docker Compose: v2 (docker compose) or v1 (docker-compose)"
if curl -s -o /dev/null --max-time 2 http://127.0.0.1:8080/; then
  fail "something already listens on 127.0.0.1:8080, which the compose file publishes"
fi

id=$$
image=tablegate:smoke
net=tablegate-smoke-$id
project=tablegate-smoke-$id
work=$(mktemp -d)
secrets=$work/secrets
started=$(date +%s)
cleanup() {
  status=$?
  if [ "$status" -ne 0 ]; then
    for c in "$net-app" "$net-db"; do docker logs --tail 60 "$c" 2>&1 | sed "s/^/[$c] /" >&2 || true; done
    [ -f "$work/compose-up.log" ] && tail -80 "$work/compose-up.log" | sed 's/^/[compose] /' >&2
  fi
  docker rm -f -v "$net-app" "$net-db" >/dev/null 2>&1 || true
  docker volume rm "$net-uploads" >/dev/null 2>&1 || true
  docker network rm "$net" >/dev/null 2>&1 || true
  if [ -d "$work/tablegate" ]; then
    (cd "$work/tablegate" && COMPOSE_PROJECT_NAME=$project compose_cli down -v --remove-orphans >/dev/null 2>&1) || true
  fi
  [ -n "${up_pid:-}" ] && kill "$up_pid" 2>/dev/null
  # The image compose built for the project (v1 and v2 name it differently).
  docker rmi "${project}_tablegate" "${project}-tablegate" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
compose_cli() { if [ "$compose_v2" = 1 ]; then docker compose "$@"; else docker-compose "$@"; fi; }

# Polls a container's health check; prints the seconds it took to become healthy.
wait_healthy() {
  local container=$1 limit=$2 since state
  since=$(date +%s)
  while :; do
    state=$(docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$container")
    [ "$state" = healthy ] && break
    [ "$(docker inspect -f '{{.State.Running}}' "$container")" = true ] || fail "$container stopped"
    [ $(($(date +%s) - since)) -lt "$limit" ] || fail "$container not healthy after $limit s ($state)"
    sleep 1
  done
  echo $(($(date +%s) - since))
}
# `healthy LABEL CONTAINER LIMIT [NOTE]`: waits, then says how long it took (a plain assignment,
# so that a failure inside the command substitution stops the script).
healthy() {
  local secs
  secs=$(wait_healthy "$2" "$3")
  echo "$1 healthy after $secs s${4:+ ($4)}"
}

begin images "node:22-bookworm-slim and mysql:8.4 (pulled, present, or offline stand-ins)"
bash scripts/offline-images.sh all
docker image ls --format '{{.Repository}}:{{.Tag}}  {{.Size}}' | grep -E '^(node:22-bookworm-slim|mysql:8.4) '

begin build "the Dockerfile with BuildKit, then with the classic builder"
# BuildKit: buildx where installed; else a Docker client older than 23 has BuildKit built in
# (Debian's docker.io does; a newer client without buildx would refuse DOCKER_BUILDKIT=1).
buildkit=''
if docker buildx version >/dev/null 2>&1; then
  buildkit='docker buildx build --load'
else
  for client in docker /usr/bin/docker; do
    version=$("$client" version -f '{{.Client.Version}}' 2>/dev/null) || continue
    if [ "${version%%.*}" -lt 23 ]; then
      buildkit="env DOCKER_BUILDKIT=1 $client build"
      break
    fi
  done
fi
[ -n "$buildkit" ] || fail "no Docker client here builds with BuildKit (install buildx)"
since=$(date +%s)
$buildkit -q -t "$image" . >/dev/null
echo "BuildKit ($buildkit): $(($(date +%s) - since)) s"
since=$(date +%s)
DOCKER_BUILDKIT=0 docker build -q -t "$image-classic" . >/dev/null
echo "classic builder (DOCKER_BUILDKIT=0): $(($(date +%s) - since)) s"
docker rmi "$image-classic" >/dev/null
size=$(docker image inspect -f '{{.Size}}' "$image")
echo "image size: $((size / 1000000)) MB ($(docker image ls --format '{{.Size}}' "$image"))"
expect_equal "$(docker run --rm --entrypoint id "$image" -u)" 1000 "uid"
# Read whole, then searched: `| grep -q` stops reading at the match, and under pipefail the
# writer's broken pipe failed the check now and then.
usage=$(docker run --rm "$image" --help) || fail "--help exits with an error"
grep -q 'tablegate run auth -h <host>' <<<"$usage" || fail "--help"
# The run stage: dist/ and the production install, nothing else of the repository. The source
# maps only name the TypeScript files (no sourcesContent), which stay out.
files=$(docker run --rm --entrypoint sh "$image" -c \
  'cd /app && find . -path ./node_modules -prune -o -type f -print | sort')
unexpected=$(printf '%s\n' "$files" | grep -v -E '^\./(package\.json|package-lock\.json|dist/.*\.js(\.map)?)$' || true)
[ -z "$unexpected" ] || fail "the run stage holds more than dist/*.js and package*.json: $unexpected"
docker run --rm --entrypoint sh "$image" -c '! grep -rl sourcesContent /app/dist' >/dev/null ||
  fail "a source map in dist/ carries the TypeScript source"
# Every package the lock file marks dev-only (a dev dependency or only needed by one) is absent.
node -e 'const l=require("./package-lock.json");for(const [p,v] of Object.entries(l.packages))if(v.dev&&p)console.log(p)' \
  >"$work/dev-packages"
present=$(docker run --rm -i --entrypoint sh "$image" -c \
  'cd /app && while read -r p; do [ -e "$p" ] && echo "$p"; done; true' <"$work/dev-packages")
[ -z "$present" ] || fail "dev-only packages in the image: $present"
production=$(node -p 'Object.keys(require("./package.json").dependencies).join(" ")')
missing=$(docker run --rm --entrypoint sh "$image" -c \
  "for d in $production; do [ -e /app/node_modules/\$d/package.json ] || echo \$d; done")
[ -z "$missing" ] || fail "production dependencies missing: $missing"
echo "run stage: $(printf '%s\n' "$files" | wc -l) files besides node_modules (dist/*.js and maps, package*.json); none of the lock file's $(wc -l <"$work/dev-packages") dev-only packages; no source"

begin hardened "run as deploy/ runs it, in auth mode, secrets as files"
mkdir -p "$secrets"
printf 'root-%s' "$id" >"$secrets/mysql_root_password"
printf 'db-password-%s' "$id" >"$secrets/db_password"
printf 'jwt-secret-%s-0123456789abcdef0123456789' "$id" >"$secrets/jwt_secret"
chmod 0755 "$secrets" && chmod 0444 "$secrets"/*
docker network create "$net" >/dev/null
docker run -d --name "$net-db" --network "$net" --network-alias db \
  -e MYSQL_ROOT_PASSWORD_FILE=/run/secrets/mysql_root_password -e MYSQL_DATABASE=shop \
  -e MYSQL_USER=tablegate -e MYSQL_PASSWORD_FILE=/run/secrets/db_password \
  -v "$secrets:/run/secrets:ro" -v "$repo/docker/initdb:/docker-entrypoint-initdb.d:ro" \
  --health-cmd 'mysqladmin ping --protocol=tcp -h 127.0.0.1 --silent' --health-interval 2s \
  --health-retries 90 mysql:8.4 >/dev/null
healthy mysql:8.4 "$net-db" 180
# Configured by TABLEGATE_* variables, or by the arguments given; the secrets always from files.
run_app() {
  local config=()
  [ $# -gt 0 ] || config=(-e TABLEGATE_AUTH=true -e TABLEGATE_DB_HOST=db -e TABLEGATE_DB_PORT=3306
    -e TABLEGATE_DB_USER=tablegate -e TABLEGATE_DB_NAME=shop)
  docker run -d --name "$net-app" --network "$net" \
    --read-only --tmpfs /tmp --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges \
    -v "$net-uploads:/home/node/.tablegate/uploads" -v "$secrets:/run/secrets:ro" "${config[@]}" \
    -e TABLEGATE_DB_PASSWORD_FILE=/run/secrets/db_password \
    -e TABLEGATE_JWT_SECRET_FILE=/run/secrets/jwt_secret \
    -p 127.0.0.1::8080 "$image" "$@" >/dev/null
  # The image's HEALTHCHECK: --start-period=30s; its first check runs after --interval=15s.
  healthy tablegate "$net-app" 35 "start period 30 s"
  base="http://$(docker port "$net-app" 8080/tcp | head -1)"
}
run_app
expect_equal "$(curl -sS "$base/health")" '{"status":"ok"}' "health"
account='{"email":"grace@example.com","password":"correct horse battery"}'
expect_equal "$(curl -sS -X POST "$base/auth/register" -H 'Content-Type: application/json' -d "$account")" \
  '{"success":true,"message":"User register succesful"}' "register"
token=$(curl -sS -X POST "$base/auth/login" -H 'Content-Type: application/json' -d "$account" |
  node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).token))')
auth=(-H "Authorization: Bearer $token")
expect_equal "$(curl -sS -o /dev/null -w '%{http_code}' "$base/table/customers/read")" 401 "read without a token"
created=$(curl -sS -X POST "$base/table/customers/create" "${auth[@]}" -H 'Content-Type: application/json' \
  -d '{"name":"Margaret Hamilton","email":"margaret@example.com","city":"Boston"}')
expect_contains "$created" '"success":true,"message":"Data inserted successfully"'
# shellcheck disable=SC2016 # $filter and $select are query options, not shell variables.
expect_equal "$(curl -sS "${auth[@]}" "$base/table/customers/read?\$filter=email+eq+%27margaret@example.com%27&\$select=name,city")" \
  '[{"name":"Margaret Hamilton","city":"Boston"}]' "read with \$filter"
head -c 300000 /dev/urandom >"$work/upload.bin"
uploaded=$(curl -sS "${auth[@]}" -F "files=@$work/upload.bin" "$base/upload")
stored=$(printf '%s' "$uploaded" | sed -E 's/.*"accessURL":"[^"]*\/@\/([^"]+)".*/\1/')
[ -n "$stored" ] && [ "$stored" != "$uploaded" ] || fail "upload: $uploaded"
curl -sS -f "${auth[@]}" "$base/@/$stored" -o "$work/download.bin"
cmp -s "$work/upload.bin" "$work/download.bin" || fail "the downloaded file differs from the upload"
echo "register, login, create, read with \$filter, upload and download: ok"
docker rm -f "$net-app" >/dev/null
run_app run auth -h db -u tablegate -P 3306 -D shop -o 8080
curl -sS -f "${auth[@]}" "$base/@/$stored" -o "$work/download.bin"
cmp -s "$work/upload.bin" "$work/download.bin" || fail "the upload did not survive a re-created container"
echo "the upload and the token survive a re-created container on the same volume (configured by arguments): ok"
# A request that takes 3 s in MySQL; SIGTERM arrives 1 s into it.
docker exec "$net-db" sh -c 'mysql -uroot -p"$(cat /run/secrets/mysql_root_password)" shop \
  -e "CREATE VIEW slow_answer AS SELECT SLEEP(3) AS slept"'
curl -sS "${auth[@]}" -o "$work/slow.json" -w '%{http_code}' "$base/table/slow_answer/read" >"$work/slow.code" &
curl_pid=$!
sleep 1
since=$(date +%s)
docker stop -t 20 "$net-app" >/dev/null
stop_took=$(($(date +%s) - since))
wait "$curl_pid" || fail "the slow request failed during docker stop"
expect_equal "$(cat "$work/slow.code") $(cat "$work/slow.json")" '200 [{"slept":0}]' "slow request during docker stop"
expect_equal "$(docker inspect -f '{{.State.ExitCode}}' "$net-app")" 0 "exit code after docker stop"
[ "$stop_took" -lt 10 ] || fail "docker stop took $stop_took s"
echo "docker stop during a 3 s request: it finished (200), exit code 0, stop took $stop_took s"
docker rm -f -v "$net-app" "$net-db" >/dev/null
docker volume rm "$net-uploads" >/dev/null

begin compose "cp .env.example .env && docker compose up --build, as README.md prints it"
# A copy of the working tree, so the README's `cp .env.example .env` does not touch yours, in
# its own compose project (own containers and volumes).
mkdir "$work/tablegate"
git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$work/tablegate"
export COMPOSE_PROJECT_NAME=$project WALKTHROUGH_STATE=$work/walkthrough.env
readme_start=$(node test/container/readme-walkthrough.mjs start)
echo "$readme_start"
(
  cd "$work/tablegate"
  # The README's `docker compose`, as Compose v1 spells it where v2 is missing.
  docker() { if [ "$1" = compose ] && [ "$compose_v2" = 0 ]; then shift; docker-compose "$@"; else command docker "$@"; fi; }
  while IFS= read -r command; do
    case "$command" in
      *' up'*) eval "$command" </dev/null >"$work/compose-up.log" 2>&1 & echo $! >"$work/up.pid" ;;
      *) eval "$command" ;;
    esac
  done <<<"$readme_start"
)
up_pid=$(cat "$work/up.pid")
container_of() {
  local cid=''
  for _ in $(seq 1 120); do
    cid=$(cd "$work/tablegate" && compose_cli ps -q "$1" 2>/dev/null) && [ -n "$cid" ] && break
    sleep 1
  done
  [ -n "$cid" ] || fail "compose did not create $1"
  echo "$cid"
}
db_container=$(container_of db)
healthy db "$db_container" 240
app_container=$(container_of tablegate)
healthy tablegate "$app_container" 120
(cd "$work/tablegate" && node "$repo/test/container/readme-walkthrough.mjs")
# shellcheck source=/dev/null
. "$WALKTHROUGH_STATE"
expect_equal "$(curl -sS -H "Authorization: Bearer $TOKEN" "$URL")" 'hello from tablegate' "download"
(cd "$work/tablegate" && compose_cli restart tablegate)
app_container=$(container_of tablegate)
healthy "tablegate (restarted)" "$app_container" 60
# shellcheck disable=SC2016
expect_equal "$(curl -sS -H "Authorization: Bearer $TOKEN" 'http://localhost:8080/table/customers/read?$filter=name+eq+%27Ada+Lovelace%27&$select=email')" \
  '[{"email":"ada@example.com"}]' "the created row after restart"
expect_equal "$(curl -sS -H "Authorization: Bearer $TOKEN" "$URL")" 'hello from tablegate' "the upload after restart"
echo "docker compose restart tablegate: the row, the upload and the token are still there"
volumes=$(docker volume ls -q --filter "label=com.docker.compose.project=$project" | sort | tr '\n' ' ')
echo "volumes: $volumes"
[ -n "$volumes" ] || fail "no volumes for the compose project"
(cd "$work/tablegate" && compose_cli down -v)
for _ in $(seq 1 30); do kill -0 "$up_pid" 2>/dev/null || break; sleep 1; done
kill -0 "$up_pid" 2>/dev/null && fail "docker compose up did not end after down -v"
up_pid=''
left=$(docker volume ls -q --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || fail "down -v left volumes: $left"
left=$(docker ps -aq --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || fail "down -v left containers: $left"
echo "docker compose down -v: containers and volumes gone"
unset COMPOSE_PROJECT_NAME

begin kubernetes "deploy/'s Deployment as a docker run; the probes' URLs"
node test/container/deploy-run.mjs "$image"

begin demo "tablegate demo without mariadbd or mysqld: the database in a container"
[ -f dist/cli.js ] || npm run build
node test/container/demo-container.mjs

begin testcontainers "read/filter/write/upload/auth integration tests on mysql:8.4 from testcontainers"
[ -f dist/cli.js ] || npm run build
# Ryuk (the reaper container) would be pulled from a registry; global-teardown stops the
# container instead. --verbose names every test, skipped ones too.
TABLEGATE_TEST_MYSQL=container TESTCONTAINERS_RYUK_DISABLED=true npm run test:jest -- --verbose \
  test/integration/read.test.ts test/integration/filter-roundtrip.test.ts \
  test/integration/write.test.ts test/integration/upload.test.ts \
  test/integration/auth.test.ts test/integration/auth-limits.test.ts 2>&1 | tee "$work/jest.log" |
  grep -E '^tests: |○|✕|^Tests:|^Test Suites:|●' || true
grep -q '^Test Suites: .*failed' "$work/jest.log" && fail "integration tests on testcontainers"
grep -q '^Tests: .* passed' "$work/jest.log" || { tail -40 "$work/jest.log"; fail "the integration tests did not run"; }

finish_part
printf '\ntest-container: all passed in %d s\n' $(($(date +%s) - started))
printf '  %s\n' "${timings[@]}"
