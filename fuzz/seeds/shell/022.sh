for f in src/*.js; do echo "file: $f"; done
