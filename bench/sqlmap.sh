#!/usr/bin/env bash
# sqlmap against tablegate: the built gateway (dist/cli.js) on a fixture database, once
# in open mode and once in auth mode, each injection point marked with `*`:
#   every read option ($filter in a number and in a string context, after an unquoted datetime,
#   inside a function's column argument and after a function, $select, $orderby, $top, $skip,
#   $apply: groupby names, aggregate columns, methods and aliases, filter() values, compute()
#   columns, $orderby of an alias), the key and the value of update(<key>,<value>) and
#   delete(<key>,<value>) in the path,
#   the create body (JSON, every value), names in double quotes (a column with a space and one
#   with a dot, in $select, $filter, $orderby and an update key), a GeoJSON body for a spatial
#   column, and the login body (auth mode); then, in auth mode under
#   a --policy (docs/policies.md), a signed-in role's $filter, update value and create body on a
# table it
#   may see and change only where category eq 'books' (every other row must stay as it was), and
#   its totals ($apply) over those rows.
# sqlmap runs with --batch --level 3 --risk 2 --flush-session and writes to a temporary folder.
# Only http://127.0.0.1 is ever targeted: the gateway listens on 127.0.0.1 alone.
#
#   npm run build && bash bench/sqlmap.sh
#
# Environment: BENCH_DB_HOST/PORT/USER/PASSWORD (127.0.0.1, 3306, root, ''): a MySQL/MariaDB the
# fixture database `tablegate_sqlmap` is created in (and dropped after); SQLMAP_THREADS (4);
# SQLMAP_TARGETS (all; e.g. "filter-number,select"); BENCH_KEEP_TMP=1 keeps the sqlmap output.
# Prints one line per target and, at the end, `no injectable parameter found in N requests`
# (N: the gateway's own request log lines). Exit code 1 when sqlmap reports anything injectable
# or a target could not be tested.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="$ROOT/dist/cli.js"
DB_HOST="${BENCH_DB_HOST:-127.0.0.1}"
DB_PORT="${BENCH_DB_PORT:-3306}"
DB_USER="${BENCH_DB_USER:-root}"
DB_PASSWORD="${BENCH_DB_PASSWORD:-}"
DB_NAME=tablegate_sqlmap
THREADS="${SQLMAP_THREADS:-4}"
ONLY="${SQLMAP_TARGETS:-}"
EMAIL='sqlmap@example.com'
PASSWORD='sqlmap-password-1'

if [[ ! -f "$CLI" ]]; then
  echo "dist/cli.js is missing: run npm run build first" >&2
  exit 2
fi
if [[ -n "$(find "$ROOT/src" -newer "$CLI" -name '*.ts' -print -quit)" ]]; then
  echo "warning: src/ has changes newer than dist/: run npm run build to test them" >&2
fi

