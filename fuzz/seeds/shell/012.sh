f=archive.tar.gz; echo ${f%.gz} ${f%%.*} ${f#*.} ${f##*.}
