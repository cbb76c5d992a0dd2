head -n -2 data/numbers.txt
