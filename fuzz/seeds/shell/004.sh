grep -c London data/names.csv
