//! Tether's benchmarking harness: a load generator ([`load`], the `tether-load` binary) and a
//! user-space link emulator ([`link`], the `tether-link` binary). See `harness/README.md`.

pub mod link;
pub mod load;
pub mod procfs;
pub mod stats;
