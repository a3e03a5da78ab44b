//! Shared test support.
pub mod oracle;
pub mod tape;
