//! The shell's regular expressions behave the same natively and in the browser, although the
//! wasm build compiles `regex` with fewer features (sandbox/Cargo.toml): Unicode-aware `\w`
//! and word boundaries, Unicode case folding, captures, alternations of literals, POSIX classes.
//! The one documented difference is checked too: `\p{..}` property classes exist natively only.
//!
//! Native: `cargo test -p tether-sandbox --test regex_features`;
//! browser: `cargo test -p tether-sandbox --target wasm32-unknown-unknown --test regex_features`.

use tether_sandbox::{Sandbox, Vfs};

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

const TEXT: &str = "Ünïcode wörd\nplain word\nΑΒΓ greek\n";

/// `(command line, stdout, exit code)`, each run on a VFS holding `u.txt` = [`TEXT`].
const CASES: &[(&str, &str, i32)] = &[
    ("grep -i 'ünï' u.txt", "Ünïcode wörd\n", 0),
    ("grep -i 'αβγ' u.txt", "ΑΒΓ greek\n", 0),
    ("grep -w 'wörd' u.txt", "Ünïcode wörd\n", 0),
    ("grep -w 'wör' u.txt", "", 1),
    ("grep -c '^\\w\\+ \\w\\+$' u.txt", "3\n", 0),
    (
        "sed 's/\\(\\w\\+\\) \\(\\w\\+\\)/\\2 \\1/' u.txt",
        "wörd Ünïcode\nword plain\ngreek ΑΒΓ\n",
        0,
    ),
    ("grep -E 'plain|greek' u.txt", "plain word\nΑΒΓ greek\n", 0),
    ("grep -iF 'PLAIN' u.txt", "plain word\n", 0),
    ("grep '^[[:alpha:]]* word$' u.txt", "plain word\n", 0),
    ("awk '/^[[:alpha:]]+ w/ { print $2 }' u.txt", "word\n", 0),
    ("rg 'w\\w+d$' u.txt", "Ünïcode wörd\nplain word\n", 0),
    ("rg -i 'ΑβΓ' u.txt", "ΑΒΓ greek\n", 0),
];

async fn run(command: &str) -> (String, String, i32) {
    let mut vfs = Vfs::new();
    vfs.write("u.txt", TEXT.as_bytes().to_vec()).unwrap();
    let mut sandbox = Sandbox::new(vfs);
    let output = sandbox.run_shell(command).await;
    (output.stdout, output.stderr, output.exit_code)
}

async fn same_everywhere() {
    let mut mismatches = Vec::new();
    for &(command, stdout, exit_code) in CASES {
        let (out, err, code) = run(command).await;
        if (out.as_str(), code) != (stdout, exit_code) {
            mismatches.push(format!(
                "{command}: got {out:?} (exit {code}, stderr {err:?})"
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// `\p{Greek}` needs `regex`'s script tables, which the browser build leaves out.
async fn property_classes() {
    let (out, err, code) = run("rg '\\p{Greek}' u.txt").await;
    if cfg!(target_arch = "wasm32") {
        assert_eq!(code, 2, "{out}");
        assert!(err.contains("Unicode property not found"), "{err}");
    } else {
        assert_eq!((out.as_str(), code), ("ΑΒΓ greek\n", 0), "{err}");
    }
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
fn regexes_match_alike() {
    tether_sandbox::native::block_on(same_everywhere());
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
fn property_classes_are_native_only() {
    tether_sandbox::native::block_on(property_classes());
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen_test::wasm_bindgen_test]
async fn regexes_match_alike() {
    same_everywhere().await;
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen_test::wasm_bindgen_test]
async fn property_classes_are_native_only() {
    property_classes().await;
}
