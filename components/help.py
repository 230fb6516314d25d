"""Short explanations of KIP terms, shown as tooltips next to the figures they explain."""

from __future__ import annotations

from dash import html

TERMS = {
    "max.broker.partitions": "KIP-578: the most partition replicas one broker may hold "
                             "(internal topics not counted). Creating or moving partitions "
                             "that would exceed it is refused.",
    "max.partitions": "KIP-578: the most partition replicas the whole cluster may hold.",
    "growth": "Capacity: extra growth you expect, a % of today's replica count each month, "
              "added on top of the trend measured from the history (0: the measured trend "
              "alone). From 0 to 1,000: a shrinking cluster is not forecast.",
    "headroom": "How many more replicas a broker can take before max.broker.partitions.",
    "under-replicated": "Partitions with fewer in-sync replicas than replicas.",
    "under-min-isr": "Partitions whose in-sync replicas are below min.insync.replicas: "
                     "producers with acks=all are refused.",
    "offline": "Partitions with no live leader: nobody can read or write them.",
    "throttle": "KIP-73: leader/follower.replication.throttled.rate caps the bytes/s a "
                "broker spends copying throttled replicas (reassignments).",
    "safe band": "KIP-73 Q&A 4: a throttle T is safe when BytesIn < T < N - BytesIn/R: "
                 "above the write rate so the move finishes, below the network left for "
                 "clients (N: each broker's network capacity).",
    "network capacity": "N, the bytes/s each broker's network carries each way. KIP-73's "
                        "safe band tops at N - BytesIn/R, and the suggested throttle "
                        "(kafka-kit's autothrottle) is 90% of what N leaves, at least "
                        "10 MB/s but never above N. No broker copies faster than N, so "
                        "the ETA of a throttle above N is N's. A plan's preview takes it "
                        "from the cluster's config, adaptive_throttle.network_capacity, as "
                        "the adaptive throttle does "
                        "(1 GbE, 125 MB/s, where the config sets none).",
    "eta": "Observed ETA: bytes still to copy over how fast they shrank in the last 2 "
           "minutes (a past window: over the copy rate, which also carries new writes, so "
           "the move may take longer). Predicted ETA: the throttle engine's estimate (KIP-73's "
           "maths) for what the new replicas still lack. On Apache Kafka expect 10-15% "
           "longer: a follower over its throttle waits replica.fetch.backoff.ms (1 s) "
           "before fetching again, so it sustains about 10/11 of the rate "
           "(docs/throttle.md).",
    "fetch size": "KIP-73 Q&A 5: replica.fetch.response.max.bytes must fit in one quota "
                  "window at the throttled rate, or throttled fetches time out.",
    "lag": "Replica lag: messages followers still have to fetch (FetcherLagMetrics "
           "ConsumerLag summed per broker).",
    "tokens": "KIP-599: each principal's token bucket. Creating or deleting partitions "
              "spends tokens; they refill at the quota rate up to the burst. Below zero "
              "the principal is throttled.",
    "burst": "KIP-599: burst = rate x controller.quota.window.num x window seconds.",
    "strict": "KIP-599 strict mode (current clients): a request arriving with negative "
              "tokens is rejected with THROTTLING_QUOTA_EXCEEDED.",
    "sweep ok": "Limit sweeps (KIP-578): every topic of the workload was created, as "
                "Kafka would place it under this row's limits. A broker already over "
                "max.broker.partitions keeps its partitions and takes no new one, so ok "
                "beside brokers over the limit is right: the workload went to the others.",
    "at limit": "A count: how many brokers have no room for one more replica under "
                "max.broker.partitions after the workload, at the limit or over it (the "
                "brokers over limit are among them).",
    "over limit": "Broker ids: the brokers holding more than max.broker.partitions after "
                  "the workload (they held more before it: KIP-578 lets a broker keep "
                  "what it has but gives it no new replica; a reassignment brings it "
                  "under). Not a failure of the row.",
    "outside safe band": "Broker ids: the throttled brokers whose KIP-73 safe band "
                         "(BytesIn < T < N - BytesIn/R) this row's throttle is outside.",
}


def term(label: str, key: str | None = None) -> html.Span:
    """``label`` with a dotted underline and its explanation as a tooltip."""
    return html.Span(label, title=TERMS[key or label], className="term", tabIndex=0)
