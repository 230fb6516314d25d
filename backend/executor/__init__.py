"""The executor: runs an approved plan through a ClusterGateway in throttled batches,
keeps its state in the store after every step, and leaves the cluster's throttle configs
as it found them (docs/executor.md)."""
