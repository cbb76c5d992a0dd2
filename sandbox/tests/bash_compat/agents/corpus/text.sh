# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/code-review.test.ts (should count lines of code)
# workdir: code-review/project
wc -l src/index.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should count files in each package)
# workdir: monorepo/repo
ls packages/core/src | wc -l
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should count config lines)
# workdir: config-analysis/app
wc -l config/default.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should count total lines in files from stack trace)
# workdir: debugging/app
wc -l src/services/order.ts src/services/payment.ts src/validators/payment.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should get first few lines to check log format)
# workdir: log-analysis/logs
head -3 app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should get recent log entries)
# workdir: log-analysis/logs
tail -2 app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should count total log lines)
# workdir: log-analysis/logs
wc -l app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should count total lines of code to refactor)
# workdir: rename-refactor/project
cat src/utils/string.ts src/components/UserCard.tsx src/components/UserList.tsx | wc -l
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should count lines in each component)
# workdir: react-hooks/project
wc -l src/components/*.tsx
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should keep only alphanumeric and spaces)
# workdir: tr-sanitize/data
cat user-input.txt | tr -cd 'a-zA-Z0-9 \n'
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should keep only printable ASCII characters)
# workdir: tr-sanitize/data
echo 'Hello World 123!' | tr -cd 'A-Za-z0-9 !\n'
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should replace unsafe filename characters with underscores)
# workdir: tr-sanitize/data
cat filenames.txt | tr -c 'a-zA-Z0-9._-\n' '_'
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should normalize IDs to lowercase alphanumeric)
# workdir: tr-sanitize/data
cat ids.txt | tr -cd 'a-zA-Z0-9\n' | tr 'A-Z' 'a-z'
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract only letters for word analysis)
# workdir: tr-sanitize/data
head -1 user-input.txt | tr -cs 'a-zA-Z' '\n' | head -5
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract timestamp digits from log)
# workdir: tr-sanitize/data
head -1 log-entry.txt | tr -cd '0-9 :'
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should sanitize for SQL safety (remove quotes))
# workdir: tr-sanitize/data
echo "user'; DROP TABLE users;--" | tr -d "';"
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
head -n 50 Cargo.toml
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
head Cargo.toml
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: line number 522 → 22 (the file is shorter)
tail -n +22 README.md
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
tail -n 30 README.md
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
tail README.md
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/text-processing.comparison.fixtures.json (7a14e885fabc92c7)
# workdir: scratch
printf 'abc\ndef\nghi\n' | rev
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/text-processing.comparison.fixtures.json (cfa173ca06ac324b)
# workdir: scratch
echo 'a' | rev
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/text-processing.comparison.fixtures.json (bf352979f91a2354)
# workdir: scratch
printf 'a\n\nb\n' | nl -ba
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/uniq.comparison.fixtures.json (4baafcd0776bdda9)
# workdir: fixtures/uniq/4baafcd0
uniq -c test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/uniq.comparison.fixtures.json (5de0d1af06731848)
# workdir: fixtures/uniq/5de0d1af
sort test.txt | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/uniq.comparison.fixtures.json (740e9a36c7fe3331)
# workdir: fixtures/uniq/740e9a36
uniq -d test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/uniq.comparison.fixtures.json (c904ada5e9bd622a)
# workdir: fixtures/uniq/c904ada5
uniq -cd test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/uniq.comparison.fixtures.json (d2218cb430d74d51)
# workdir: fixtures/uniq/d2218cb4
uniq -u test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/uniq.comparison.fixtures.json (e1365a02d3cb07d7)
# workdir: fixtures/uniq/e1365a02
sort test.txt | uniq -c
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/tr.comparison.fixtures.json (06b38615c4fee0b4)
# workdir: fixtures/tr/06b38615
cat test.txt | tr -s '\n'
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/tr.comparison.fixtures.json (0f00e2b388db24a3)
# workdir: fixtures/tr/0f00e2b3
cat test.txt | tr '\t' ' '
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/tr.comparison.fixtures.json (16fee68ec84c6781)
# workdir: fixtures/tr/16fee68e
cat test.txt | tr -d '\n'
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/tr.comparison.fixtures.json (48af8d3cbc0dc282)
# workdir: fixtures/tr/48af8d3c
cat test.txt | tr -s ' '
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/tr.comparison.fixtures.json (9de9409449faf359)
# workdir: fixtures/tr/9de94094
cat test.txt | tr 'a-z' 'A-Z'
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/tr.comparison.fixtures.json (b46f146c5cab934a)
# workdir: fixtures/tr/b46f146c
cat test.txt | tr 'A-Z' 'a-z' | tr -s ' '
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/tr.comparison.fixtures.json (e56a3c786c9fa17c)
# workdir: fixtures/tr/e56a3c78
cat test.txt | tr -d '0-9'
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/cut.comparison.fixtures.json (0cba64b76da7f808)
# workdir: fixtures/cut/0cba64b7
cut -d: -f2-4 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/cut.comparison.fixtures.json (3e2ec57dea32ba0e)
# workdir: fixtures/cut/3e2ec57d
cut -d: -f1,3 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/cut.comparison.fixtures.json (4dadb8bb49cd2b8f)
# workdir: fixtures/cut/4dadb8bb
cut -c1-5 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/cut.comparison.fixtures.json (7e719d7ee4405bdb)
# workdir: fixtures/cut/7e719d7e
cut -c5- test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/cut.comparison.fixtures.json (82970bf54db893a1)
# workdir: fixtures/cut/82970bf5
cut -d, -f2 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/cut.comparison.fixtures.json (bcabce27d2a32b75)
# workdir: fixtures/cut/bcabce27
cut -f1 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/cut.comparison.fixtures.json (cdee4db0798144f5)
# workdir: fixtures/cut/cdee4db0
cut -d" " -f2 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (108dcbed2cd5782d)
# workdir: fixtures/sort/108dcbed
sort -t: -k2 -rn test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (22ec96c433c79739)
# workdir: fixtures/sort/22ec96c4
sort -h test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (335547cbd220ee19)
# workdir: fixtures/sort/335547cb
sort -ru test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (6f4906186ee7277d)
# workdir: fixtures/sort/6f490618
sort -c test.txt; echo $?
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (79606ee16219d028)
# workdir: fixtures/sort/79606ee1
sort -t: -k2 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (8a1b9d02adf9b973)
# workdir: fixtures/sort/8a1b9d02
sort -hr test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (9bc249b4bd9769ca)
# workdir: fixtures/sort/9bc249b4
sort -V test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (9bd8d04e1fe4c298)
# workdir: fixtures/sort/9bd8d04e
sort -k 2 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (c090a6aa528f173d)
# workdir: fixtures/sort/c090a6aa
sort -c test.txt 2>&1; echo $?
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (cad2b2e2302002a5)
# workdir: fixtures/sort/cad2b2e2
sort -nu test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/sort.comparison.fixtures.json (e9fe665b16497404)
# workdir: fixtures/sort/e9fe665b
sort -k 2 -n test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/head-tail.comparison.fixtures.json (216b8a0800cfe5d9)
# workdir: fixtures/head-tail/216b8a08
head -c 100 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/head-tail.comparison.fixtures.json (70b15d1e3fefb5d3)
# workdir: fixtures/head-tail/70b15d1e
tail -n +3 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/head-tail.comparison.fixtures.json (76f116b941107f5f)
# workdir: fixtures/head-tail/76f116b9
tail -c 5 test.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/head-tail.comparison.fixtures.json (95981fccb9696235)
# workdir: fixtures/head-tail/95981fcc
tail -n 2 a.txt b.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/head-tail.comparison.fixtures.json (a0d70a2bf1946c56)
# workdir: fixtures/head-tail/a0d70a2b
head -n 2 a.txt b.txt
