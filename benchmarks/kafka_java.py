"""Kafka's own placement in Java, in the same run as Railyard's: benchmarks/java holds a
transcription of AdminUtils.assignReplicasToBrokers; this compiles it with javac (Debian's
openjdk-17-jdk-headless, which `make bench` installs) and drives one JVM over stdin, so
the JIT stays warm between cases and the two sides can be timed alternately."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).parent / "java" / "AdminUtilsBench.java"


class KafkaJava:
    """A running JVM that places one case per call and answers (seconds, checksum)."""

    def __init__(self) -> None:
        if not shutil.which("javac"):
            raise RuntimeError("javac not found: `make bench` installs openjdk-17-jdk-headless")
        self._classes = tempfile.TemporaryDirectory(prefix="railyard-java-")
        subprocess.run(["javac", "-d", self._classes.name, str(SOURCE)], check=True)
        self._jvm = subprocess.Popen(["java", "-Xmx2g", "-cp", self._classes.name,
                                      "AdminUtilsBench"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def place(self, brokers: int, racks: int, partitions: int, rf: int, start: int,
              start_partition: int = 0) -> tuple[float, int]:
        assert self._jvm.stdin and self._jvm.stdout
        self._jvm.stdin.write(f"{brokers} {racks} {partitions} {rf} {start} "
                              f"{start_partition}\n")
        self._jvm.stdin.flush()
        nanos, checksum = self._jvm.stdout.readline().split()
        return int(nanos) / 1e9, int(checksum)

    def close(self) -> None:
        if self._jvm.stdin:
            self._jvm.stdin.close()
        self._jvm.wait(timeout=30)
        self._classes.cleanup()

    def __enter__(self) -> KafkaJava:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def checksum(broker_ids: np.ndarray, start_partition: int = 0) -> int:
    """The Java side's checksum of an assignment (partitions x RF broker ids, leader first)."""
    ids = np.asarray(broker_ids, dtype=np.int64)
    pid = np.arange(start_partition + 1, start_partition + 1 + len(ids), dtype=np.int64)
    position = np.arange(1, ids.shape[1] + 1, dtype=np.int64)
    return int((ids * position[None, :] * pid[:, None]).sum())
