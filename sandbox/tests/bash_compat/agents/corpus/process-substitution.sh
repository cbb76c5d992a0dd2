# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/process_substitution/basic.toml (diff_two_process_substitutions)
# workdir: scratch
diff <(echo a) <(echo a) && echo same || echo diff
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/process_substitution/basic.toml (paste_two_process_substitutions)
# workdir: scratch
paste <(echo a) <(echo b)
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (15e473d07c753afb)
# workdir: scratch
printf 'a\nb\n' | tee >(grep -c b) > /dev/null
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (3e9af782dc7a5397)
# workdir: scratch
cat < <(printf 'a\nb\n')
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (437b3e98f8700886)
# workdir: scratch
cat <(echo hi) | tr a-z A-Z
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (46a63be8029de200)
# workdir: fixtures/process-substitution/46a63be8
comm -12 <(sort -u x.txt) <(sort -u y.txt)
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (4cf2c6c0d221a282)
# workdir: scratch
paste <(printf 'a\nb\n') <(printf '1\n2\n')
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (520c1a8824b37972)
# workdir: scratch
cat <(echo one) <(echo two) <(echo three)
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (65895a2e77a67686)
# workdir: scratch
wc -c < <(printf 'abc') | tr -d ' '
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (acc9bbbbbf618f16)
# workdir: scratch
while read -r l; do echo "got $l"; done < <(printf '1\n2\n')
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (adc3dbb2ce7f58b1)
# workdir: fixtures/process-substitution/adc3dbb2
diff <(sort a.txt) <(sort b.txt) > /dev/null; echo rc=$?
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (b308d68722b9f342)
# workdir: scratch
grep -q zzz <(echo hi); echo rc=$?
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (c39dc04d62db3b56)
# workdir: scratch
for (( i=0; i<(2); i++ )); do echo $i; done
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (d4ecc99e492f5734)
# workdir: scratch
diff <(echo a) <(echo b) > /dev/null; echo rc=$?
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (eea422fbeef2eec8)
# workdir: scratch
cat <(echo a; exit 3); echo rc=$?
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/process-substitution.comparison.fixtures.json (f2fc4c2ce711d7d5)
# workdir: scratch
cat <(echo a; echo b)
