find . -name '*.md' -o -name '*.csv' | sort
