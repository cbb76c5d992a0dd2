for f in README.md src/app.js data/names.csv x.py; do case "$f" in *.md) echo "doc $f";; *.js|*.ts) echo "code $f";; "data/"*) echo data;; *) echo "other $f";; esac; done
