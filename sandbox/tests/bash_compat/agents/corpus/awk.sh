# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should extract env variable names using awk with = separator)
# workdir: config-analysis/app
awk -F= '{print $1}' .env.example
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should extract env variable values using awk)
# workdir: config-analysis/app
awk -F= '{print $2}' .env.example
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should extract production env values)
# workdir: config-analysis/app
awk -F= '{print $2}' .env.production
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should format env as key: value using awk)
# workdir: config-analysis/app
awk -F= '{print $1 ": " $2}' .env.example
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should count env variables with awk NR and END)
# workdir: config-analysis/app
awk 'END{print NR}' .env.example
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should filter env lines with awk pattern)
# workdir: config-analysis/app
awk '/URL/' .env.example
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should extract timestamps using awk)
# workdir: log-analysis/logs
awk '{print $1, $2}' app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should extract IP addresses from access log)
# workdir: log-analysis/logs
awk '{print $1}' access.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should extract HTTP status codes from access log)
# workdir: log-analysis/logs
awk '{print $4}' access.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should filter ERROR lines with awk pattern)
# workdir: log-analysis/logs
awk '/ERROR/' app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should extract log level using awk)
# workdir: log-analysis/logs
awk '{print $3}' app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should print line numbers with awk NR)
# workdir: log-analysis/logs
awk '{print NR, $0}' access.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should filter by line number with awk NR condition)
# workdir: log-analysis/logs
awk 'NR==2' access.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should extract request paths from access log)
# workdir: log-analysis/logs
awk '{print $3}' access.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should use awk with pipe to filter and extract)
# workdir: log-analysis/logs
grep ERROR app.log | awk '{print $2}'
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should count fields with awk NF)
# workdir: log-analysis/logs
awk '{print NF}' access.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract specific column from CSV)
# workdir: awk-data/data
awk -F, '{print $2}' users.csv
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should filter rows by role)
# workdir: awk-data/data
awk -F, '$4=="admin"' users.csv
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should count users by role)
# workdir: awk-data/data
awk -F, '$4=="admin"' users.csv | wc -l
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should filter by status code)
# workdir: awk-data/data
awk -F'\t' '$4==500' metrics.tsv
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract unique IP addresses)
# workdir: awk-data/data
awk '{print $1}' access.log | sort | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should count requests per IP)
# workdir: awk-data/data
awk '{print $1}' access.log | sort | uniq -c | sort -rn
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find failed requests (non-200))
# workdir: awk-data/data
awk '$9!=200 {print $0}' access.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract request paths)
# workdir: awk-data/data
awk '{print $6}' access.log | sort | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find useState usage and extract hook names)
# workdir: react-hooks/project
grep -h 'useState' src/hooks/*.ts | awk '{print $1, $2, $3}'
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract all error blocks using pattern range)
# workdir: log-blocks
awk '/ERROR BLOCK START/,/ERROR BLOCK END/' logs/server.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract error blocks with custom formatting)
# workdir: log-blocks
awk '/ERROR BLOCK START/,/ERROR BLOCK END/ { print "  " $0 }' logs/server.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should count lines in error blocks)
# workdir: log-blocks
awk '/ERROR BLOCK START/,/ERROR BLOCK END/ { count++ } END { print count }' logs/server.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should combine record fields using getline)
# workdir: log-blocks
awk '/^RECORD:/ { id=$2; getline; split($0,a,": "); name=a[2]; getline; split($0,b,": "); email=b[2]; print id, name, email }' data/records.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract records with role field)
# workdir: log-blocks
awk '/RECORD: user001/,/END_RECORD/' data/records.txt | grep role
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should skip header lines using getline)
# workdir: log-blocks
awk '/^RECORD:/ { getline; print }' data/records.txt
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
awk '{print $1}' Cargo.toml
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/arithmetic.toml (division)
# workdir: scratch
echo '' | awk 'BEGIN { print 10 / 4 }'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/arithmetic.toml (exponentiation)
# workdir: scratch
echo '' | awk 'BEGIN { print 2 ^ 10 }'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/arithmetic.toml (string_to_number_coercion)
# workdir: scratch
printf "42abc\n" | awk "{ print \$1 + 0 }"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/builtins.toml (split_function)
# workdir: scratch
echo '' | awk 'BEGIN { n = split("a:b:c", arr, ":"); print n, arr[1], arr[2], arr[3] }'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/builtins.toml (match_function)
# workdir: scratch
echo '' | awk 'BEGIN { print match("hello123world", /[0-9]+/), RSTART, RLENGTH }'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/builtins.toml (sqrt_function)
# workdir: scratch
echo '' | awk 'BEGIN { print sqrt(16) }'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/builtins.toml (printf_format)
# workdir: scratch
echo '' | awk 'BEGIN { printf "%s is %d years old\n", "Alice", 30 }'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/builtins.toml (gsub_function)
# workdir: scratch
printf "aabbcc\n" | awk "{ gsub(/b/, \"X\"); print }"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/builtins.toml (sprintf_function)
# workdir: scratch
echo '' | awk 'BEGIN { s = sprintf("%05d", 42); print s }'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/fields.toml (ofs_variable)
# workdir: scratch
printf "a b c\n" | awk "BEGIN { OFS=\",\" } { print \$1, \$2, \$3 }"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/fields.toml (field_assignment_rebuilds_record)
# workdir: scratch
printf "a b c\n" | awk "BEGIN { OFS=\"-\" } { \$2 = \"X\"; print \$0 }"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/fields.toml (last_field_via_nf)
# workdir: scratch
printf "a b c\n" | awk "{ print \$NF }"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/fields.toml (v_flag_variable)
# workdir: scratch
printf "hello\n" | awk -v greeting=hi "{ print greeting, \$0 }"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/fields.toml (accumulate_with_end)
# workdir: scratch
printf "10\n20\n30\n" | awk "{ sum += \$1 } END { print sum }"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/fields.toml (associative_array)
# workdir: scratch
printf "a\nb\na\nc\na\n" | awk "{ count[\$1]++ } END { print count[\"a\"] }"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/fields.toml (for_in_array)
# workdir: scratch
printf "a\nb\na\n" | awk "{ count[\$1]++ } END { for (k in count) print k, count[k] }" | sort
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/patterns.toml (range_pattern)
# workdir: scratch
printf "a\nSTART\nb\nc\nEND\nd\n" | awk "/START/,/END/ { print }"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/patterns.toml (negated_regex)
# workdir: scratch
printf "apple\nbanana\ncherry\n" | awk "!/banana/ { print }"
