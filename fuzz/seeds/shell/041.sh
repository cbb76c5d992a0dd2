sed -i.bak 's/beta/BETA/' notes.txt && cat notes.txt notes.txt.bak | grep -ci beta
