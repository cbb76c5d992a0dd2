# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/declare/attributes.toml (declare_lowercase)
# workdir: scratch
declare -l x=HELLO
echo "$x"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/parameter_substitution.toml (global_replacement)
# workdir: scratch
X="hello world hello"; echo "${X//hello/hi}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/parameter_substitution.toml (substring_offset_length)
# workdir: scratch
X="hello world"; echo "${X:0:5}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/parameter_substitution.toml (substring_negative_offset)
# workdir: scratch
X="hello world"; echo "${X: -5}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/parameter_substitution.toml (case_upper_all)
# workdir: scratch
X="hello"; echo "${X^^}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/parameter_substitution.toml (case_lower_all)
# workdir: scratch
X="HELLO"; echo "${X,,}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/parameter_substitution.toml (prefix_removal_longest)
# workdir: scratch
X="foo/bar/baz"; echo "${X##*/}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/parameter_substitution.toml (suffix_removal_shortest)
# workdir: scratch
X="foo/bar/baz"; echo "${X%/*}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/parameter_substitution.toml (replacement_delete)
# workdir: scratch
X="hello world"; echo "${X/ world/}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/parameter_default.toml (assign_default_with_colon)
# workdir: scratch
unset Y; echo "${Y:=assigned}"; echo "$Y"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/parameter_default.toml (error_on_unset)
# workdir: scratch
unset MISSING; echo "${MISSING:?variable not set}" 2>/dev/null; echo $?
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/parameter_transforms/basic.toml (indirect_expansion_basic)
# workdir: scratch
target=hello
ref=target
echo "${!ref}"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/parameter_transforms/basic.toml (printf_v_assigns)
# workdir: scratch
printf -v result "hello %s" "world"
echo "$result"
