echo a > out.txt; echo b >> out.txt; cat out.txt
