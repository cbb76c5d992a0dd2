sed 's/London/Paris/g' data/names.csv
