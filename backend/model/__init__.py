"""The cluster model: snapshots as columns, their file formats and a generator."""
