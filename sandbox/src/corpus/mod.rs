//! The agent corpus: command lines coding agents really run, held against real bash.
//!
//! A corpus is a directory with `corpus/*.sh` (one file per kind of line: `grep.sh`, `awk.sh`,
//! …), a `tree/` every line runs on, and an `allow-list.txt` of the lines known not to agree yet.
//! In a corpus file, cases are separated by lines holding only `%%`; a case opens with metadata
//! comments — `# source:` (where the line was taken from), `# workdir:` (the directory under
//! `tree/` it runs in; both required) and `# adapted:` (what was changed to fit the tree) — and
//! the rest is the command line. A case's id is `KIND/N`, N counting from 1 in its file.
//!
//! The first component of a workdir is the case's project (`repo`, `log-analysis`, `scratch`,
//! …): the line runs on that directory alone, as the root of the sandbox's VFS and as a fresh
//! copy on disk for `/bin/bash` (`LC_ALL=C`), in the rest of the workdir. Each run is classified
//! by [`classify`]:
//! *identical* (stdout and exit code), *clear error* (the engine refused in a recognisable way,
//! see [`is_refusal`]) or *wrong* (anything else). [`Tally`] adds them up by kind; the gate
//! ([`Gate`]) is the same for the test suite and the CLI. The `native` feature holds this module:
//! it spawns bash and touches the disk.

mod bash;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

pub use bash::{BashRunner, copy_tree};

use crate::Sandbox;
use crate::native::block_on;
use crate::vfs::Vfs;

/// What a refusal of an unsupported construct says, at the end of its stderr line:
/// `PROGRAM: CONSTRUCT: not supported in this sandbox`.
pub const REFUSAL_SUFFIX: &str = crate::commands::REFUSAL;

/// The share of lines that must be identical to bash (allowed lines count as identical until
/// they are fixed).
pub const IDENTICAL_GOAL: f64 = 0.97;

/// One command line of the corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// `KIND/N`: the file's name without `.sh`, then the case's place in it from 1.
    pub id: String,
    /// The kind of line (the corpus file it is in).
    pub kind: String,
    /// Where the line comes from (`# source:`).
    pub source: String,
    /// The directory under `tree/` it runs in (`# workdir:`): its project, then a path in it.
    pub workdir: String,
    /// What was changed to fit the tree (`# adapted:`), if anything.
    pub adapted: Option<String>,
    /// `# order: unspecified`: the order of the output's lines is the file system's (a
    /// directory listing, `rg`'s threads), so stdout is compared as sorted lines.
    pub unordered: bool,
    /// The command line itself.
    pub script: String,
}

impl Case {
    /// The project the line runs on: the first component of its workdir.
    pub fn project(&self) -> &str {
        self.workdir.split('/').next().unwrap_or_default()
    }

    /// The workdir inside the project, absolute (`/` for the project itself).
    pub fn cwd(&self) -> String {
        match self.workdir.split_once('/') {
            Some((_, rest)) => format!("/{rest}"),
            None => "/".to_string(),
        }
    }
}

/// A corpus file that cannot be read as cases.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("cannot read {0}: {1}")]
    Io(PathBuf, io::Error),
    #[error("{file}: case {index} has no `# source:` line")]
    NoSource { file: String, index: usize },
    #[error("{file}: case {index} has no `# workdir:` line")]
    NoWorkdir { file: String, index: usize },
    #[error("{file}: case {index}: the only `# order:` is `unspecified`")]
    Order { file: String, index: usize },
    #[error("{file}: case {index} has no command line")]
    Empty { file: String, index: usize },
    #[error("{file}: case {index}: workdir `{workdir}` is not a directory of the tree")]
    Workdir {
        file: String,
        index: usize,
        workdir: String,
    },
    #[error("allow-list.txt line {line}: {problem}")]
    AllowList { line: usize, problem: String },
}

/// A corpus on disk: its cases, its tree and its allow-list.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub root: PathBuf,
    pub cases: Vec<Case>,
    pub allowed: AllowList,
}

