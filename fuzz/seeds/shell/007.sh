find . -name '*.js' | sort
