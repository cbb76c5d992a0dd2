mkdir -p a/b/c && touch a/b/c/d.txt && find a | sort