impl Corpus {
    /// Reads `root/corpus/*.sh` (in name order) and `root/allow-list.txt`.
    pub fn load(root: &Path) -> Result<Corpus, CorpusError> {
        let dir = root.join("corpus");
        let read_dir = std::fs::read_dir(&dir).map_err(|e| CorpusError::Io(dir.clone(), e))?;
        let mut files: Vec<PathBuf> = read_dir
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "sh"))
            .collect();
        files.sort();
        let mut cases = Vec::new();
        for path in files {
            let text =
                std::fs::read_to_string(&path).map_err(|e| CorpusError::Io(path.clone(), e))?;
            let kind = path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_default();
            for case in parse_cases(&kind, &text)? {
                if !root.join("tree").join(&case.workdir).is_dir() {
                    return Err(CorpusError::Workdir {
                        file: format!("{kind}.sh"),
                        index: case
                            .id
                            .rsplit('/')
                            .next()
                            .unwrap_or("")
                            .parse()
                            .unwrap_or(0),
                        workdir: case.workdir,
                    });
                }
                cases.push(case);
            }
        }
        let allow_path = root.join("allow-list.txt");
        let allowed = match std::fs::read_to_string(&allow_path) {
            Ok(text) => AllowList::parse(&text)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => AllowList::default(),
            Err(e) => return Err(CorpusError::Io(allow_path, e)),
        };
        Ok(Corpus {
            root: root.to_path_buf(),
            cases,
            allowed,
        })
    }

    /// The tree every line runs on.
    pub fn tree(&self) -> PathBuf {
        self.root.join("tree")
    }
}

/// Splits one corpus file into its cases.
pub fn parse_cases(kind: &str, text: &str) -> Result<Vec<Case>, CorpusError> {
    let mut cases = Vec::new();
    let file = format!("{kind}.sh");
    let blocks = text.split("\n%%\n").map(|block| block.trim_matches('\n'));
    for (offset, block) in blocks.enumerate() {
        let index = offset + 1;
        let mut source = None;
        let mut workdir = None;
        let mut adapted = None;
        let mut unordered = false;
        let mut lines = block.lines().peekable();
        while let Some(line) = lines.peek() {
            if let Some(value) = line.strip_prefix("# source:") {
                source = Some(value.trim().to_string());
            } else if let Some(value) = line.strip_prefix("# workdir:") {
                workdir = Some(value.trim().trim_matches('/').to_string());
            } else if let Some(value) = line.strip_prefix("# adapted:") {
                adapted = Some(value.trim().to_string());
            } else if let Some(value) = line.strip_prefix("# order:") {
                if value.trim() != "unspecified" {
                    return Err(CorpusError::Order {
                        file: file.clone(),
                        index,
                    });
                }
                unordered = true;
            } else {
                break;
            }
            lines.next();
        }
        let script = lines.collect::<Vec<_>>().join("\n");
        let source = source.ok_or_else(|| CorpusError::NoSource {
            file: file.clone(),
            index,
        })?;
        let workdir = workdir
            .filter(|dir| !dir.is_empty() && dir != ".")
            .ok_or_else(|| CorpusError::NoWorkdir {
                file: file.clone(),
                index,
            })?;
        if script.trim().is_empty() {
            return Err(CorpusError::Empty {
                file: file.clone(),
                index,
            });
        }
        cases.push(Case {
            id: format!("{kind}/{index}"),
            kind: kind.to_string(),
            source,
            workdir,
            adapted,
            unordered,
            script,
        });
    }
    Ok(cases)
}

/// What a line printed and how it exited, in bash or in an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
}

/// How an engine's run of a line compares with bash's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Same stdout, same exit code.
    Identical,
    /// The engine refused the line, exiting non-zero with a message that names what it lacks.
    ClearError,
    /// Anything else: a different answer.
    Wrong,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Identical => "identical",
            Verdict::ClearError => "clear error",
            Verdict::Wrong => "wrong",
        }
    }
}

/// True when `stderr` holds a refusal: a line ending in [`REFUSAL_SUFFIX`]
/// (`bash: arrays: not supported in this sandbox`), or bash's own `bash: NAME: command not
/// found` for a command the engine lacks.
pub fn is_refusal(stderr: &str) -> bool {
    stderr.lines().any(|line| {
        line.trim_end().ends_with(REFUSAL_SUFFIX)
            || (line.starts_with("bash: ") && line.trim_end().ends_with(": command not found"))
    })
}

