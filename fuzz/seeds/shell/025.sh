while read n; do echo "n=$n"; done < data/numbers.txt
