//! Installs whatever the build and the tests need and is missing, and nothing that is present:
//! the wasm32 target, wasm-bindgen-cli at the version `Cargo.lock` pins, the npm tools of
//! `package.json` (wasm-opt from the `binaryen` package — never Debian's binaryen, whose wasm-opt
//! 108 emits wasm that crashes in the browser — and playwright-core), for tests Debian's
//! Chromium and ChromeDriver, for fuzzing cargo-fuzz and a C++ compiler (libFuzzer's), for
//! the engine tests llmsim, an OpenAI-compatible server to put Tether in front of, for the
//! sandbox's bash comparison the commands its agent corpus runs in real bash (jq, rg, tree), and
//! for the sandbox's peers benchmark a runner of rust-bash (just-bash comes with the npm tools).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{cargo, check, output_of, step};

/// Paths of the tools later steps use.
pub struct Tools {
    pub wasm_bindgen: PathBuf,
    pub wasm_opt: PathBuf,
    pub chromium: Option<PathBuf>,
    pub chromedriver: Option<PathBuf>,
}

/// Ensures every tool is installed; with `browsers`, Chromium and ChromeDriver too.
pub fn ensure(root: &Path, browsers: bool) -> Result<Tools> {
    ensure_wasm_target()?;
    let wasm_bindgen = ensure_wasm_bindgen(root)?;
    let wasm_opt = ensure_npm_tools(root)?;
    let (chromium, chromedriver) = if browsers {
        let (chromium, driver) = ensure_browsers()?;
        (Some(chromium), Some(driver))
    } else {
        (None, None)
    };
    Ok(Tools {
        wasm_bindgen,
        wasm_opt,
        chromium,
        chromedriver,
    })
}

fn ensure_wasm_target() -> Result<()> {
    let installed = output_of(Command::new("rustup").args(["target", "list", "--installed"]));
    match installed {
        Some(list) if list.lines().any(|l| l.trim() == "wasm32-unknown-unknown") => Ok(()),
        Some(_) => {
            step("installing the wasm32-unknown-unknown target");
            check(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))
        }
        None => bail!(
            "rustup is not available: install Rust with rustup, then run \
             `rustup target add wasm32-unknown-unknown`"
        ),
    }
}

/// The version of `package` that `Cargo.lock` resolved.
pub fn locked_version(root: &Path, package: &str) -> Result<String> {
    let lock =
        std::fs::read_to_string(root.join("Cargo.lock")).context("cannot read Cargo.lock")?;
    let header = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == header
            && let Some(version) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
        {
            return Ok(version.trim_matches('"').to_string());
        }
    }
    bail!("Cargo.lock has no package {package}")
}

/// wasm-bindgen's CLI must match the library version exactly, or the JS glue it writes is wrong.
fn ensure_wasm_bindgen(root: &Path) -> Result<PathBuf> {
    let version = locked_version(root, "wasm-bindgen")?;
    let expected = format!("wasm-bindgen {version}");
    let cargo_bin = cargo_home().join("bin");
    let runner = cargo_bin.join("wasm-bindgen-test-runner");
    let installed = output_of(Command::new(cargo_bin.join("wasm-bindgen")).arg("--version"))
        .or_else(|| output_of(Command::new("wasm-bindgen").arg("--version")));
    if installed.as_deref() != Some(expected.as_str()) || !runner.exists() {
        step(&format!(
            "installing wasm-bindgen-cli {version} (found: {}); this takes a few minutes once",
            installed.as_deref().unwrap_or("none")
        ));
        // Not `--locked`: one of the CLI's pinned dependencies is gone from the registry.
        cargo(&["install", "wasm-bindgen-cli", "--version", &version])?;
    }
    let binary = cargo_bin.join("wasm-bindgen");
    if binary.exists() {
        Ok(binary)
    } else {
        Ok(PathBuf::from("wasm-bindgen"))
    }
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"))
}

