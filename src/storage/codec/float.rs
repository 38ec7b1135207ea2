//! Float column blocks (placeholder: being written on branch codec-float).
