# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/declare/attributes.toml (declare_integer_assignment)
# workdir: scratch
declare -i x=5+3
echo "$x"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/arithmetic.toml (exponentiation)
# workdir: scratch
echo $((2 ** 10))
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/arithmetic.toml (compound_assignment)
# workdir: scratch
X=10; ((X += 5)); echo $X
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/arithmetic.toml (post_increment)
# workdir: scratch
X=5; echo $((X++)); echo $X
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/arithmetic.toml (ternary_operator)
# workdir: scratch
echo $((1 > 0 ? 42 : 99))
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/expansion/arithmetic.toml (arithmetic_command_exit_code_zero)
# workdir: scratch
((0)); echo $?
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (ec694650a83f0843)
# workdir: scratch
(( 3 > (1) )) && echo yes
