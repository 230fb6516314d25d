#!/usr/bin/env bash
# Random secrets for docker-compose.yml under deploy/secrets/ (git-ignored), made once:
# an existing file is kept, so re-running never changes a password the volumes hold.
set -euo pipefail
cd "$(dirname "$0")/../deploy/secrets"
umask 077
if [ ! -s postgres-password ]; then
  head -c 24 /dev/urandom | base64 | tr -d '/+=' > postgres-password
  # read by the postgres and railyard containers' own (non-root) users
  chmod 0644 postgres-password
  echo "wrote deploy/secrets/postgres-password"
fi
