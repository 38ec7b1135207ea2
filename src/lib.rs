//! Brewric: a time-series SQL database speaking the PostgreSQL wire protocol.

pub mod error;
pub mod exec;
pub mod types;
