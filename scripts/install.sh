#!/usr/bin/env bash
# Installs everything Railyard needs on a fresh Debian machine: the Debian packages
# (when running as root) and the Python virtual environment at .venv/.
# Idempotent: re-running it only installs what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

# command-on-PATH -> Debian package that provides it
declare -A DEBS=(
  [java]=openjdk-17-jre-headless
  [mvn]=maven  # fetches Apache Kafka and the JMX exporter (deploy/kafka/pom.xml)
  [prometheus]=prometheus
  [promtool]=prometheus
  [chromium]=chromium
  [chromedriver]=chromium-driver
  [redis-server]=redis-server
  [pdftotext]=poppler-utils  # tests read the capacity and incident PDFs
  [/usr/lib/postgresql/*/bin/initdb]=postgresql
)
extras="[test]"
# the Docker image (Dockerfile) runs Railyard only: Java for the Spark driver, no test kit
if [ "${RAILYARD_IMAGE:-}" = 1 ]; then
  DEBS=([java]=openjdk-17-jre-headless)
  extras=""
fi
# `make bench` also compiles Kafka's placement in Java (benchmarks/java) to race it
if [ "${RAILYARD_BENCH:-}" = 1 ]; then
  DEBS[javac]=openjdk-17-jdk-headless
fi
missing=()
for cmd in "${!DEBS[@]}"; do
  # shellcheck disable=SC2086 # a path with a glob is checked by expansion
  command -v $cmd >/dev/null 2>&1 || missing+=("${DEBS[$cmd]}")
done
PY=${PYTHON:-python3}
# Debian's python3 makes venvs only with python3-venv (ensurepip) installed
if [ ! -x .venv/bin/python ] && ! "$PY" -c "import ensurepip, venv" >/dev/null 2>&1; then
  missing+=(python3-venv)
fi
if [ ${#missing[@]} -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if [ "$(id -u)" = 0 ]; then
    echo "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # the Debian package starts services we do not use; tests start their own on 127.0.0.1
    systemctl disable --now prometheus redis-server postgresql >/dev/null 2>&1 || true
  else
    echo "warning: not root, cannot install Debian packages: ${missing[*]}" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.railyard-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".${extras}"
  touch "$stamp"
fi

# Apache Kafka's broker and tools and the JMX exporter agent, from Maven Central into
# var/kafka/VERSION/libs (deploy/kafka/pom.xml pins the versions): `railyard kafka up`,
# `railyard demo --kafka` and the tests run them. Fetched again only when the pom changes.
if [ "${RAILYARD_IMAGE:-}" != 1 ]; then
  pom=deploy/kafka/pom.xml
  kafka_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
  kafka_home=var/kafka/$kafka_version
  if [ ! -f "$kafka_home/.fetched" ] || [ "$pom" -nt "$kafka_home/.fetched" ]; then
    echo "fetching Apache Kafka $kafka_version with Maven into $kafka_home/libs"
    rm -rf "$kafka_home/libs"
    mvn -q -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DoutputDirectory="$PWD/$kafka_home/libs"
    touch "$kafka_home/.fetched"
  fi
fi
