# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/basic.toml (field_access)
# workdir: scratch
echo '{"name":"alice","age":30}' | jq '.name'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/basic.toml (nested_field_access)
# workdir: scratch
echo '{"a":{"b":{"c":42}}}' | jq '.a.b.c'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/basic.toml (array_iteration)
# workdir: scratch
echo '[1,2,3]' | jq '.[]'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/basic.toml (pipe_operator)
# workdir: scratch
echo '{"users":[{"name":"alice"},{"name":"bob"}]}' | jq '.users[] | .name'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/basic.toml (raw_output)
# workdir: scratch
echo '{"name":"alice"}' | jq -r '.name'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/basic.toml (compact_output)
# workdir: scratch
echo '{"a":1,"b":2}' | jq -c '.'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/basic.toml (object_construction)
# workdir: scratch
echo '{"name":"alice","age":30}' | jq '{user: .name, years: .age}'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/basic.toml (string_interpolation)
# workdir: scratch
echo '{"name":"alice"}' | jq -r '"Hello, \(.name)"'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/basic.toml (arg_variable)
# workdir: scratch
jq -n --arg name alice '$name'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/basic.toml (argjson_variable)
# workdir: scratch
jq -n --argjson val 42 '$val + 1'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (map_function)
# workdir: scratch
echo '[1,2,3]' | jq 'map(. * 2)'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (select_function)
# workdir: scratch
echo '[1,2,3,4,5]' | jq '[.[] | select(. > 3)]'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (keys_function)
# workdir: scratch
echo '{"b":2,"a":1,"c":3}' | jq '[keys[]]'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (length_array)
# workdir: scratch
echo '[1,2,3]' | jq 'length'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (has_function)
# workdir: scratch
echo '{"name":"alice"}' | jq 'has("name")'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (to_entries_function)
# workdir: scratch
echo '{"a":1}' | jq '[to_entries[]]'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (unique_function)
# workdir: scratch
echo '[1,2,1,3,2]' | jq 'unique'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (alternative_operator)
# workdir: scratch
echo '{"a":null}' | jq '.a // "default"'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (reduce_function)
# workdir: scratch
echo '[1,2,3,4,5]' | jq 'reduce .[] as $x (0; . + $x)'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (split_and_join)
# workdir: scratch
echo '"a,b,c"' | jq 'split(",") | join("-")'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/filters.toml (test_regex)
# workdir: scratch
echo '"hello123"' | jq 'test("[0-9]+")'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/types.toml (slurp_mode)
# workdir: scratch
printf '1
2
3
' | jq -s '.'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/types.toml (exit_status_false)
# workdir: scratch
echo 'false' | jq -e '.'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/types.toml (sort_keys)
# workdir: scratch
echo '{"b":2,"a":1}' | jq -S '.'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/types.toml (if_then_else)
# workdir: scratch
echo '5' | jq 'if . > 3 then "big" else "small" end'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/jq/types.toml (invalid_json_error)
# workdir: scratch
echo 'not json' | jq '.'
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (0c29bfa5bb213ca7)
# workdir: fixtures/jq/0c29bfa5
jq 'add' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (1eee3b8ed9a28b4d)
# workdir: fixtures/jq/1eee3b8e
jq 'keys' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (22ace437afb05029)
# workdir: fixtures/jq/22ace437
jq -r '.name' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (23c97b80a1a55790)
# workdir: fixtures/jq/23c97b80
jq '.data | .value' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (2ae5488e94cb05cc)
# workdir: fixtures/jq/2ae5488e
jq 'split(",")' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (3a5bd13032387ef1)
# workdir: fixtures/jq/3a5bd130
jq 'reverse' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (71b1316136a76f95)
# workdir: fixtures/jq/71b13161
jq 'map(. * 2)' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (784cdf05d7bd0991)
# workdir: fixtures/jq/784cdf05
jq '[.[] | select(. > 3)]' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (8105f346b43748a2)
# workdir: fixtures/jq/8105f346
jq 'sort' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (937a32a880c8c8cd)
# workdir: fixtures/jq/937a32a8
jq -c '.' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (aac68dc54a55fad2)
# workdir: fixtures/jq/aac68dc5
jq -s '.' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (b8e1ebdad148a952)
# workdir: scratch
jq -n '[range(5)]'
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (c0f228f8add71471)
# workdir: fixtures/jq/c0f228f8
jq '.a.b' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (de6ea82b7109ba1d)
# workdir: fixtures/jq/de6ea82b
jq '.[-1]' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (eecd9132c8f55a66)
# workdir: fixtures/jq/eecd9132
jq 'join("-")' data.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/jq.comparison.fixtures.json (f1149342c3f0e494)
# workdir: fixtures/jq/f1149342
jq 'if . > 3 then "big" else "small" end' data.json
