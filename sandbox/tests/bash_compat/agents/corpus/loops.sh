# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/builtins/input_state.toml (getopts_basic_loop)
# workdir: scratch
f() {
  while getopts "a:b" opt; do
    case $opt in
      a) echo "a=$OPTARG" ;;
      b) echo "b" ;;
    esac
  done
}
f -a hello -b
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/control_flow/for_loop.toml (for_c_style)
# workdir: scratch
for ((i=0; i<3; i++)); do echo "$i"; done
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/control_flow/for_loop.toml (for_command_substitution)
# workdir: scratch
for w in $(echo "x y z"); do echo "$w"; done
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/control_flow/while_loop.toml (while_read_lines)
# workdir: scratch
printf "a\nb\nc\n" | while read line; do echo "got: $line"; done
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/control_flow/while_loop.toml (until_countup)
# workdir: scratch
i=1; until [ "$i" -gt 3 ]; do echo "$i"; i=$((i+1)); done
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/functions/basic_functions.toml (dollar_at_preserves_words)
# workdir: scratch
show_args() { for a in "$@"; do echo "[$a]"; done; }
show_args "hello world" "foo bar"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/word_splitting/ifs.toml (custom_ifs_colon)
# workdir: scratch
IFS=:; X="a:b:c"; for w in $X; do echo "[$w]"; done
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/word_splitting/ifs.toml (ifs_non_whitespace_preserves_empty)
# workdir: scratch
IFS=:; X=":a::b:"; for w in $X; do echo "[$w]"; done
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/loop-redirections-stdin.comparison.fixtures.json (1bb58c023a7e3d11)
# workdir: scratch
printf 'p1\np2\n' | until ! read l; do echo "u:$l"; done > out.txt
cat out.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/loop-redirections-stdin.comparison.fixtures.json (42305949b7a93f3e)
# workdir: fixtures/loop-redirections-stdin/42305949
while read l; do echo "[$l]"; done < in.txt > out.txt
cat out.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/loop-redirections-stdin.comparison.fixtures.json (90f788b3434d6ffa)
# workdir: fixtures/loop-redirections-stdin/90f788b3
while read l; do echo "got:$l"; done < in.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/loop-redirections-stdin.comparison.fixtures.json (ab01f4156de7358b)
# workdir: scratch
for i in 1 2; do
  while true; do echo "n$i"; break; done
done > out.txt
cat out.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/loop-redirections-stdin.comparison.fixtures.json (babe1561e72daf4a)
# workdir: fixtures/loop-redirections-stdin/babe1561
until ! read l; do echo "<$l>"; done < in.txt > out.txt
cat out.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/loop-redirections-stdin.comparison.fixtures.json (98da27b468bc4899)
# workdir: fixtures/loop-redirections-stdin/98da27b4
while read l; do echo "$l"; done < nosuch.txt > out.txt
echo "rc=$?"
cat out.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/pipeline-stdin.comparison.fixtures.json (0bdbc43af02c15df)
# workdir: fixtures/pipeline-stdin/0bdbc43a
n=0; while read a; do n=$((n+1)); echo a | cat | cat >/dev/null; done < loop.txt; echo "iterations: $n"
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/pipeline-stdin.comparison.fixtures.json (5305a9b560761fe3)
# workdir: fixtures/pipeline-stdin/5305a9b5
while read o; do while read i; do echo "$o$i"; echo x | cat >/dev/null; done < inner.txt; done < outer.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/pipeline-stdin.comparison.fixtures.json (b672a71408ce1733)
# workdir: fixtures/pipeline-stdin/b672a714
while read a; do echo "got:$a"; echo z | cat >/dev/null; done < loop.txt
