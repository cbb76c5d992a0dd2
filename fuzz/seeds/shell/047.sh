count() { n=0; for a in "$@"; do n=$((n+1)); done; echo $n; }; count "a b" c; count
