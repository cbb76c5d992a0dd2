# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/fields.toml (delete_array_element)
# workdir: scratch
echo '' | awk 'BEGIN { a["x"]=1; a["y"]=2; delete a["x"]; for(k in a) print k, a[k] }'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/awk/fields.toml (in_operator)
# workdir: scratch
echo '' | awk 'BEGIN { a["x"]=1; print ("x" in a), ("y" in a) }'
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/arrays/basic.toml (indexed_array_basic_assignment)
# workdir: scratch
arr=(one two three)
echo "${arr[0]}"
echo "${arr[1]}"
echo "${arr[2]}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/arrays/basic.toml (indexed_array_append)
# workdir: scratch
arr=(x y)
arr+=(z w)
echo "${arr[@]}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/arrays/basic.toml (array_at_vs_star_quoted)
# workdir: scratch
arr=(one two three)
for x in "${arr[@]}"; do echo "item:$x"; done
echo "---"
for x in "${arr[*]}"; do echo "joined:$x"; done
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/arrays/basic.toml (associative_array_basic)
# workdir: scratch
declare -A map
map[name]=alice
map[age]=30
echo "${map[name]}"
echo "${map[age]}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/arrays/basic.toml (associative_array_keys)
# workdir: scratch
declare -A map
map[x]=1
map[y]=2
map[z]=3
for k in $(echo "${!map[@]}" | tr ' ' '\n' | sort); do echo "$k"; done
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/arrays/basic.toml (array_length)
# workdir: scratch
arr=(a b c d e)
echo "${#arr[@]}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/arrays/basic.toml (unset_array_element)
# workdir: scratch
arr=(a b c d)
unset 'arr[1]'
echo "${arr[@]}"
echo "${#arr[@]}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/arrays/pipestatus_bash_rematch.toml (pipestatus_multi_stage_pipeline)
# workdir: scratch
false | true | false
echo "${PIPESTATUS[0]} ${PIPESTATUS[1]} ${PIPESTATUS[2]}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/arrays/pipestatus_bash_rematch.toml (bash_rematch_capture_group_1)
# workdir: scratch
[[ "abc-def" =~ ^([a-z]+)-([a-z]+)$ ]]
echo "${BASH_REMATCH[1]}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/builtins/input_state.toml (mapfile_t_strip_newline)
# workdir: scratch
mapfile -t arr <<EOF
one
two
three
EOF
echo "${arr[0]}"
echo "${arr[1]}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/builtins/input_state.toml (readarray_alias)
# workdir: scratch
readarray -t lines <<EOF
a
b
c
EOF
echo "${lines[1]}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/read/flags.toml (read_array_ra)
# workdir: scratch
echo "a b c" | { read -ra arr; echo "${arr[1]}"; }
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/read_builtin.toml (read_combined_ra)
# workdir: scratch
echo "1 2 3" | { read -ra nums; echo "${nums[0]}-${nums[2]}"; }
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/special_vars/call_stack.toml (funcname_current_function)
# workdir: scratch
greet() { echo "${FUNCNAME[0]}"; }
greet
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/pipeline-stdin.comparison.fixtures.json (357b2448ab3a26ea)
# workdir: fixtures/pipeline-stdin/357b2448
{ read a; false | true | false; echo "${PIPESTATUS[*]}"; read b; echo "b=[$b]"; } < loop.txt
