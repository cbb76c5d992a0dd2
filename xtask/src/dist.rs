//! Builds the playground into `dist/`: the release wasm, split in two at the agent view
//! (`wasm_split_cli_support`, the splitter behind `cargo leptos --split`), through wasm-bindgen
//! and wasm-opt, plus `index.html`, `style/` and the docs page (`docs/`, served at `/docs/`).
//! Every file gets a brotli (`.br`, quality 11) and a gzip (`.gz`, level 9) copy beside it, which
//! the server sends to a browser that accepts them (`server/src/transport/static_files.rs`).
//! Prints the bundle's sizes, raw, gzipped and brotli'd: what the page loads first, and the
//! chunks it fetches when the Agent tab opens.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::setup::Tools;
use crate::{cargo_wasm_with_rustflags, check, step};

/// Builds `dist/` from scratch.
pub fn build(root: &Path, tools: &Tools) -> Result<()> {
    step("building the playground (wasm, profile wasm-release: size-optimised, LTO)");
    // The splitter needs the linker's relocations. Only this profile's build gets the flag, so
    // the other wasm builds (tests) keep their own artifacts.
    cargo_wasm_with_rustflags(
        // `erase_components`: Leptos builds each component's view as a type-erased view rather
        // than one concrete type per component tree, which makes the wasm smaller
        // (BENCHMARKS.md, "Playground bundle", has the numbers).
        // `tether_split_commands`: the sandbox leaves awk and jq out of its command table and
        // the page loads each from a module of its own on first use (src/main.rs).
        &[
            "-Clink-args=--emit-relocs",
            "--cfg=erase_components",
            "--cfg=tether_split_commands",
        ],
        &[
            "build",
            "--profile",
            "wasm-release",
            "--target",
            "wasm32-unknown-unknown",
            "-p",
            "tether-playground",
            "--bin",
            "tether-playground",
        ],
    )?;
    let dist = root.join("dist");
    if dist.exists() {
        std::fs::remove_dir_all(&dist).context("cannot clear dist/")?;
    }
    let pkg = dist.join("pkg");
    let release = target_dir(root).join("wasm32-unknown-unknown/wasm-release");
    let wasm = release.join("tether-playground.wasm");
    step("splitting the agent view into its own wasm module");
    let input = std::fs::read(&wasm).with_context(|| format!("read {}", wasm.display()))?;
    let main_split = release.join("tether-playground-main.wasm");
    let split = wasm_split_cli_support::transform({
        let mut options = wasm_split_cli_support::Options::new(&input);
        options.output_dir = &pkg;
        options.main_out_path = &main_split;
        options.main_module = "./tether_playground.js";
        options.link_name = "./__wasm_split.js";
        options
    })
    .map_err(|e| anyhow::anyhow!("splitting the wasm failed: {e:?}"))?;
    drop(input);
    check(
        Command::new(&tools.wasm_bindgen)
            .args([
                "--target",
                "web",
                "--no-typescript",
                "--out-name",
                "tether_playground",
                // The chunks link to the main module through the linker's exports.
                "--keep-lld-exports",
            ])
            .arg("--out-dir")
            .arg(&pkg)
            .arg(&main_split),
    )?;
    step("optimising with wasm-opt -Oz");
    let bg = pkg.join("tether_playground_bg.wasm");
    let mut modules = vec![bg.clone()];
    modules.extend(split.split_modules.iter().cloned());
    for chunk in &split.split_modules {
        // The splitter writes a `name` subsection wasm-opt 132 does not know (it warns "unknown
        // name subsection with id 3"); `-Oz` drops the names anyway.
        let bytes = std::fs::read(chunk).with_context(|| format!("read {}", chunk.display()))?;
        let stripped = without_custom_section(&bytes, "name")
            .with_context(|| format!("{} is not a wasm module", chunk.display()))?;
        std::fs::write(chunk, stripped).with_context(|| format!("write {}", chunk.display()))?;
    }
    for module in &modules {
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
                .arg(module)
                .arg("-o")
                .arg(module),
        )?;
    }
    // A chunk links to its own build's main module: name it by its content, so a page opened
    // before a rebuild never fetches a newer chunk (it gets a 404 and says so) and a browser
    // cache never mixes two builds.
    let link = pkg.join("__wasm_split.js");
    let mut loader = std::fs::read_to_string(&link).context("read __wasm_split.js")?;
    let mut chunks = Vec::new();
    for chunk in &split.split_modules {
        let name = chunk
            .file_name()
            .and_then(|n| n.to_str())
            .context("a chunk without a file name")?;
        let stem = name.strip_suffix(".wasm").unwrap_or(name);
        let bytes = std::fs::read(chunk).with_context(|| format!("read {}", chunk.display()))?;
        let hashed = format!("{stem}.{:016x}.wasm", fnv1a(&bytes));
        let quoted = format!("\"./{name}\"");
        anyhow::ensure!(
            loader.matches(&quoted).count() == 1,
            "__wasm_split.js does not name {name} exactly once"
        );
        loader = loader.replace(&quoted, &format!("\"./{hashed}\""));
        let renamed = pkg.join(&hashed);
        std::fs::rename(chunk, &renamed).with_context(|| format!("rename {name}"))?;
        chunks.push(renamed);
    }
    std::fs::write(&link, &loader).context("write __wasm_split.js")?;
    std::fs::copy(root.join("index.html"), dist.join("index.html")).context("copy index.html")?;
    copy_dir(&root.join("style"), &dist.join("style"))?;
    // The protocol walkthrough with live demos, served at /docs/.
    copy_dir(&root.join("docs"), &dist.join("docs"))?;
    step("compressing every file (brotli 11, gzip 9) for the server to send precompressed");
    precompress(&dist)?;
    let js = pkg.join("tether_playground.js");
    let wasm = sizes(&bg)?;
    let js = sizes(&js)?.plus(sizes(&link)?);
    // The Agent tab loads its split module and the shared chunks (`chunk_N`) the loader lists
    // for it; a command's module (`split_sandbox_*`), and a chunk only the commands share, load
    // the first time a command line runs that command.
    let (mut agent, mut on_demand, mut commands) = (Sizes::default(), Sizes::default(), Vec::new());
    for path in &chunks {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let size = sizes(path)?;
        if let Some(rest) = name.strip_prefix("split_sandbox_") {
            let command = rest.split('.').next().unwrap_or(rest);
            commands.push(format!("{command} {} brotli", kib(size.brotli)));
            on_demand = on_demand.plus(size);
        } else if name.starts_with("split_agent_view")
            || needed_by(&loader, name).contains("agent_view")
        {
            agent = agent.plus(size);
        } else {
            on_demand = on_demand.plus(size);
        }
    }
    let first = wasm.plus(js);
    let all = first.plus(agent).plus(on_demand);
    step(&format!(
        "dist/ ready. First load: wasm {} ({} gzipped, {} brotli), js {} ({} gzipped, {} brotli), \
         total {} gzipped, {} brotli. Agent tab: {} ({} gzipped, {} brotli). On first use: {} \
         ({} gzipped, {} brotli: {}). Everything: {} gzipped, {} brotli",
        kib(wasm.raw),
        kib(wasm.gzip),
        kib(wasm.brotli),
        kib(js.raw),
        kib(js.gzip),
        kib(js.brotli),
        kib(first.gzip),
        kib(first.brotli),
        kib(agent.raw),
        kib(agent.gzip),
        kib(agent.brotli),
        kib(on_demand.raw),
        kib(on_demand.gzip),
        kib(on_demand.brotli),
        commands.join(", "),
        kib(all.gzip),
        kib(all.brotli),
    ));
    Ok(())
}

