cp -r src copy && find copy -type f | sort
