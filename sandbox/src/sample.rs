//! The sample project the default agent scenario fixes: a small JavaScript pagination module
//! with an off-by-one bug (page N starts at item `N * size` instead of `(N - 1) * size`), its
//! tests, and the Codex patch that fixes it. Shipped as data files under `sample-project/`.

use crate::vfs::Vfs;

const FILES: [(&str, &str); 6] = [
    ("README.md", include_str!("../sample-project/README.md")),
    (
        "package.json",
        include_str!("../sample-project/package.json"),
    ),
    (
        "src/paginate.js",
        include_str!("../sample-project/src/paginate.js"),
    ),
    (
        "test/assert.js",
        include_str!("../sample-project/test/assert.js"),
    ),
    (
        "test/paginate.test.js",
        include_str!("../sample-project/test/paginate.test.js"),
    ),
    ("test/run.js", include_str!("../sample-project/test/run.js")),
];

/// The patch (Codex format) that fixes the sample project's bug.
pub const SAMPLE_FIX_PATCH: &str = include_str!("../sample-project.fix.patch");

/// The sample project as a fresh VFS rooted at `/`.
pub fn sample_project() -> Vfs {
    Vfs::from_files(FILES.iter().map(|(path, text)| (*path, text.as_bytes())))
}
