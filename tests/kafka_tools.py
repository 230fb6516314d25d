"""Apache Kafka's own command-line tools, run from the jars `make install` fetched (the main
classes bin/kafka-configs.sh, kafka-reassign-partitions.sh and kafka-consumer-groups.sh
run), for side-by-side
tests against Railyard on the session's cluster."""

from __future__ import annotations

import subprocess

from backend.localkafka import dist

GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"  # kafka-consumer-groups


def kafka_tool(main_class: str, args: list[str], timeout: float = 120,
               check: bool = True) -> subprocess.CompletedProcess:
    """Run one of Kafka's tools (e.g. dist.CONFIGS, dist.REASSIGN); its stdout, stderr and
    exit code. ``check``: a non-zero exit fails with the tool's own output."""
    out = subprocess.run(dist.java_command(main_class, args, heap="256m"),
                         capture_output=True, text=True, timeout=timeout)
    if check and out.returncode != 0:
        raise AssertionError(f"{main_class} {' '.join(args)} exited {out.returncode}:\n"
                             f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


def kafka_configs(bootstrap: str, args: list[str], **kw) -> subprocess.CompletedProcess:
    """kafka-configs.sh --bootstrap-server BOOTSTRAP ARGS..."""
    return kafka_tool(dist.CONFIGS, ["--bootstrap-server", bootstrap, *args], **kw)


def kafka_reassign(bootstrap: str, args: list[str], **kw) -> subprocess.CompletedProcess:
    """kafka-reassign-partitions.sh --bootstrap-server BOOTSTRAP ARGS..."""
    return kafka_tool(dist.REASSIGN, ["--bootstrap-server", bootstrap, *args], **kw)


def kafka_group_lag(bootstrap: str, group: str, topic: str) -> int:
    """kafka-consumer-groups.sh --describe --group GROUP: the LAG column summed over
    ``topic``'s rows ("-": no committed offset, counted 0 as the tool shows no figure)."""
    out = kafka_tool(GROUPS, ["--bootstrap-server", bootstrap, "--describe",
                                   "--group", group]).stdout.splitlines()
    head = next(i for i, line in enumerate(out) if line.split()[:1] == ["GROUP"])
    cols = out[head].split()
    rows = [dict(zip(cols, line.split(), strict=False)) for line in out[head + 1:]
            if line.strip()]
    return sum(int(r["LAG"]) for r in rows if r["TOPIC"] == topic and r["LAG"] != "-")
