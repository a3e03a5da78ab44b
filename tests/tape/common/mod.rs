//! Shared test support.
pub mod oracle;
pub mod programs;
pub mod tape;
