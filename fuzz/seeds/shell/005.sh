grep -l function -r src | sort
