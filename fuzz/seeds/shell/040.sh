sort -t, -k4,4nr data/names.csv | head -3
