//! `tether-sandbox`: runs one command line or one tool call in the sandbox over a real
//! directory, the way the playground runs it in the browser. It is how the shell is held
//! against real bash and how scenarios are debugged.
//!
//! ```text
//! tether-sandbox --root DIR [--write-back] -c 'COMMAND LINE'
//! tether-sandbox --root DIR [--write-back] --tool NAME --args JSON
//! tether-sandbox --root DIR [--write-back] --tool NAME --input TEXT   (freeform tool)
//! tether-sandbox --sample -c 'node test/run.js'                       (the sample project)
//! tether-sandbox --corpus DIR                       (every line of an agent corpus, against bash)
//! ```
//!
//! `--corpus` runs each line of the corpus in DIR (`sandbox/tests/bash_compat/agents`) through
//! real bash and through the sandbox, prints the per-kind table and every line that does not
//! agree, and exits 1 when the corpus's gate fails (see `tether_sandbox::corpus`).
//!
//! `node` runs through `NodeProcessRuntime` (the real `node` binary).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tether_sandbox::native::{NodeProcessRuntime, block_on, load_dir, write_back};
use tether_sandbox::{Sandbox, Vfs, sample_project};

const USAGE: &str = "usage: tether-sandbox (--root DIR | --sample) [--write-back] (-c 'COMMAND LINE' | --tool NAME (--args JSON | --input TEXT))\n       tether-sandbox --corpus DIR";

enum Action {
    Shell(String),
    Tool { name: String, arguments: String },
    CustomTool { name: String, input: String },
}

struct Invocation {
    root: Option<PathBuf>,
    sample: bool,
    write_back: bool,
    action: Action,
}

fn parse_args(args: &[String]) -> Result<Invocation, String> {
    let mut root = None;
    let mut sample = false;
    let mut write_back = false;
    let mut command = None;
    let mut tool = None;
    let mut arguments = None;
    let mut input = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let mut value = |flag: &str| {
            iter.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--root" => root = Some(PathBuf::from(value("--root")?)),
            "--sample" => sample = true,
            "--write-back" => write_back = true,
            "-c" => command = Some(value("-c")?),
            "--tool" => tool = Some(value("--tool")?),
            "--args" => arguments = Some(value("--args")?),
            "--input" => input = Some(value("--input")?),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    let action = match (command, tool, arguments, input) {
        (Some(line), None, None, None) => Action::Shell(line),
        (None, Some(name), Some(arguments), None) => Action::Tool { name, arguments },
        (None, Some(name), None, Some(input)) => Action::CustomTool { name, input },
        _ => return Err("give either -c, or --tool with --args or --input".into()),
    };
    if root.is_none() && !sample {
        return Err("give --root DIR or --sample".into());
    }
    if write_back && root.is_none() {
        return Err("--write-back needs --root".into());
    }
    Ok(Invocation {
        root,
        sample,
        write_back,
        action,
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir] = args.as_slice()
        && flag == "--corpus"
    {
        return run_corpus(Path::new(dir));
    }
    let invocation = match parse_args(&args) {
        Ok(invocation) => invocation,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("tether-sandbox: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let vfs = match (&invocation.root, invocation.sample) {
        (_, true) => sample_project(),
        (Some(root), false) => match load_dir(root) {
            Ok(vfs) => vfs,
            Err(e) => {
                eprintln!("tether-sandbox: cannot load {}: {e}", root.display());
                return ExitCode::from(2);
            }
        },
        (None, false) => Vfs::new(),
    };
    let mut sandbox = Sandbox::new(vfs).with_js_runtime(Box::new(NodeProcessRuntime::default()));
    let code = match &invocation.action {
        Action::Shell(line) => {
            let output = block_on(sandbox.run_shell(line));
            print!("{}", output.stdout);
            eprint!("{}", output.stderr);
            output.exit_code
        }
        Action::Tool { name, arguments } => {
            let result = block_on(sandbox.call_tool(name, arguments));
            println!("{}", result.output);
            i32::from(!result.success)
        }
        Action::CustomTool { name, input } => {
            let result = block_on(sandbox.call_custom_tool(name, input));
            println!("{}", result.output);
            i32::from(!result.success)
        }
    };
    if invocation.write_back
        && let Some(root) = &invocation.root
        && let Err(e) = write_back(sandbox.vfs(), root)
    {
        eprintln!(
            "tether-sandbox: cannot write back to {}: {e}",
            root.display()
        );
        return ExitCode::from(2);
    }
    ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1))
}

/// `--corpus DIR`: the agent corpus against bash, the table and the disagreements printed.
fn run_corpus(dir: &Path) -> ExitCode {
    use tether_sandbox::corpus::{self, Corpus, Gate, Tally};
    let corpus = match Corpus::load(dir) {
        Ok(corpus) => corpus,
        Err(e) => {
            eprintln!("tether-sandbox: {e}");
            return ExitCode::from(2);
        }
    };
    let total = corpus.cases.len();
    let mut done = 0;
    let results = corpus::run_all(&corpus, |id| {
        done += 1;
        eprint!("\r{done}/{total} {id:<32}");
    });
    eprintln!();
    let results = match results {
        Ok(results) => results,
        Err(e) => {
            eprintln!("tether-sandbox: cannot run bash: {e}");
            return ExitCode::from(2);
        }
    };
    print!(
        "{}",
        corpus::describe_disagreements(&results, &corpus.allowed)
    );
    println!("{}", Tally::new(&results).table("sandbox"));
    let gate = Gate::new(&results, &corpus.allowed);
    if gate.passes() {
        println!("the gate passes");
        ExitCode::SUCCESS
    } else {
        for problem in gate.problems() {
            println!("{problem}");
        }
        ExitCode::FAILURE
    }
}