/// Compares an engine's run of `case` with bash's. A refusal counts on stdout too, where a line
/// like `sort -c f 2>&1` sends it.
pub fn classify(case: &Case, bash: &Outcome, engine: &Outcome) -> Verdict {
    let same_stdout = if case.unordered {
        sorted_lines(&bash.stdout) == sorted_lines(&engine.stdout)
    } else {
        bash.stdout == engine.stdout
    };
    if same_stdout && bash.exit_code == engine.exit_code {
        Verdict::Identical
    } else if engine.exit_code != 0 && (is_refusal(&engine.stderr) || is_refusal(&engine.stdout)) {
        Verdict::ClearError
    } else {
        Verdict::Wrong
    }
}

fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    lines.sort_unstable();
    lines
}

/// Runs `case` in a fresh sandbox over its project (loaded once by the caller), in its workdir.
pub fn run_sandbox(project: &Vfs, case: &Case) -> Outcome {
    let mut sandbox = Sandbox::new(project.clone());
    let cwd = case.cwd();
    if cwd != "/" {
        let cd = block_on(sandbox.run_shell(&format!("cd '{cwd}'")));
        assert_eq!(cd.exit_code, 0, "{}: cannot cd to {cwd}", case.id);
    }
    let output = block_on(sandbox.run_shell(&case.script));
    Outcome {
        stdout: output.stdout,
        stderr: output.stderr,
        exit_code: output.exit_code,
    }
}

/// The lines known not to agree with bash yet: `ID  CLASS  REASON` a line, CLASS being `wrong`
/// or `clear-error` (what the line is today), `#` comments and blank lines ignored. The list
/// only shrinks: an entry whose line now agrees, or whose class changed, is an error
/// ([`Gate`]), so fixing a line means deleting or updating its entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    pub entries: BTreeMap<String, Allowed>,
}

/// One entry of the allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    pub verdict: Verdict,
    pub reason: String,
}

impl AllowList {
    pub fn parse(text: &str) -> Result<AllowList, CorpusError> {
        let mut entries = BTreeMap::new();
        for (offset, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let problem = |problem: &str| CorpusError::AllowList {
                line: offset + 1,
                problem: problem.to_string(),
            };
            let (id, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let (class, reason) = rest
                .trim()
                .split_once(char::is_whitespace)
                .unwrap_or((rest, ""));
            if class.is_empty() || reason.trim().is_empty() {
                return Err(problem("an entry is `KIND/N  CLASS  reason`"));
            }
            if !id.contains('/') {
                return Err(problem("an id is KIND/N"));
            }
            let verdict = match class {
                "wrong" => Verdict::Wrong,
                "clear-error" => Verdict::ClearError,
                _ => return Err(problem("the class is `wrong` or `clear-error`")),
            };
            let allowed = Allowed {
                verdict,
                reason: reason.trim().to_string(),
            };
            if entries.insert(id.to_string(), allowed).is_some() {
                return Err(problem("this id is listed twice"));
            }
        }
        Ok(AllowList { entries })
    }
}

/// One line's result.
#[derive(Debug, Clone)]
pub struct LineResult {
    pub case: Case,
    pub bash: Outcome,
    pub engine: Outcome,
    pub verdict: Verdict,
}

/// Counts by kind, and the gate's reading of them.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// kind → [identical, clear error, wrong]
    pub by_kind: BTreeMap<String, [usize; 3]>,
}

impl Tally {
    pub fn new(results: &[LineResult]) -> Tally {
        let mut tally = Tally::default();
        for result in results {
            let counts = tally.by_kind.entry(result.case.kind.clone()).or_default();
            counts[result.verdict as usize] += 1;
        }
        tally
    }

    pub fn totals(&self) -> [usize; 3] {
        self.by_kind.values().fold([0; 3], |mut sum, counts| {
            for (total, count) in sum.iter_mut().zip(counts) {
                *total += count;
            }
            sum
        })
    }

    /// The per-kind table, Markdown.
    pub fn table(&self, engine: &str) -> String {
        let mut out = format!(
            "| kind | lines | identical | clear error | wrong | {engine} agrees |\n|---|---:|---:|---:|---:|---:|\n"
        );
        let mut row = |name: &str, counts: &[usize; 3]| {
            let lines: usize = counts.iter().sum();
            let _ = writeln!(
                out,
                "| {name} | {lines} | {} | {} | {} | {} |",
                counts[0],
                counts[1],
                counts[2],
                percent(counts[0], lines)
            );
        };
        for (kind, counts) in &self.by_kind {
            row(kind, counts);
        }
        row("**all**", &self.totals());
        out
    }
}

