//! Boolean column blocks (placeholder: being written on branch codec-string).
