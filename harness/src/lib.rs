//! Tether's benchmarking harness: a load generator ([`load`], the `tether-load` binary) and a
//! user-space link emulator (the `tether-link` binary, a proxy over the `tether-link` crate's
//! link model, which the server applies too). See `harness/README.md`.

pub mod load;
pub mod procfs;
pub mod stats;
