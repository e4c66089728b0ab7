#!/bin/bash
# Entrypoint of the mysql:8.4 stand-in (Debian's MariaDB), with the official image's interface:
# - MYSQL_ROOT_PASSWORD (or MYSQL_ALLOW_EMPTY_PASSWORD / MYSQL_RANDOM_ROOT_PASSWORD), MYSQL_ROOT_HOST,
#   MYSQL_DATABASE, MYSQL_USER, MYSQL_PASSWORD, each also as *_FILE (read from that file);
# - on an empty /var/lib/mysql only: the system tables, the accounts and database above, then
#   /docker-entrypoint-initdb.d/*.sh|*.sql|*.sql.gz in name order (SQL into MYSQL_DATABASE),
#   run against a temporary server that listens on the socket only, as the official image does;
# - then the server runs in the foreground as PID 1 (user mysql), ends cleanly on SIGTERM, and
#   logs "ready for connections" to stderr; arguments starting with '-' go to the server.
set -eo pipefail

log() { printf '%s [Entrypoint]: %s\n' "$(date -u +%FT%TZ)" "$*"; }
die() { log "ERROR: $*" >&2; exit 1; }

# file_env VAR: VAR, or the content of the file named by VAR_FILE (not both).
file_env() {
  local var=$1 file_var="${1}_FILE" default=${2:-}
  if [ -n "${!var:-}" ] && [ -n "${!file_var:-}" ]; then
    die "both $var and $file_var are set (but are exclusive)"
  fi
  local value=$default
  if [ -n "${!var:-}" ]; then value=${!var}; elif [ -n "${!file_var:-}" ]; then value=$(<"${!file_var}"); fi
  export "$var"="$value"
  unset "$file_var"
}

# SQL string and identifier literals.
sql_string() { local s=${1//\\/\\\\}; printf "'%s'" "${s//\'/\\\'}"; }
sql_name() { printf '`%s`' "${1//\`/\`\`}"; }

if [ "${1:0:1}" = '-' ]; then set -- mysqld "$@"; fi
case "$1" in mysqld | mariadbd) ;; *) exec "$@" ;; esac
shift
set -- /usr/sbin/mariadbd --user=mysql "$@"

datadir=/var/lib/mysql
socket=/run/mysqld/mysqld.sock
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld "$datadir"

if [ ! -d "$datadir/mysql" ]; then
  for v in MYSQL_ROOT_PASSWORD MYSQL_ROOT_HOST MYSQL_DATABASE MYSQL_USER MYSQL_PASSWORD; do file_env "$v"; done
  : "${MYSQL_ROOT_HOST:=%}"
  if [ -z "$MYSQL_ROOT_PASSWORD" ] && [ -z "${MYSQL_ALLOW_EMPTY_PASSWORD:-}" ] && [ -z "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
    die "Database is uninitialized and password option is not specified
    You need to specify one of the following as an environment variable:
    - MYSQL_ROOT_PASSWORD
    - MYSQL_ALLOW_EMPTY_PASSWORD
    - MYSQL_RANDOM_ROOT_PASSWORD"
  fi
  if [ "$MYSQL_USER" = root ]; then
    die "MYSQL_USER=\"root\", MYSQL_USER and MYSQL_PASSWORD are for configuring a regular user and cannot be used for the root user"
  fi
  if [ -n "$MYSQL_USER" ] && [ -z "$MYSQL_PASSWORD" ]; then
    log "Warning: MYSQL_USER has been specified without MYSQL_PASSWORD, no user will be created"
  fi
  if [ -n "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
    MYSQL_ROOT_PASSWORD=$(head -c 24 /dev/urandom | base64)
    log "GENERATED ROOT PASSWORD: $MYSQL_ROOT_PASSWORD"
  fi

  log "Initializing database files"
  mariadb-install-db --user=mysql --datadir="$datadir" --auth-root-authentication-method=normal \
    --skip-test-db --skip-name-resolve >/dev/null
  log "Database files initialized"

  log "Starting temporary server"
  "$@" --skip-networking --socket="$socket" &
  pid=$!
  for _ in $(seq 1 60); do
    mariadb-admin --socket="$socket" -uroot ping >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || die "Unable to start server."
    sleep 1
  done
  mariadb-admin --socket="$socket" -uroot ping >/dev/null 2>&1 || die "Unable to start server."
  log "Temporary server started."

  root_client=(mariadb --protocol=socket --socket="$socket" -uroot)
  {
    echo "SET @@SESSION.SQL_LOG_BIN=0;"
    # Only root@localhost and MariaDB's system account stay, as in the official image.
    echo "DELETE FROM mysql.global_priv WHERE User NOT IN ('mariadb.sys') AND NOT (User='root' AND Host='localhost');"
    echo "DELETE FROM mysql.proxies_priv WHERE NOT (User='root' AND Host='localhost');"
    echo "FLUSH PRIVILEGES;"
    echo "ALTER USER 'root'@'localhost' IDENTIFIED BY $(sql_string "$MYSQL_ROOT_PASSWORD");"
    if [ "$MYSQL_ROOT_HOST" != localhost ]; then
      echo "CREATE USER 'root'@$(sql_string "$MYSQL_ROOT_HOST") IDENTIFIED BY $(sql_string "$MYSQL_ROOT_PASSWORD");"
      echo "GRANT ALL ON *.* TO 'root'@$(sql_string "$MYSQL_ROOT_HOST") WITH GRANT OPTION;"
    fi
    if [ -n "$MYSQL_DATABASE" ]; then
      log "Creating database $MYSQL_DATABASE" >&2
      echo "CREATE DATABASE IF NOT EXISTS $(sql_name "$MYSQL_DATABASE");"
    fi
    if [ -n "$MYSQL_USER" ] && [ -n "$MYSQL_PASSWORD" ]; then
      log "Creating user $MYSQL_USER" >&2
      echo "CREATE USER $(sql_string "$MYSQL_USER")@'%' IDENTIFIED BY $(sql_string "$MYSQL_PASSWORD");"
      if [ -n "$MYSQL_DATABASE" ]; then
        log "Giving user $MYSQL_USER access to schema $MYSQL_DATABASE" >&2
        echo "GRANT ALL ON $(sql_name "$MYSQL_DATABASE").* TO $(sql_string "$MYSQL_USER")@'%';"
      fi
    fi
    echo "FLUSH PRIVILEGES;"
  } | "${root_client[@]}"

  # From here root has its password; the init scripts get it the way the official image gives it.
  export MYSQL_PWD=$MYSQL_ROOT_PASSWORD
  sql_client=("${root_client[@]}")
  [ -n "$MYSQL_DATABASE" ] && sql_client+=(--database="$MYSQL_DATABASE")
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh)
        if [ -x "$f" ]; then log "$0: running $f"; "$f"; else log "$0: sourcing $f"; . "$f"; fi ;;
      *.sql) log "$0: running $f"; "${sql_client[@]}" <"$f" ;;
      *.sql.gz) log "$0: running $f"; gunzip -c "$f" | "${sql_client[@]}" ;;
      *.sql.xz) log "$0: running $f"; xzcat "$f" | "${sql_client[@]}" ;;
      *) [ -e "$f" ] && log "$0: ignoring $f" ;;
    esac
  done
  unset MYSQL_PWD

  log "Stopping temporary server"
  kill -TERM "$pid"
  wait "$pid" || die "the temporary server did not stop cleanly"
  log "Temporary server stopped"
  log "MySQL init process done. Ready for start up."
fi

# PID 1 from here: mariadbd shuts down cleanly on SIGTERM.
exec "$@"
