#!/bin/sh
# The Railyard image's entrypoint: the PostgreSQL password comes from a secret file into
# this process's environment only (libpq reads PGPASSWORD), never the config or a URL.
set -eu
if [ -n "${RAILYARD_PGPASSWORD_FILE:-}" ] && [ -r "$RAILYARD_PGPASSWORD_FILE" ]; then
  PGPASSWORD=$(head -n 1 "$RAILYARD_PGPASSWORD_FILE")
  export PGPASSWORD
fi
exec "$@"