/// `n / total` as a percentage with one decimal.
pub fn percent(n: usize, total: usize) -> String {
    if total == 0 {
        "—".to_string()
    } else {
        format!("{:.1} %", 100.0 * n as f64 / total as f64)
    }
}

/// The gate over a run: no wrong line and at least [`IDENTICAL_GOAL`] identical, the lines of
/// the allow-list excused; an allow-list entry for a line that now agrees, or for no line, is
/// an error of its own.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    /// Non-identical lines the allow-list does not excuse.
    pub unexcused: Vec<String>,
    /// Allow-list entries whose line agrees with bash now.
    pub stale: Vec<String>,
    /// Allow-list entries whose line is of another class now (`ID: listed → now`).
    pub reclassified: Vec<String>,
    /// Allow-list entries naming no line of the corpus.
    pub unknown: Vec<String>,
    /// Lines identical, or excused by the allow-list.
    pub passing: usize,
    pub total: usize,
}

impl Gate {
    pub fn new(results: &[LineResult], allowed: &AllowList) -> Gate {
        let mut gate = Gate {
            total: results.len(),
            ..Gate::default()
        };
        for result in results {
            let id = result.case.id.clone();
            match (result.verdict, allowed.entries.get(&id)) {
                (Verdict::Identical, None) => gate.passing += 1,
                (Verdict::Identical, Some(_)) => gate.stale.push(id),
                (verdict, Some(entry)) => {
                    gate.passing += 1;
                    if entry.verdict != verdict {
                        gate.reclassified.push(format!(
                            "{id}: listed {}, now {}",
                            entry.verdict.name(),
                            verdict.name()
                        ));
                    }
                }
                (verdict, None) => gate.unexcused.push(format!("{id} ({})", verdict.name())),
            }
        }
        for id in allowed.entries.keys() {
            if !results.iter().any(|result| &result.case.id == id) {
                gate.unknown.push(id.clone());
            }
        }
        gate
    }

    /// True when no line is wrong, the identical share holds and the allow-list is current.
    pub fn passes(&self) -> bool {
        let wrong = self.unexcused.iter().any(|line| line.ends_with("(wrong)"));
        !wrong
            && self.stale.is_empty()
            && self.reclassified.is_empty()
            && self.unknown.is_empty()
            && self.passing as f64 >= IDENTICAL_GOAL * self.total as f64
    }

    /// What failed, one sentence a problem.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.unexcused.is_empty() {
            problems.push(format!(
                "{} lines disagree with bash and are not on the allow-list: {}",
                self.unexcused.len(),
                self.unexcused.join(", ")
            ));
        }
        if !self.stale.is_empty() {
            problems.push(format!(
                "{} allow-list entries now agree with bash; delete them: {}",
                self.stale.len(),
                self.stale.join(", ")
            ));
        }
        if !self.reclassified.is_empty() {
            problems.push(format!(
                "{} allow-list entries name the wrong class; update them: {}",
                self.reclassified.len(),
                self.reclassified.join(", ")
            ));
        }
        if !self.unknown.is_empty() {
            problems.push(format!(
                "{} allow-list entries name no line of the corpus: {}",
                self.unknown.len(),
                self.unknown.join(", ")
            ));
        }
        if (self.passing as f64) < IDENTICAL_GOAL * self.total as f64 {
            problems.push(format!(
                "{} of {} lines identical or allowed ({}), under the {:.0} % goal",
                self.passing,
                self.total,
                percent(self.passing, self.total),
                IDENTICAL_GOAL * 100.0
            ));
        }
        problems
    }
}