/// Runs `npm ci` when `node_modules` is missing or older than `package-lock.json`.
fn ensure_npm_tools(root: &Path) -> Result<PathBuf> {
    let wasm_opt = root.join("node_modules/.bin/wasm-opt");
    let lock = root.join("package-lock.json");
    let stamp = root.join("node_modules/.package-lock.json");
    let fresh = wasm_opt.exists()
        && root.join("node_modules/playwright-core").exists()
        && root.join("node_modules/just-bash").exists()
        && modified(&stamp)
            .zip(modified(&lock))
            .is_some_and(|(s, l)| s >= l);
    if !fresh {
        if output_of(Command::new("npm").arg("--version")).is_none() {
            bail!("npm is not available: install Node.js 20 (with npm)");
        }
        step("installing npm tools (binaryen's wasm-opt, playwright-core, just-bash)");
        // --omit=optional: just-bash's optional compression add-ons are not needed, and one of
        // them (@mongodb-js/zstd) would fetch a prebuilt binary from outside the registry.
        check(
            Command::new("npm")
                .args(["ci", "--omit=optional", "--no-audit", "--no-fund"])
                .current_dir(root),
        )?;
    }
    Ok(wasm_opt)
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Debian's Chromium and ChromeDriver (`/usr/bin/chromium`, `/usr/bin/chromedriver`).
fn ensure_browsers() -> Result<(PathBuf, PathBuf)> {
    let find = || Some((which("chromium")?, which("chromedriver")?));
    if let Some(found) = find() {
        return Ok(found);
    }
    step("installing Chromium and ChromeDriver (apt-get)");
    apt_install(&["chromium", "chromium-driver"])?;
    find().context("chromium and chromedriver are still not on PATH after apt-get install")
}

/// The cargo-fuzz release `cargo xtask fuzz` is known to work with on our toolchain (pinned, so
/// a fresh machine does not get a newer one that wants a newer rustc).
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// What the fuzz targets (`fuzz/`) need: cargo-fuzz (`cargo install`), and a C++ compiler, since
/// the `libfuzzer-sys` crate compiles libFuzzer from source. Either is left alone when present
/// (any cargo-fuzz version will do).
pub fn ensure_fuzzing() -> Result<()> {
    if output_of(Command::new("c++").arg("--version")).is_none() {
        step("installing a C++ compiler for libFuzzer (apt-get g++)");
        apt_install(&["g++"])?;
    }
    if output_of(crate::cargo_command().args(["fuzz", "--version"])).is_none() {
        step(&format!(
            "installing cargo-fuzz {CARGO_FUZZ_VERSION}; this takes a few minutes once"
        ));
        cargo(&[
            "install",
            "cargo-fuzz",
            "--version",
            CARGO_FUZZ_VERSION,
            "--locked",
        ])?;
    }
    Ok(())
}

/// The llmsim release the engine tests run Tether in front of (an OpenAI-compatible server
/// nobody here wrote; `docs/engines.md`).
pub const LLMSIM_VERSION: &str = "0.6.0";

/// Where `cargo xtask setup` installs llmsim: a directory of the workspace's `target/` that the
/// tests own (`cargo clean` removes it; setup puts it back).
pub fn llmsim_root(root: &Path) -> PathBuf {
    root.join("target/tools/llmsim")
}

/// llmsim, built from crates.io's source into [`llmsim_root`] (about two minutes once), unless
/// that version is there already.
pub fn ensure_llmsim(root: &Path) -> Result<PathBuf> {
    let install = llmsim_root(root);
    let binary = install.join("bin/llmsim");
    let expected = format!("llmsim {LLMSIM_VERSION}");
    if output_of(Command::new(&binary).arg("--version")).as_deref() == Some(expected.as_str()) {
        return Ok(binary);
    }
    step(&format!(
        "installing llmsim {LLMSIM_VERSION} into {} for the engine tests; this takes a few \
         minutes once",
        install.display()
    ));
    let install_arg = install.to_string_lossy().into_owned();
    cargo(&[
        "install",
        "llmsim",
        "--version",
        LLMSIM_VERSION,
        "--locked",
        "--root",
        &install_arg,
    ])?;
    Ok(binary)
}

/// What `cargo xtask deploy` and the PostgreSQL tests need: Debian's PostgreSQL server
/// binaries (`initdb`, `pg_ctl`; no cluster or service is set up with them) and nginx. Either
/// is left alone when present.
pub fn ensure_deployment() -> Result<()> {
    let mut missing = Vec::new();
    if crate::deploy::postgres_binaries().is_none() {
        missing.push("postgresql");
    }
    if crate::deploy::nginx_binary().is_none() {
        missing.push("nginx");
    }
    if !missing.is_empty() {
        step(&format!(
            "installing {} for the deployment (apt-get)",
            missing.join(" and ")
        ));
        apt_install(&missing)?;
    }
    Ok(())
}

/// The commands the agent corpus (`sandbox/tests/bash_compat/agents`) runs in real bash beyond
/// coreutils: Debian's `jq`, `ripgrep` and `tree`. Left alone when present.
pub fn ensure_shell_tools() -> Result<()> {
    let missing: Vec<&str> = [("jq", "jq"), ("rg", "ripgrep"), ("tree", "tree")]
        .into_iter()
        .filter(|(command, _)| which(command).is_none())
        .map(|(_, package)| package)
        .collect();
    if !missing.is_empty() {
        step(&format!(
            "installing {} for the bash comparison (apt-get)",
            missing.join(", ")
        ));
        apt_install(&missing)?;
    }
    Ok(())
}

/// The rust-bash release the sandbox's peers benchmark runs (`sandbox/benches/peers.rs`).
pub const RUST_BASH_VERSION: &str = "0.3.0";

/// Where `cargo xtask setup` installs the benchmark's rust-bash runner.
pub fn rust_bash_root(root: &Path) -> PathBuf {
    root.join("target/tools/rust-bash")
}

/// The peers benchmark's rust-bash runner (`sandbox/benches/peers/rust-bash`: rust-bash
/// [`RUST_BASH_VERSION`] from crates.io behind a small JSON driver, its own Cargo.lock),
/// built into [`rust_bash_root`] — a few minutes once — unless it is there and newer than its
/// source.
pub fn ensure_rust_bash(root: &Path) -> Result<PathBuf> {
    let install = rust_bash_root(root);
    let binary = install.join("bin/rust-bash-runner");
    let source = root.join("sandbox/benches/peers/rust-bash");
    let newest_source = ["Cargo.toml", "Cargo.lock", "src/main.rs"]
        .iter()
        .filter_map(|file| modified(&source.join(file)))
        .max();
    if modified(&binary)
        .zip(newest_source)
        .is_some_and(|(b, s)| b >= s)
    {
        return Ok(binary);
    }
    step(&format!(
        "building the rust-bash {RUST_BASH_VERSION} runner into {} for the sandbox's peers \
         benchmark; this takes a few minutes once",
        install.display()
    ));
    let install_arg = install.to_string_lossy().into_owned();
    let target_dir = install.join("build").to_string_lossy().into_owned();
    let source_arg = source.to_string_lossy().into_owned();
    cargo(&[
        "install",
        "--locked",
        "--path",
        &source_arg,
        "--root",
        &install_arg,
        "--target-dir",
        &target_dir,
    ])?;
    Ok(binary)
}

/// What the turn-cost check (`harness/benches/turn_cost.rs`) needs: Debian's valgrind, whose
/// headers the bench's client requests are compiled against (so the harness's tests need them
/// too) and whose callgrind counts the instructions. Left alone when present.
pub fn ensure_valgrind() -> Result<()> {
    let headers = Path::new("/usr/include/valgrind/callgrind.h").exists();
    if !headers || output_of(Command::new("valgrind").arg("--version")).is_none() {
        step("installing valgrind for the turn-cost check (apt-get)");
        apt_install(&["valgrind"])?;
    }
    Ok(())
}

/// `apt-get install` of Debian `packages` (through sudo unless we are root), after an update.
fn apt_install(packages: &[&str]) -> Result<()> {
    let is_root = output_of(Command::new("id").arg("-u")).as_deref() == Some("0");
    let apt = |args: &[&str]| -> Result<()> {
        if is_root {
            check(
                Command::new("apt-get")
                    .args(args)
                    .env("DEBIAN_FRONTEND", "noninteractive"),
            )
        } else {
            check(
                Command::new("sudo")
                    .arg("DEBIAN_FRONTEND=noninteractive")
                    .arg("apt-get")
                    .args(args),
            )
        }
    };
    apt(&["update", "-q"])?;
    apt(&[&["install", "-y", "-q"][..], packages].concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_locked_versions() {
        let root = crate::workspace_root();
        let version = locked_version(&root, "wasm-bindgen").unwrap();
        assert!(version.starts_with("0.2."), "{version}");
        assert!(locked_version(&root, "no-such-package").is_err());
    }
}
