//! Vectorized kernels: operators, casts and scalar functions over columns.
