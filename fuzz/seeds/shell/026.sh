cat data/names.csv | while IFS= read -r line; do echo "> $line"; done | head -2
