# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should join consecutive import lines)
# workdir: sed-refactor/code
sed 'N;s/\n/, /' imports.ts | head -2
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should convert hex colors to uppercase)
# workdir: sed-refactor/code
sed 'y/abcdef/ABCDEF/' css-vars.css
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should convert camelCase to snake_case style markers)
# workdir: sed-refactor/code
sed 'y/ABCDEFGHIJKLMNOPQRSTUVWXYZ/abcdefghijklmnopqrstuvwxyz/' case-conv.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should add line numbers to code)
# workdir: sed-refactor/code
sed '=' numbered.txt | head -6
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should convert single imports to barrel export)
# workdir: sed-refactor/code
sed 's/import/export/' imports.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should indent code blocks)
# workdir: sed-refactor/code
sed 's/^/  /' numbered.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should chain multiple sed commands with pipe)
# workdir: sed-edits/project
cat config.ts | sed 's/3000/8080/' | sed 's/5000/10000/'
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
rg --files webview/src | sed -n
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
cat tui/Cargo.toml | sed -n '1,200p'
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: line range 1200,1720 → 20,60
nl -ba core/src/parse_command.rs | sed -n '20,60p'
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: line range 2000,2200 → 10,40
sed -n '10,40p' tui/src/history_cell.rs
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: path and range for exec/src/event_processor_with_human_output.rs 260,640
sed -n '26,64p' core/src/lib.rs | nl -ba
%%
# source: SWE-agent/mini-swe-agent src/minisweagent/config/default.yaml (command examples)
# workdir: repo
# adapted: filename.py → tests/test_parse.py
nl -ba tests/test_parse.py | sed -n '10,20p'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/addresses.toml (step_address)
# workdir: scratch
printf "1\n2\n3\n4\n5\n6\n" | sed "1~2s/.*/{&}/"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/addresses.toml (mixed_range_line_regex)
# workdir: scratch
printf "a\nb\nc\nd\ne\n" | sed "2,/d/s/./X/"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/addresses.toml (negated_address)
# workdir: scratch
printf "a\nb\nc\n" | sed "2!s/./X/"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/commands.toml (append_text)
# workdir: scratch
printf "a\nb\n" | sed "1a\\added"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/commands.toml (insert_text)
# workdir: scratch
printf "a\nb\n" | sed "2i\\inserted"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/commands.toml (change_text)
# workdir: scratch
printf "a\nb\nc\n" | sed "2c\\changed"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/commands.toml (hold_space_swap)
# workdir: scratch
printf "first\nsecond\n" | sed -n "1h;2{x;p;}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/commands.toml (next_line_command)
# workdir: scratch
printf "a\nb\nc\n" | sed "/a/{n;s/b/B/;}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/commands.toml (command_grouping)
# workdir: scratch
printf "a\nb\nc\n" | sed -n "/b/{s/b/B/;p;}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/commands.toml (delete_empty_lines)
# workdir: scratch
printf "a\n\nb\n\nc\n" | sed "/^$/d"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/commands.toml (print_line_number)
# workdir: scratch
printf "a\nb\nc\n" | sed -n "2="
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/substitution.toml (nth_occurrence)
# workdir: scratch
printf "a a a a\n" | sed "s/a/b/3"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/substitution.toml (backreference)
# workdir: scratch
printf "hello world\n" | sed -E "s/(hello) (world)/\2 \1/"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/substitution.toml (substitute_with_print)
# workdir: scratch
printf "aaa\nbbb\n" | sed -n "s/aaa/xxx/p"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/substitution.toml (multiple_substitutions)
# workdir: scratch
printf "hello world\n" | sed -e "s/hello/hi/" -e "s/world/earth/"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/substitution.toml (case_insensitive_substitute)
# workdir: scratch
printf "Hello World\n" | sed "s/hello/hi/i"
