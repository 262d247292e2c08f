"""Machine models as data (``*.toml``): every number carries the source it came from."""
