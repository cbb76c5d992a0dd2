# source: SWE-agent/mini-swe-agent src/minisweagent/config/default.yaml (command examples)
# workdir: repo
# adapted: cat of the new file appended
cat <<'EOF' > tests/newfile.py
import numpy as np
hello = "world"
print(hello)
EOF
cat tests/newfile.py
%%
# source: SWE-agent/mini-swe-agent tests/test_data/github_issue.traj.json
# workdir: repo
# adapted: cat of the new file appended
cat > tests/missing_colon.py << 'EOF'
#!/usr/bin/env python3


def division(a: float, b: float) -> float:
    if b == 0:
        raise ValueError("Cannot divide by zero")
    return a/b


if __name__ == "__main__":
    print(division(123, 15))
EOF
cat tests/missing_colon.py
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/here_documents/heredoc.toml (heredoc_variable_expansion)
# workdir: scratch
NAME=test
cat <<EOF
hello $NAME
EOF
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/here_documents/heredoc.toml (heredoc_quoted_delimiter_no_expansion)
# workdir: scratch
NAME=test
cat <<'EOF'
hello $NAME
EOF
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/here_documents/heredoc.toml (here_string_variable_expansion)
# workdir: scratch
X=test; cat <<< "value is $X"
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/here-document.comparison.fixtures.json (7742179701e72ad0)
# workdir: scratch
cat <<EOF
hello
EOF
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/here-document.comparison.fixtures.json (7e3226eae423951e)
# workdir: scratch
NAME=World; cat <<'EOF'
Hello, $NAME!
EOF
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/here-document.comparison.fixtures.json (90e07df1af8bd75c)
# workdir: scratch
cat <<EOF
line1
line2
line3
EOF
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/here-document.comparison.fixtures.json (a31acf5a1a7b5949)
# workdir: scratch
NAME=World; cat <<EOF
Hello, $NAME!
EOF
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/here-document.comparison.fixtures.json (dedf34103c400a8e)
# workdir: scratch
if [[ 1 -eq 1 ]]; then
cat <<EOF
hello from if
EOF
fi
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/loop-redirections-stdin.comparison.fixtures.json (1e0e9742faa27b5b)
# workdir: scratch
while read l; do echo "s:$l"; done <<< "hello" > out.txt
cat out.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/loop-redirections-stdin.comparison.fixtures.json (39035298fab339d9)
# workdir: scratch
while read l; do echo "h:$l"; done > out.txt <<EOF
alpha
beta
EOF
cat out.txt
%%
# source: vercel-labs/just-bash packages/just-bash/src/comparison-tests/fixtures/pipeline-stdin.comparison.fixtures.json (e9e20f01dcb7a424)
# workdir: scratch
n=0; while read a; do n=$((n+1)); true | true; done <<< $'L1\nL2\nL3'; echo "iterations: $n"
