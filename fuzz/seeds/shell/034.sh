grep -c -A2 a data/names.csv
