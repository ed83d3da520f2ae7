"""A pluggable blob layer: one abstract backend, a local-disk and an S3 implementation."""
