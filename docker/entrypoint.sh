#!/bin/sh
# The image's entrypoint (run under tini): maps `docker run` arguments or TABLEGATE_* variables
# into one `tablegate` command line. The CLI itself reads the environment (a flag wins over it),
# so this only picks the command:
#   (no arguments)             tablegate run               everything from TABLEGATE_*
#   run …                      tablegate run …
#   auth … | -h … | --help     tablegate run auth … | tablegate run -h … | tablegate run --help
#   <a program in the image>   that program (sh, node, tablegate …), for debugging
#   anything else              tablegate <it>, which names what is wrong (exit 2)
# It also reads TABLEGATE_<NAME>_FILE (Docker and Kubernetes secrets mounted as files) into
# TABLEGATE_<NAME>, as the official mysql and postgres images do for their variables.
set -eu

for name in $(env | sed -n 's/^\(TABLEGATE_[A-Z0-9_]*\)_FILE=.*$/\1/p'); do
  # A line of a multi-line value can look like a name; printenv then finds no such variable.
  file=$(printenv "${name}_FILE") || continue
  if printenv "$name" >/dev/null; then
    echo "tablegate-entrypoint: both $name and ${name}_FILE are set; set only one" >&2
    exit 2
  fi
  if [ ! -r "$file" ]; then
    echo "tablegate-entrypoint: ${name}_FILE: cannot read $file" >&2
    exit 2
  fi
  # $(…) drops trailing newlines, as a secret file usually ends with one.
  value=$(cat -- "$file")
  export "$name=$value"
  unset "${name}_FILE"
done

if [ "$#" -eq 0 ]; then
  set -- run
fi
case "$1" in
  run) ;;
  auth | -*) set -- run "$@" ;;
  *)
    if command -v -- "$1" >/dev/null 2>&1; then
      exec "$@"
    fi
    ;;
esac
exec tablegate "$@"
