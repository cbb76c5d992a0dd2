//! Builds the playground into `dist/`: the release wasm through wasm-bindgen and wasm-opt, plus
//! `index.html`, `style/` and the docs page (`docs/`, served at `/docs/`). Prints the bundle
//! size, raw and gzipped.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::setup::Tools;
use crate::{cargo, check, step};

/// Builds `dist/` from scratch.
pub fn build(root: &Path, tools: &Tools) -> Result<()> {
    step("building the playground (wasm, profile wasm-release: size-optimised, LTO)");
    cargo(&[
        "build",
        "--profile",
        "wasm-release",
        "--target",
        "wasm32-unknown-unknown",
        "-p",
        "tether-playground",
        "--bin",
        "tether-playground",
    ])?;
    let dist = root.join("dist");
    if dist.exists() {
        std::fs::remove_dir_all(&dist).context("cannot clear dist/")?;
    }
    let pkg = dist.join("pkg");
    let wasm = target_dir(root).join("wasm32-unknown-unknown/wasm-release/tether-playground.wasm");
    check(
        Command::new(&tools.wasm_bindgen)
            .args([
                "--target",
                "web",
                "--no-typescript",
                "--out-name",
                "tether_playground",
            ])
            .arg("--out-dir")
            .arg(&pkg)
            .arg(&wasm),
    )?;
    step("optimising with wasm-opt -Oz");
    let bg = pkg.join("tether_playground_bg.wasm");
    // The features rustc enables by default for wasm32-unknown-unknown; wasm-opt must accept them.
    check(
        Command::new(&tools.wasm_opt)
            .args([
                "-Oz",
                "--enable-bulk-memory",
                "--enable-mutable-globals",
                "--enable-nontrapping-float-to-int",
                "--enable-sign-ext",
                "--enable-reference-types",
                "--enable-multivalue",
            ])
            .arg(&bg)
            .arg("-o")
            .arg(&bg),
    )?;
    std::fs::copy(root.join("index.html"), dist.join("index.html")).context("copy index.html")?;
    copy_dir(&root.join("style"), &dist.join("style"))?;
    // The protocol walkthrough with live demos, served at /docs/.
    copy_dir(&root.join("docs"), &dist.join("docs"))?;
    let js = pkg.join("tether_playground.js");
    let (wasm_raw, wasm_gz) = sizes(&bg)?;
    let (js_raw, js_gz) = sizes(&js)?;
    step(&format!(
        "dist/ ready: wasm {} ({} gzipped), js {} ({} gzipped), total {} gzipped",
        kib(wasm_raw),
        kib(wasm_gz),
        kib(js_raw),
        kib(js_gz),
        kib(wasm_gz + js_gz)
    ));
    Ok(())
}

/// Where cargo puts its output: `CARGO_TARGET_DIR` when set (relative to the workspace root,
/// as cargo reads it), else `target/`.
fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("read {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Raw and gzip (level 9) sizes of a file, in bytes.
fn sizes(path: &Path) -> Result<(usize, usize)> {
    let bytes = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(&bytes)?;
    Ok((bytes.len(), encoder.finish()?.len()))
}

fn kib(bytes: usize) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}