if ! command -v sqlmap > /dev/null; then
  echo "installing sqlmap (Debian package)…" >&2
  if [[ "$(id -u)" == 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y sqlmap > /dev/null
  else
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y sqlmap > /dev/null
  fi
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/tablegate-sqlmap.XXXXXX")"
PIDS=()
cleanup() {
  local status=$?
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2> /dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2> /dev/null || true
  done
  db "DROP DATABASE IF EXISTS $DB_NAME" > /dev/null 2>&1 || true
  if [[ -n "${BENCH_KEEP_TMP:-}" ]]; then
    echo "kept: $TMP" >&2
  else
    rm -rf "$TMP"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs SQL statements (one argument, `;`-separated) through mysql2 from the project.
db() {
  (cd "$ROOT" && SQL="$1" DB_HOST="$DB_HOST" DB_PORT="$DB_PORT" DB_USER="$DB_USER" \
    DB_PASSWORD="$DB_PASSWORD" node --input-type=module -e '
      import mysql from "mysql2/promise";
      const c = await mysql.createConnection({ host: process.env.DB_HOST, port: Number(process.env.DB_PORT),
        user: process.env.DB_USER, password: process.env.DB_PASSWORD, multipleStatements: true });
      const [result] = await c.query(process.env.SQL);
      const last = Array.isArray(result) && Array.isArray(result.at(-1)) ? result.at(-1) : result;
      if (Array.isArray(last)) for (const row of last) console.log(Object.values(row).join("\t"));
      await c.end();')
}

free_port() {
  node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# start_gateway <log file> [auth] → sets GATEWAY_PORT
start_gateway() {
  local log="$1"
  shift
  GATEWAY_PORT="$(free_port)"
  # A JWT secret is refused outside auth mode (it would say auth is on when it is not).
  local secret=()
  if [ "${1:-}" = auth ]; then secret=(TABLEGATE_JWT_SECRET="sqlmap-secret-sqlmap-secret-sqlmap-0123"); fi
  env HOME="$TMP/home" TABLEGATE_DB_PASSWORD="$DB_PASSWORD" "${secret[@]}" \
    node "$CLI" run "$@" -h "$DB_HOST" -u "$DB_USER" -P "$DB_PORT" -D "$DB_NAME" \
    -o "$GATEWAY_PORT" --listen-host 127.0.0.1 --log-level info --uploads-dir "$TMP/uploads" \
    > "$log" 2>&1 &
  PIDS+=("$!")
  for _ in $(seq 1 100); do
    grep -q 'tablegate listening' "$log" && return 0
    sleep 0.1
  done
  echo "tablegate did not start:" >&2
  tail -5 "$log" >&2
  exit 1
}

request_lines() {
  grep -c '"msg":"request"' "$1" || true
}

server_errors() {
  grep '"msg":"request"' "$1" | grep -cE '"status":5[0-9][0-9]' || true
}

mkdir -p "$TMP/home" "$TMP/uploads" "$TMP/out"
db "DROP DATABASE IF EXISTS $DB_NAME;
  CREATE DATABASE $DB_NAME CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
  USE $DB_NAME;
  CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL,
    category VARCHAR(20) NOT NULL, price DECIMAL(8,2) NOT NULL, note TEXT NULL,
    created_at DATETIME(3) NOT NULL DEFAULT '2024-01-01 00:00:00');
  INSERT INTO items (name, category, price, note, created_at)
    SELECT CONCAT('item ', seq), ELT(1 + seq % 3, 'books', 'games', 'tools'), seq * 1.25, NULL,
      '2024-01-01 00:00:00' + INTERVAL seq DAY FROM seq_1_to_20;
  CREATE TABLE places (id INT AUTO_INCREMENT PRIMARY KEY, \`zip code\` VARCHAR(10) NOT NULL,
    \`a.b\` INT NULL, spot POINT NULL);
  INSERT INTO places (\`zip code\`, \`a.b\`, spot) VALUES ('40301', 1, POINT(1, 2)),
    ('10115', 2, NULL);
  CREATE TABLE canary (id INT PRIMARY KEY, secret VARCHAR(50) NOT NULL);
  INSERT INTO canary VALUES (1, 'sqlmap must never read this');" > /dev/null
TABLES_BEFORE="$(db "SHOW FULL TABLES FROM $DB_NAME")"
CANARY_BEFORE="$(db "CHECKSUM TABLE $DB_NAME.canary")"

SQLMAP_ARGS=(--batch --level 3 --risk 2 --flush-session --threads "$THREADS" --ignore-proxy
  --skip-waf --disable-coloring --output-dir "$TMP/out")

TOTAL=0
FAILED=0
TESTED=0
SERVER_ERRORS=0

# target <name> <gateway log> <sqlmap arguments…>
target() {
  local name="$1" log="$2"
  shift 2
  if [[ -n "$ONLY" && ",$ONLY," != *",$name,"* ]]; then return 0; fi
  local before after out verdict
  before="$(request_lines "$log")"
  out="$TMP/$name.txt"
  # Only ever 127.0.0.1: every URL below is built from it.
  sqlmap "${SQLMAP_ARGS[@]}" "$@" > "$out" 2>&1 || true
  after="$(request_lines "$log")"
  local requests=$((after - before))
  TOTAL=$((TOTAL + requests))
  TESTED=$((TESTED + 1))
  # sqlmap's verdict is its last word: a candidate it then checks and rejects ("false positive or
  # unexploitable injection point detected") is counted, not a finding.
  local rejected
  rejected="$(grep -c 'false positive or unexploitable injection point' "$out" || true)"
  if grep -qE 'identified the following injection point|is vulnerable' "$out"; then
    verdict="INJECTABLE"
    FAILED=$((FAILED + 1))
  elif grep -q 'do not appear to be injectable' "$out"; then
    verdict="not injectable"
    if ((rejected > 0)); then verdict="$verdict ($rejected false positives rejected by sqlmap)"; fi
  else
    verdict="NOT TESTED ($(grep -E '\[(CRITICAL|ERROR)\]' "$out" | tail -1 | cut -c1-160))"
    FAILED=$((FAILED + 1))
  fi
  local errors
  errors="$(server_errors "$log")"
  if ((errors > SERVER_ERRORS)); then
    verdict="$verdict, $((errors - SERVER_ERRORS)) × 5xx"
    FAILED=$((FAILED + 1))
    SERVER_ERRORS="$errors"
  fi
  printf '%-16s %5d requests  %s; tested: %s\n' "$name" "$requests" "$verdict" \
    "$(grep -oE "testing for SQL injection on [^']*'[^']+'" "$out" | sed 's/testing for SQL injection on //' | sort -u | tr '\n' ' ')"
}

# ---- open mode ----
OPEN_LOG="$TMP/open.log"
start_gateway "$OPEN_LOG"
BASE="http://127.0.0.1:$GATEWAY_PORT"
JSON=(--headers 'Content-Type: application/json')

target filter-number "$OPEN_LOG" -u "$BASE/table/items/read?\$filter=id%20eq%201*"
target filter-string "$OPEN_LOG" -u "$BASE/table/items/read?\$filter=name%20eq%20'item%201*'"
target filter-datetime "$OPEN_LOG" \
  -u "$BASE/table/items/read?\$filter=created_at%20gt%202024-01-03T00:00:00.000Z*"
target filter-function "$OPEN_LOG" \
  -u "$BASE/table/items/read?\$filter=contains(tolower(name*),'item')"
target filter-fn-value "$OPEN_LOG" -u "$BASE/table/items/read?\$filter=year(created_at)%20eq%202024*"
target select "$OPEN_LOG" -u "$BASE/table/items/read?\$select=id,name*"
target orderby "$OPEN_LOG" -u "$BASE/table/items/read?\$orderby=price*%20desc"
target top "$OPEN_LOG" -u "$BASE/table/items/read?\$top=5*"
target skip "$OPEN_LOG" -u "$BASE/table/items/read?\$top=5&\$skip=2*"
# $apply (totals): a groupby name, an aggregate's column, method and alias, a filter() value, a
# compute() column, and $orderby over an alias.
APPLY="$BASE/table/items/read?\$apply="
target apply-groupby "$OPEN_LOG" -u "${APPLY}groupby((category*),aggregate(price%20with%20sum%20as%20total))"
target apply-column "$OPEN_LOG" -u "${APPLY}groupby((category),aggregate(price*%20with%20sum%20as%20total))"
target apply-method "$OPEN_LOG" -u "${APPLY}aggregate(price%20with%20average*%20as%20avg)"
target apply-alias "$OPEN_LOG" -u "${APPLY}aggregate(\$count%20as%20n*)"
target apply-filter "$OPEN_LOG" -u "${APPLY}filter(price%20gt%201*)/groupby((category))"
target apply-string "$OPEN_LOG" -u "${APPLY}filter(name%20eq%20'item%201*')/aggregate(\$count%20as%20n)"
target apply-compute "$OPEN_LOG" -u "${APPLY}compute(year(created_at*)%20as%20y)/groupby((y))"
target apply-orderby "$OPEN_LOG" \
  -u "${APPLY}groupby((category),aggregate(price%20with%20sum%20as%20total))&\$orderby=total*%20desc"
target update-key "$OPEN_LOG" --method PUT "${JSON[@]}" --data '{"note":"n"}' \
  -u "$BASE/table/items/update(name*,'no%20such%20item')"
target update-value "$OPEN_LOG" --method PUT "${JSON[@]}" --data '{"note":"n"}' \
  -u "$BASE/table/items/update(name,'no%20such%20item*')"
target delete-key "$OPEN_LOG" --method DELETE -u "$BASE/table/items/delete(id*,999999)"
target delete-value "$OPEN_LOG" --method DELETE -u "$BASE/table/items/delete(id,999999*)"
target create-body "$OPEN_LOG" --method POST "${JSON[@]}" -u "$BASE/table/items/create" \
  --data '{"name":"sqlmap*","category":"books*","price":"1.5*","note":"n*"}'
# Names in double quotes (docs/types.md) and GeoJSON bodies.
target quoted-select "$OPEN_LOG" -u "$BASE/table/places/read?\$select=id,%22zip%20code*%22"
target quoted-filter "$OPEN_LOG" \
  -u "$BASE/table/places/read?\$filter=%22zip%20code*%22%20eq%20'40301'%20and%20%22a.b%22%20ge%201*"
target quoted-orderby "$OPEN_LOG" -u "$BASE/table/places/read?\$orderby=%22a.b*%22%20desc"
target quoted-key "$OPEN_LOG" --method PUT "${JSON[@]}" --data '{"a.b":5}' \
  -u "$BASE/table/places/update(%22zip%20code*%22,'40301*')"
target geojson-body "$OPEN_LOG" --method POST "${JSON[@]}" -u "$BASE/table/places/create" \
  --data '{"zip code":"1*","spot":{"type":"Point*","coordinates":[1.5,-2]}}'

# ---- auth mode: the login body ----
AUTH_LOG="$TMP/auth.log"
start_gateway "$AUTH_LOG" auth
SERVER_ERRORS=0
AUTH_BASE="http://127.0.0.1:$GATEWAY_PORT"
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
  --data "{\"email\":\"$EMAIL\",\"password\":\"$PASSWORD\"}" "$AUTH_BASE/auth/register"
# A wrong password is a 401, and past 10 failures for one email a 429: answers, not errors.
target login-body "$AUTH_LOG" --method POST "${JSON[@]}" --ignore-code 401,429 -u "$AUTH_BASE/auth/login" \
  --data "{\"email\":\"$EMAIL*\",\"password\":\"$PASSWORD*\"}"
target register-body "$AUTH_LOG" --method POST "${JSON[@]}" -u "$AUTH_BASE/auth/register" \
  --data '{"email":"new@example.com*","password":"another-password*"}'

# ---- auth mode under a policy: the role sees and changes only the 'books' rows ----
cat > "$TMP/policy.json" << 'POLICY'
{ "roles": { "user": { "tables": { "items": {
  "read": { "where": "category eq 'books'", "columns": ["id", "name", "category", "price"] },
  "create": { "where": "category eq 'books'", "columns": ["name", "category", "price"] },
  "update": { "where": "category eq 'books'", "columns": ["price"] },
  "delete": false } } } } }
POLICY
outside() {
  db "SELECT COUNT(*), SUM(CRC32(CONCAT_WS('|', id, name, category, price, note)))
    FROM $DB_NAME.items WHERE category <> 'books'"
}
OUTSIDE_BEFORE="$(outside)"
POLICY_LOG="$TMP/policy.log"
start_gateway "$POLICY_LOG" auth --policy "$TMP/policy.json"
SERVER_ERRORS=0
POLICY_BASE="http://127.0.0.1:$GATEWAY_PORT"
TOKEN="$(curl -s -X POST -H 'Content-Type: application/json' \
  --data "{\"email\":\"$EMAIL\",\"password\":\"$PASSWORD\"}" "$POLICY_BASE/auth/login" |
  sed -E 's/.*"token":"([^"]+)".*/\1/')"
BEARER=(--headers "Authorization: Bearer $TOKEN")
POLICY_JSON=(--headers "Authorization: Bearer $TOKEN
Content-Type: application/json")
target policy-filter "$POLICY_LOG" "${BEARER[@]}" \
  -u "$POLICY_BASE/table/items/read?\$filter=name%20eq%20'item%203'*"
target policy-number "$POLICY_LOG" "${BEARER[@]}" -u "$POLICY_BASE/table/items/read?\$filter=id%20gt%201*"
target policy-apply "$POLICY_LOG" "${BEARER[@]}" \
  -u "$POLICY_BASE/table/items/read?\$apply=filter(name%20ne%20'item%203'*)/groupby((category),aggregate(price%20with%20sum%20as%20total))"
# 403 POLICY_VIOLATION for a row outside the where is an answer, not an error.
target policy-update "$POLICY_LOG" --method PUT "${POLICY_JSON[@]}" --ignore-code 403 \
  --data '{"price":"2.5*"}' -u "$POLICY_BASE/table/items/update(id,3*)"
target policy-create "$POLICY_LOG" --method POST "${POLICY_JSON[@]}" --ignore-code 403 \
  -u "$POLICY_BASE/table/items/create" --data '{"name":"sqlmap*","category":"books*","price":"1.5*"}'
OUTSIDE_AFTER="$(outside)"
if [[ "$OUTSIDE_AFTER" != "$OUTSIDE_BEFORE" ]]; then
  echo "POLICY BROKEN: rows outside the role's where changed ($OUTSIDE_BEFORE → $OUTSIDE_AFTER)" >&2
  FAILED=$((FAILED + 1))
fi
echo "policy: the rows outside the role's where are unchanged ($(tr '\t' ' ' <<< "$OUTSIDE_AFTER"))"

# ---- the database afterwards ----
TABLES_AFTER="$(db "SHOW FULL TABLES FROM $DB_NAME")"
CANARY_AFTER="$(db "CHECKSUM TABLE $DB_NAME.canary")"
ITEMS="$(db "SELECT COUNT(*) FROM $DB_NAME.items")"
EXPECTED_TABLES="$(printf '%s\n%s\n' "$TABLES_BEFORE" "users_created_by_tablegate	BASE TABLE" | sort)"
if [[ "$(sort <<< "$TABLES_AFTER")" != "$EXPECTED_TABLES" || "$CANARY_AFTER" != "$CANARY_BEFORE" ]]; then
  echo "DATABASE CHANGED: tables or the canary table differ" >&2
  FAILED=$((FAILED + 1))
fi
echo "database: same tables, canary table unchanged, items: 20 → $ITEMS rows (creates sqlmap sent with valid values)"

if ((FAILED > 0)); then
  echo "sqlmap: $FAILED of $TESTED targets injectable or not tested, in $TOTAL requests"
  exit 1
fi
echo "no injectable parameter found in $TOTAL requests ($TESTED targets)"
