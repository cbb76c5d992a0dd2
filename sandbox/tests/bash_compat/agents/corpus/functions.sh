# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/functions/basic_functions.toml (local_variable)
# workdir: scratch
f() {
  local X=inner
  echo "$X"
}
X=outer
f
echo "$X"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/functions/basic_functions.toml (return_value)
# workdir: scratch
is_even() {
  if [ $(($1 % 2)) -eq 0 ]; then return 0; else return 1; fi
}
is_even 4; echo $?
is_even 3; echo $?
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/functions/basic_functions.toml (recursive_function)
# workdir: scratch
countdown() {
  if [ "$1" -le 0 ]; then return; fi
  echo "$1"
  countdown $(($1 - 1))
}
countdown 3
