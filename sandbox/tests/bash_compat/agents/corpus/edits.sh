# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should convert require to import using sed)
# workdir: module-migration/project
# adapted: the test's steps joined in order
sed -E "s/const express = require\('express'\);/import express from 'express';/g" src/index.js > src/index.js.new
mv src/index.js.new src/index.js
head -1 src/index.js
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should rename .js to .mjs files)
# workdir: module-migration/project
# adapted: the test's steps joined in order
mv src/utils/helpers.js src/utils/helpers.mjs
ls src/utils
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should update package.json type to module)
# workdir: module-migration/project
# adapted: the test's steps joined in order
grep "type" package.json || echo "No type field"
echo '{"name":"legacy-app","type":"module"}' > package.json
grep "type" package.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should update tsconfig module to ESNext)
# workdir: module-migration/project
# adapted: the test's steps joined in order
sed 's/"module": "CommonJS"/"module": "ESNext"/' tsconfig.json > tsconfig.json.new
mv tsconfig.json.new tsconfig.json
grep "module" tsconfig.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should backup files before migration)
# workdir: module-migration/project
# adapted: the test's steps joined in order
cp src/index.js src/index.js.bak
ls src | grep index
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should perform the rename using sed)
# workdir: rename-refactor/project
# adapted: the test's steps joined in order
sed 's/formatUserName/formatFullName/g' src/utils/string.ts > src/utils/string.ts.new
mv src/utils/string.ts.new src/utils/string.ts
grep "formatFullName" src/utils/string.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should verify no orphaned references after full rename)
# workdir: rename-refactor/project
# adapted: the test's steps joined in order
# order: unspecified
sed 's/formatUserName/formatFullName/g' src/utils/string.ts > src/utils/string.ts.new
mv src/utils/string.ts.new src/utils/string.ts
sed 's/formatUserName/formatFullName/g' src/utils/index.ts > src/utils/index.ts.new
mv src/utils/index.ts.new src/utils/index.ts
sed 's/formatUserName/formatFullName/g' src/components/UserCard.tsx > src/components/UserCard.tsx.new
mv src/components/UserCard.tsx.new src/components/UserCard.tsx
sed 's/formatUserName/formatFullName/g' src/components/UserList.tsx > src/components/UserList.tsx.new
mv src/components/UserList.tsx.new src/components/UserList.tsx
sed 's/formatUserName/formatFullName/g' src/services/user.ts > src/services/user.ts.new
mv src/services/user.ts.new src/services/user.ts
sed 's/formatUserName/formatFullName/g' src/tests/string.test.ts > src/tests/string.test.ts.new
mv src/tests/string.test.ts.new src/tests/string.test.ts
grep -r "formatUserName[^_]" src || echo "No orphaned references"
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should change API URL in config)
# workdir: sed-edits/project
# adapted: the test's steps joined in order
sed -i 's|http://localhost:3000|https://api.production.com|' config.ts
cat config.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should change debug flag to false)
# workdir: sed-edits/project
# adapted: the test's steps joined in order
sed -i 's/debug: true/debug: false/' config.ts
cat config.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should update timeout value)
# workdir: sed-edits/project
# adapted: the test's steps joined in order
sed -i 's/timeout: 5000/timeout: 10000/' config.ts
cat config.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should rename variable globally in file)
# workdir: sed-edits/project
# adapted: the test's steps joined in order
sed -i 's/userName/username/g' legacy.ts
cat legacy.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should rename function)
# workdir: sed-edits/project
# adapted: the test's steps joined in order
sed -i 's/getUserName/getUsername/g' legacy.ts
cat legacy.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should remove old comment)
# workdir: sed-edits/project
# adapted: the test's steps joined in order
sed -i '/Old naming convention/d' legacy.ts
cat legacy.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract email column (skip header))
# workdir: awk-data/data
awk -F, 'NR>1 {print $3}' users.csv
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should reformat CSV output)
# workdir: awk-data/data
awk -F, 'NR>1 {print $2 " <" $3 ">"}' users.csv
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should parse tab-separated values)
# workdir: awk-data/data
awk -F'\t' 'NR>1 {print $2, $3}' metrics.tsv
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should calculate average latency)
# workdir: awk-data/data
awk -F'\t' 'NR>1 {sum+=$3; count++} END{print sum/count}' metrics.tsv
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find max latency)
# workdir: awk-data/data
awk -F'\t' 'NR>1 && $3>max {max=$3} END{print max}' metrics.tsv
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
echo foo > bar
%%
# source: SWE-agent/mini-swe-agent src/minisweagent/config/default.yaml (command examples)
# workdir: repo
# adapted: old_string/new_string and filename.py filled in; a grep to show the edit
sed -i 's/DEFAULT_TIMEOUT/COMMAND_TIMEOUT/g' core/src/lib.rs && grep -n TIMEOUT core/src/lib.rs
%%
# source: SWE-agent/mini-swe-agent src/minisweagent/config/default.yaml (command examples)
# workdir: repo
# adapted: old_string/new_string and filename.py filled in; cat to show the edit
sed -i 's/turn/step/' docs/notes.md && cat docs/notes.md
%%
# source: SWE-agent/mini-swe-agent src/minisweagent/config/default.yaml (command examples)
# workdir: repo
# adapted: old_string/new_string and filename.py filled in; head to show the edit
sed -i '1s/agent loop/agent main loop/' core/src/lib.rs && head -3 core/src/lib.rs
%%
# source: SWE-agent/mini-swe-agent src/minisweagent/config/default.yaml (command examples)
# workdir: repo
# adapted: old_string/new_string and filename.py filled in; cat to show the edit
sed -i '1,10s/turn/step/g' docs/notes.md && cat docs/notes.md
%%
# source: SWE-agent/mini-swe-agent tests/test_data/github_issue.traj.json
# workdir: repo
# adapted: the traj's sed -i then cat, on this tree's file
sed -i 's/def parse(line)/def parse(line: str)/' tests/test_parse.py
cat tests/test_parse.py
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/arithmetic.toml (ternary_operator)
# workdir: scratch
echo '' | awk 'BEGIN { x = 5; print (x > 3 ? "big" : "small") }'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/patterns.toml (compound_expression_pattern)
# workdir: scratch
printf "1 10\n2 20\n3 5\n" | awk "\$1 > 1 && \$2 > 10 { print }"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/sed/addresses.toml (regex_range_address)
# workdir: scratch
printf "a\nSTART\nb\nEND\nc\n" | sed "/START/,/END/s/^/>> /"
