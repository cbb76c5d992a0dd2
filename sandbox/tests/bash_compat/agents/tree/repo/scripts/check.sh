#!/usr/bin/env bash
set -euo pipefail

echo "checking formatting"
cargo fmt --all -- --check
echo "running clippy"
cargo clippy --all-targets -- -D warnings
echo "running tests"
cargo test --workspace
