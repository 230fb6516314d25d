#!/usr/bin/env bash
# Secrets for docker-compose.yml under deploy/secrets/ (git-ignored), made once: an
# existing file is kept, so re-running never changes a password the volumes hold.
# - postgres-password: the plan store's database password;
# - redis-password, redis.conf: the password Redis asks for (its requirepass) and the
#   config file that sets it;
# - users: "name role password" per line (an operator, an approver, an admin), the
#   sign-in passwords, for you and for `make e2e-compose`;
# - railyard.yaml: deploy/railyard/railyard.yaml plus an auth section listing those users
#   with password hashes (`railyard auth hash-password`), the config compose mounts.
# RAILYARD names the railyard command that hashes (default .venv/bin/railyard, else the
# railyard:latest image `docker compose build` makes).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${RAILYARD_SECRETS_DIR:-deploy/secrets}
mkdir -p "$out"
# only their owner (and dockerd, as root, mounting them) reaches the files: postgres-password
# and railyard.yaml are 0644 for the containers' users, not for the host's other users
chmod 0700 "$out"
random() { head -c 24 /dev/urandom | base64 | tr -d '/+=\n'; }
hash_password() {  # one line on stdin -> the hash
  local railyard=${RAILYARD:-.venv/bin/railyard}
  if [ -x "$railyard" ]; then
    "$railyard" auth hash-password
  else
    docker run --rm -i railyard:latest railyard auth hash-password  # `docker compose build` first
  fi | python3 -c 'import json, sys; print(json.load(sys.stdin)["password_hash"])'
}
if [ ! -s "$out/postgres-password" ]; then
  random > "$out/postgres-password"
  chmod 0644 "$out/postgres-password"  # read by the postgres and railyard containers' users
  echo "wrote $out/postgres-password"
fi
if [ ! -s "$out/redis-password" ]; then
  random > "$out/redis-password"
  chmod 0644 "$out/redis-password"  # read by the redis and railyard containers' users
  echo "wrote $out/redis-password"
fi
if [ ! -s "$out/redis.conf" ] || [ "$out/redis-password" -nt "$out/redis.conf" ]; then
  printf 'requirepass %s\n' "$(cat "$out/redis-password")" > "$out/redis.conf.tmp"
  chmod 0644 "$out/redis.conf.tmp"  # read by the redis container's user
  mv "$out/redis.conf.tmp" "$out/redis.conf"
  echo "wrote $out/redis.conf"
fi
if [ ! -s "$out/users" ]; then
  (umask 077; printf '%s\n' "olivia operator $(random)" "abel approver $(random)" \
    "ada admin $(random)" > "$out/users")
  echo "wrote $out/users (sign-in passwords)"
fi
if [ ! -s "$out/railyard.yaml" ] || [ "$out/users" -nt "$out/railyard.yaml" ] \
    || [ deploy/railyard/railyard.yaml -nt "$out/railyard.yaml" ]; then
  {
    cat deploy/railyard/railyard.yaml
    echo "auth:"
    echo "  users:"
    while read -r name role password; do
      echo "    - name: $name"
      echo "      role: $role"
      echo "      password_hash: \"$(printf '%s\n' "$password" | hash_password)\""
    done < "$out/users"
    echo "  secret_key_file: /opt/railyard/var/secret_key"
  } > "$out/railyard.yaml.tmp"
  chmod 0644 "$out/railyard.yaml.tmp"  # hashes only; read by the railyard containers
  mv "$out/railyard.yaml.tmp" "$out/railyard.yaml"
  echo "wrote $out/railyard.yaml"
fi