/// The split modules that need the shared chunk `file`, as `__wasm_split.js` lists them in the
/// comment above the chunk's loader (`/* agent_view, sandbox_awk */`); empty if it lists none.
fn needed_by<'a>(loader: &'a str, file: &str) -> &'a str {
    let Some(at) = loader.find(file) else {
        return "";
    };
    let before = &loader[..at];
    before
        .rfind("/* ")
        .and_then(|start| {
            let comment = &before[start + 3..];
            comment.find(" */").map(|end| &comment[..end])
        })
        .unwrap_or("")
}

/// Writes `FILE.br` and `FILE.gz` beside every file under `dir` whose compressed copy is
/// smaller than it (a browser that gets nothing smaller gets the file itself).
fn precompress(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("read {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            precompress(&path)?;
            continue;
        }
        let compressed = path
            .extension()
            .is_some_and(|ext| ext == "br" || ext == "gz");
        if compressed {
            continue;
        }
        let bytes = std::fs::read(&path).with_context(|| format!("read {}", path.display()))?;
        for (suffix, packed) in [("br", brotli_of(&bytes)?), ("gz", gzip_of(&bytes)?)] {
            let mut name = path.as_os_str().to_owned();
            name.push(format!(".{suffix}"));
            if packed.len() < bytes.len() {
                std::fs::write(&name, packed).with_context(|| format!("write {name:?}"))?;
            }
        }
    }
    Ok(())
}