/// Runs every case through bash and the sandbox; `progress` is told each case's id.
pub fn run_all(corpus: &Corpus, mut progress: impl FnMut(&str)) -> io::Result<Vec<LineResult>> {
    let bash = BashRunner::new(&corpus.tree())?;
    let mut projects: BTreeMap<String, Vfs> = BTreeMap::new();
    let mut results = Vec::with_capacity(corpus.cases.len());
    for case in &corpus.cases {
        progress(&case.id);
        let reference = bash.run(case)?;
        if !projects.contains_key(case.project()) {
            let vfs = crate::native::load_dir(&corpus.tree().join(case.project()))?;
            projects.insert(case.project().to_string(), vfs);
        }
        let engine = run_sandbox(&projects[case.project()], case);
        let verdict = classify(case, &reference, &engine);
        results.push(LineResult {
            case: case.clone(),
            bash: reference,
            engine,
            verdict,
        });
    }
    Ok(results)
}

/// Every non-identical line with both outputs, for the report.
pub fn describe_disagreements(results: &[LineResult], allowed: &AllowList) -> String {
    let mut out = String::new();
    for result in results.iter().filter(|r| r.verdict != Verdict::Identical) {
        let note = allowed
            .entries
            .get(&result.case.id)
            .map(|entry| format!(" — allowed: {}", entry.reason))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "--- {} [{}]{note}\n{}\nbash (exit {}):\n{}sandbox (exit {}):\n{}{}",
            result.case.id,
            result.verdict.name(),
            result.case.script,
            result.bash.exit_code,
            clip(&result.bash.stdout),
            result.engine.exit_code,
            clip(&result.engine.stdout),
            clip(&result.engine.stderr),
        );
    }
    out
}

