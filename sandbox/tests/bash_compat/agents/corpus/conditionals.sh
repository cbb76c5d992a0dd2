# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/control_flow/case.toml (case_alternation)
# workdir: scratch
X=yes
case "$X" in
  yes|y) echo affirmative ;;
  no|n) echo negative ;;
esac
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/test.comparison.fixtures.json (142b3be2490b21d9)
# workdir: fixtures/test/142b3be2
test -f a.txt -a -f nonexistent && echo both || echo notboth
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/test.comparison.fixtures.json (4bb9ae673513f981)
# workdir: fixtures/test/4bb9ae67
test -s file.txt && echo nonempty || echo empty
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/test.comparison.fixtures.json (559d18b007565907)
# workdir: fixtures/test/559d18b0
test -f dir && echo file || echo not
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/test.comparison.fixtures.json (59e6197f30e2c6f9)
# workdir: fixtures/test/59e6197f
test -d dir && echo dir || echo not
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/test.comparison.fixtures.json (67cec0b058f75b10)
# workdir: scratch
NUM=10; test $NUM -gt 5 && echo greater || echo notgreater
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/test.comparison.fixtures.json (e87af379741409a8)
# workdir: fixtures/test/e87af379
[ -d dir -a -f dir/file ] && echo both || echo notboth
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/test.comparison.fixtures.json (9f128e60a6c2032e)
# workdir: scratch
[ 10 -gt 5 ] && echo greater || echo notgreater