/// Gzip at level 9, the size the sizes above report and `Content-Encoding: gzip` sends.
fn gzip_of(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes)?;
    Ok(encoder.finish()?)
}

/// Brotli at quality 11 with a 4 MiB window (`lgwin` 22): what `Content-Encoding: br` sends.
fn brotli_of(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 22,
        ..Default::default()
    };
    brotli::BrotliCompress(&mut &bytes[..], &mut out, &params)?;
    Ok(out)
}

/// `wasm` without its custom sections called `name`; `None` if it is not a wasm module.
fn without_custom_section(wasm: &[u8], name: &str) -> Option<Vec<u8>> {
    fn leb128(bytes: &[u8], at: &mut usize) -> Option<usize> {
        let (mut value, mut shift) = (0usize, 0);
        loop {
            let byte = *bytes.get(*at)?;
            *at += 1;
            value |= usize::from(byte & 0x7f).checked_shl(shift)?;
            if byte & 0x80 == 0 {
                return Some(value);
            }
            shift += 7;
        }
    }
    if wasm.get(..4)? != b"\0asm" || wasm.len() < 8 {
        return None;
    }
    let mut out = wasm[..8].to_vec();
    let mut at = 8;
    while at < wasm.len() {
        let start = at;
        let id = wasm[at];
        at += 1;
        let size = leb128(wasm, &mut at)?;
        let end = at.checked_add(size).filter(|&end| end <= wasm.len())?;
        let drop = id == 0 && {
            let mut name_at = at;
            let len = leb128(wasm, &mut name_at)?;
            let name_end = name_at.checked_add(len).filter(|&e| e <= end)?;
            &wasm[name_at..name_end] == name.as_bytes()
        };
        if !drop {
            out.extend_from_slice(&wasm[start..end]);
        }
        at = end;
    }
    Some(out)
}

/// FNV-1a, 64 bits: a content hash for file names (not for security).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
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

/// A file's size raw, gzipped (level 9) and brotli'd (quality 11), in bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Sizes {
    raw: usize,
    gzip: usize,
    brotli: usize,
}

impl Sizes {
    fn plus(self, other: Sizes) -> Sizes {
        Sizes {
            raw: self.raw + other.raw,
            gzip: self.gzip + other.gzip,
            brotli: self.brotli + other.brotli,
        }
    }
}

fn sizes(path: &Path) -> Result<Sizes> {
    let bytes = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
    Ok(Sizes {
        raw: bytes.len(),
        gzip: gzip_of(&bytes)?.len(),
        brotli: brotli_of(&bytes)?.len(),
    })
}

