# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should list project structure)
# workdir: bug-investigation/project
ls .
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should read bug report)
# workdir: bug-investigation/project
cat BUGS.md
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should read the format utils file)
# workdir: bug-investigation/project
cat src/utils/format.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should read the validation utils file)
# workdir: bug-investigation/project
cat src/utils/validate.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should find related test file)
# workdir: bug-investigation/project
ls tests
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should read format tests)
# workdir: bug-investigation/project
cat tests/format.test.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should read validate tests)
# workdir: bug-investigation/project
cat tests/validate.test.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/code-review.test.ts (should list project structure)
# workdir: code-review/project
ls .
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/code-review.test.ts (should read package.json)
# workdir: code-review/project
cat package.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/code-review.test.ts (should find TypeScript files in src)
# workdir: code-review/project
ls src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/code-review.test.ts (should review the main entry point)
# workdir: code-review/project
cat src/index.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should list root directory)
# workdir: monorepo/repo
ls .
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should read root package.json for workspaces)
# workdir: monorepo/repo
cat package.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should list all packages)
# workdir: monorepo/repo
ls packages
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should explore core package structure)
# workdir: monorepo/repo
ls packages/core
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should list core source files)
# workdir: monorepo/repo
ls packages/core/src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should read core exports)
# workdir: monorepo/repo
cat packages/core/src/index.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should check api package dependencies)
# workdir: monorepo/repo
cat packages/api/package.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should show directory sizes in human-readable format)
# workdir: disk-usage/project
du -h dist
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should summarize node_modules size)
# workdir: disk-usage/project
du -sh node_modules
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should show all file sizes with du -ah)
# workdir: disk-usage/project
# order: unspecified
du -ah logs
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should compare source vs build sizes)
# workdir: disk-usage/project
du -sh src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should compare source vs build sizes)
# workdir: disk-usage/project
du -sh dist
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should audit disk usage by directory)
# workdir: disk-usage/project
# order: unspecified
du -h --max-depth=1 .
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should list config files)
# workdir: config-analysis/app
ls config
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should read default configuration)
# workdir: config-analysis/app
cat config/default.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should read production configuration)
# workdir: config-analysis/app
cat config/production.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should list env files)
# workdir: config-analysis/app
ls -a .
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should read env example file)
# workdir: config-analysis/app
cat .env.example
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should read the comparison test file)
# workdir: feature-implementation/project
cat src/comparison-tests/ls.comparison.test.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should read the ls command implementation)
# workdir: feature-implementation/project
cat src/commands/ls/ls.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should read the fs implementation)
# workdir: feature-implementation/project
cat src/fs.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should list available log files)
# workdir: log-analysis/logs
ls .
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should format numbers with padding)
# workdir: scratch
printf '%05d\n' 42
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should format floats with precision)
# workdir: scratch
printf '%.2f\n' 3.14159
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should format hex numbers)
# workdir: scratch
printf '%x\n' 255
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should format with width specifier)
# workdir: scratch
printf '%10s\n' hello
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should left-justify with minus flag)
# workdir: scratch
printf '%-10s|\n' hello
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should format table-like output)
# workdir: scratch
printf '%-10s %5d %8.2f\n' Item 42 3.14
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
cat webview/README.md
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: ansi-escape → tui
printf "\n===== tui/Cargo.toml =====\n"; cat -- tui/Cargo.toml
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: webview/src added
ls -I '*.test.js' webview/src
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: src → core
tree -L 2 core
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
du -d 2 .
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
cat -- webview/README.md
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: foo/foo.txt → webview/README.md
cd webview && cat README.md
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: foo/foo.txt → core/Cargo.toml
bash -lc 'cd core && cat Cargo.toml'
%%
# source: SWE-agent/mini-swe-agent tests/test_data/github_issue.traj.json
# workdir: repo
# adapted: tests/missing_colon.py → tests/test_parse.py
cat tests/test_parse.py
%%
# source: SWE-agent/mini-swe-agent tests/test_data/github_issue.traj.json
# workdir: repo
echo 'hello world'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/parameter_transforms/basic.toml (printf_percent_q)
# workdir: scratch
printf '%q\n' 'hello world'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/read/flags.toml (read_delimiter_d)
# workdir: scratch
printf 'a:b:c' | { read -d : x; echo $x; }
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/read_builtin.toml (read_delimiter_empty_reads_to_eof)
# workdir: scratch
printf 'hello\nworld' | { read -r -d '' x; echo "$x"; }
