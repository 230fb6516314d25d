"""What a page or a CLI verb asks, composed from the model, engines and sources.

Pages and the CLI call services, nothing lower: results are plain dicts that serialise
to the CLI's JSON, so a page shows exactly what `railyard ...` prints.
"""
