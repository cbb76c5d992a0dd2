{ echo a; echo b; } | wc -l
