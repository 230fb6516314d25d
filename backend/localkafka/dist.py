"""Apache Kafka from Maven Central: where scripts/install.sh put its jars (deploy/kafka/pom.xml
names them), and the java command lines that run Kafka's own classes from them.

Kafka's bin/ scripts are thin wrappers around these main classes (bin/kafka-run-class.sh);
running the classes directly needs nothing but the jars and Java 17.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from backend.errors import Unavailable

KAFKA_VERSION = "4.1.1"  # deploy/kafka/pom.xml, deploy/kafka/Dockerfile, docker-compose.yml
JMX_EXPORTER_VERSION = "1.0.1"
ROOT = Path(__file__).resolve().parents[2]
HOME_ENV = "RAILYARD_KAFKA_HOME"  # overrides var/kafka/VERSION (a folder holding libs/)

# main classes of Kafka's bin/ scripts (bin/kafka-server-start.sh, kafka-storage.sh, ...)
BROKER = "kafka.Kafka"
STORAGE = "kafka.tools.StorageTool"
CONFIGS = "kafka.admin.ConfigCommand"
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"


def home() -> Path:
    """The folder whose libs/ holds Kafka's jars."""
    return Path(os.environ.get(HOME_ENV) or ROOT / "var" / "kafka" / KAFKA_VERSION)


def libs() -> Path:
    """libs/ with Kafka's jars; Unavailable (naming the fix) when they are not there."""
    found = home() / "libs"
    if not (found / f"kafka_2.13-{KAFKA_VERSION}.jar").is_file():
        raise Unavailable(f"Apache Kafka {KAFKA_VERSION}",
                          f"no jars in {found}: `make install` fetches them with Maven")
    return found


def jmx_agent() -> Path:
    return libs() / f"jmx_prometheus_javaagent-{JMX_EXPORTER_VERSION}.jar"


def java() -> str:
    found = shutil.which("java")
    if found is None:
        raise Unavailable("Java", "no `java` on PATH: `make install` installs Java 17")
    return found


def java_command(main_class: str, args: list[str], heap: str = "128m",
                 jvm: list[str] | None = None) -> list[str]:
    """``java`` running one of Kafka's main classes on the fetched jars, with a small heap
    (as bin/kafka-run-class.sh, without its 1 GB default)."""
    return [java(), f"-Xmx{heap}", f"-Xms{heap}", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true", *(jvm or []),
            "-cp", f"{libs()}/*", main_class, *args]
