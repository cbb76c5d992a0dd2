sort -t, -k4 -n data/names.csv