fn kib(bytes: usize) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::{brotli_of, gzip_of, needed_by, precompress, without_custom_section};
    use std::io::Read;

    #[test]
    fn a_shared_chunk_is_needed_by_the_modules_its_loader_comment_lists() {
        let loader = "/* agent_view, sandbox_awk */\nconst __chunk_4 = makeLoad(() => {\n    \
                      const src = fetch(new URL(\"./chunk_4.ab.wasm\", import.meta.url));\n\
                      /* sandbox_awk, sandbox_jq */\nconst __chunk_6 = makeLoad(() => {\n    \
                      const src = fetch(new URL(\"./chunk_6.cd.wasm\", import.meta.url));\n";
        assert_eq!(
            needed_by(loader, "chunk_4.ab.wasm"),
            "agent_view, sandbox_awk"
        );
        assert_eq!(
            needed_by(loader, "chunk_6.cd.wasm"),
            "sandbox_awk, sandbox_jq"
        );
        assert_eq!(needed_by(loader, "chunk_9.ef.wasm"), "");
    }

    #[test]
    fn every_file_gets_smaller_compressed_copies_beside_it() {
        let dir = std::env::temp_dir().join(format!("tether-dist-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("pkg")).unwrap();
        let page = "<!doctype html><p>hello</p>".repeat(50);
        std::fs::write(dir.join("index.html"), &page).unwrap();
        std::fs::write(dir.join("pkg/tiny.js"), "1").unwrap();
        precompress(&dir).unwrap();
        let br = std::fs::read(dir.join("index.html.br")).unwrap();
        let mut decoded = Vec::new();
        brotli::BrotliDecompress(&mut &br[..], &mut decoded).unwrap();
        assert_eq!(decoded, page.as_bytes());
        let gz = std::fs::read(dir.join("index.html.gz")).unwrap();
        let mut unzipped = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut unzipped)
            .unwrap();
        assert_eq!(unzipped, page);
        // A file compression would not shrink is served as it is.
        assert!(!dir.join("pkg/tiny.js.br").exists() && !dir.join("pkg/tiny.js.gz").exists());
        // Running it again compresses the originals only.
        precompress(&dir).unwrap();
        assert!(!dir.join("index.html.br.br").exists());
        assert!(
            brotli_of(page.as_bytes()).unwrap().len() < gzip_of(page.as_bytes()).unwrap().len()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A custom section: id 0, size, then the name and the payload.
    fn custom(name: &str, payload: &[u8]) -> Vec<u8> {
        let mut body = vec![name.len() as u8];
        body.extend_from_slice(name.as_bytes());
        body.extend_from_slice(payload);
        let mut section = vec![0, body.len() as u8];
        section.extend(body);
        section
    }

    #[test]
    fn only_the_named_custom_section_goes() {
        let header = b"\0asm\x01\0\0\0".to_vec();
        // A type section with no types, the `name` section, another custom section.
        let types = vec![1u8, 1, 0];
        let module = [
            header.clone(),
            types.clone(),
            custom("name", &[1, 2, 3]),
            custom("producers", &[4]),
        ]
        .concat();
        let expected = [header, types, custom("producers", &[4])].concat();
        assert_eq!(without_custom_section(&module, "name"), Some(expected));
        // Nothing to drop: unchanged.
        assert_eq!(
            without_custom_section(&module, "other"),
            Some(module.clone())
        );
        // A custom section whose name runs past its end: refused.
        let bad = [b"\0asm\x01\0\0\0".to_vec(), vec![0, 1, 4], b"name".to_vec()].concat();
        assert_eq!(without_custom_section(&bad, "name"), None);
        // Not wasm, or cut short: refused.
        assert_eq!(without_custom_section(b"not wasm", "name"), None);
        assert_eq!(
            without_custom_section(&module[..module.len() - 1], "name"),
            None
        );
    }
}