fn clip(text: &str) -> String {
    const MAX: usize = 600;
    let mut clipped: String = text.chars().take(MAX).collect();
    if clipped.len() < text.len() {
        clipped.push_str("…\n");
    }
    if !clipped.is_empty() && !clipped.ends_with('\n') {
        clipped.push('\n');
    }
    clipped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(stdout: &str, stderr: &str, exit_code: i32) -> Outcome {
        Outcome {
            stdout: stdout.into(),
            stderr: stderr.into(),
            exit_code,
        }
    }

    #[test]
    fn parses_cases_with_their_metadata() {
        let text = "# source: a/b c.ts\n# workdir: repo\nls\n%%\n# source: x\n# workdir: repo/core/\n# adapted: y\n# a comment\necho hi\n";
        let cases = parse_cases("files", text).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].id, "files/1");
        assert_eq!(cases[0].workdir, "repo");
        assert_eq!(cases[0].script, "ls");
        assert_eq!(cases[1].adapted.as_deref(), Some("y"));
        assert_eq!(cases[1].workdir, "repo/core");
        assert_eq!((cases[0].project(), cases[0].cwd().as_str()), ("repo", "/"));
        assert_eq!(
            (cases[1].project(), cases[1].cwd().as_str()),
            ("repo", "/core")
        );
        assert_eq!(cases[1].script, "# a comment\necho hi");
    }

    #[test]
    fn a_case_needs_a_source_and_a_line() {
        assert!(matches!(
            parse_cases("k", "ls"),
            Err(CorpusError::NoSource { index: 1, .. })
        ));
        assert!(matches!(
            parse_cases("k", "# source: x\nls"),
            Err(CorpusError::NoWorkdir { index: 1, .. })
        ));
        assert!(matches!(
            parse_cases("k", "# source: x\n# workdir: w\n"),
            Err(CorpusError::Empty { index: 1, .. })
        ));
    }

    fn case(order: &str) -> Case {
        parse_cases("k", &format!("# source: s\n# workdir: w\n{order}true"))
            .unwrap()
            .remove(0)
    }

    #[test]
    fn classifies_against_bash() {
        let line = case("");
        let bash = outcome("a\n", "", 0);
        let verdict = |engine: Outcome| classify(&line, &bash, &engine);
        assert_eq!(verdict(outcome("a\n", "noise", 0)), Verdict::Identical);
        assert_eq!(verdict(outcome("b\n", "", 0)), Verdict::Wrong);
        assert_eq!(verdict(outcome("a\n", "", 1)), Verdict::Wrong);
        let refused = outcome("", "bash: arrays: not supported in this sandbox\n", 2);
        assert_eq!(verdict(refused), Verdict::ClearError);
        let missing = outcome("", "bash: tac: command not found\n", 127);
        assert_eq!(verdict(missing), Verdict::ClearError);
        let redirected = outcome("sort: -c: not supported in this sandbox\n", "", 2);
        assert_eq!(verdict(redirected), Verdict::ClearError);
        // A refusal that exits 0 is still a different answer.
        let quiet = outcome("", "bash: trap: not supported in this sandbox\n", 0);
        assert_eq!(verdict(quiet), Verdict::Wrong);
        // A syntax error names no construct.
        let syntax = outcome("", "bash: syntax error near unexpected token `('\n", 2);
        assert_eq!(verdict(syntax), Verdict::Wrong);
    }

    #[test]
    fn an_unordered_line_is_compared_as_sorted_lines() {
        let bash = outcome("b:1\na:2\n", "", 0);
        let engine = outcome("a:2\nb:1\n", "", 0);
        assert_eq!(classify(&case(""), &bash, &engine), Verdict::Wrong);
        let unordered = case("# order: unspecified\n");
        assert!(unordered.unordered);
        assert_eq!(classify(&unordered, &bash, &engine), Verdict::Identical);
        let missing = outcome("a:2\n", "", 0);
        assert_eq!(classify(&unordered, &bash, &missing), Verdict::Wrong);
        assert!(parse_cases("k", "# source: s\n# workdir: w\n# order: any\ntrue").is_err());
    }

    #[test]
    fn the_allow_list_needs_reasons_and_unique_ids() {
        let list = AllowList::parse("# c\n\nawk/3  wrong  awk arrays\n").unwrap();
        assert_eq!(list.entries["awk/3"].reason, "awk arrays");
        assert_eq!(list.entries["awk/3"].verdict, Verdict::Wrong);
        assert!(AllowList::parse("awk/3 wrong\n").is_err());
        assert!(AllowList::parse("awk/3 maybe arrays\n").is_err());
        assert!(AllowList::parse("awk/3 wrong a\nawk/3 wrong b\n").is_err());
    }

    fn result(id: &str, verdict: Verdict) -> LineResult {
        let case = parse_cases(
            id.split('/').next().unwrap(),
            "# source: s\n# workdir: w\ntrue",
        )
        .unwrap()
        .remove(0);
        LineResult {
            case: Case {
                id: id.into(),
                ..case
            },
            bash: outcome("", "", 0),
            engine: outcome("", "", 0),
            verdict,
        }
    }

    #[test]
    fn the_gate_excuses_listed_lines_and_rejects_stale_entries() {
        let mut results: Vec<LineResult> = (1..=40)
            .map(|n| result(&format!("k/{n}"), Verdict::Identical))
            .collect();
        results.push(result("k/41", Verdict::Wrong));
        let empty = AllowList::default();
        assert!(!Gate::new(&results, &empty).passes());
        let listed = AllowList::parse("k/41 wrong not yet\n").unwrap();
        assert!(Gate::new(&results, &listed).passes());
        let stale = AllowList::parse("k/41 wrong not yet\nk/1 wrong fixed\n").unwrap();
        assert_eq!(Gate::new(&results, &stale).stale, vec!["k/1".to_string()]);
        let unknown = AllowList::parse("k/41 wrong not yet\nk/99 wrong gone\n").unwrap();
        assert_eq!(
            Gate::new(&results, &unknown).unknown,
            vec!["k/99".to_string()]
        );
        let other = AllowList::parse("k/41 clear-error refused\n").unwrap();
        assert!(!Gate::new(&results, &other).passes());
        assert_eq!(Gate::new(&results, &other).reclassified.len(), 1);
        // A clear error is not wrong, but it still counts against the identical share.
        results.push(result("k/42", Verdict::ClearError));
        let gate = Gate::new(&results, &listed);
        assert!(gate.passes(), "{:?}", gate.problems());
        for n in 43..=44 {
            results.push(result(&format!("k/{n}"), Verdict::ClearError));
        }
        assert!(!Gate::new(&results, &listed).passes());
    }

    #[test]
    fn tallies_by_kind() {
        let results = vec![
            result("awk/1", Verdict::Identical),
            result("awk/2", Verdict::Wrong),
            result("sed/1", Verdict::ClearError),
        ];
        let tally = Tally::new(&results);
        assert_eq!(tally.by_kind["awk"], [1, 0, 1]);
        assert_eq!(tally.totals(), [1, 1, 1]);
        assert!(
            tally
                .table("sandbox")
                .contains("| awk | 2 | 1 | 0 | 1 | 50.0 % |")
        );
    }
}
