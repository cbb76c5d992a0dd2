wc -l < data/numbers.txt
