//! Variable-length (text/bytea) column blocks (placeholder: being written on branch codec-string).
