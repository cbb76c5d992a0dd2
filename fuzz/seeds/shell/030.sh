grep -n '' notes.txt | tail -3
