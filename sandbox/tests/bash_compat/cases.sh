ls
%%
ls -a
%%
ls -A src
%%
ls -R
%%
ls src docs
%%
ls nope; echo "code=$?"
%%
ls README.md src/util.js
%%
cat README.md
%%
cat -n notes.txt
%%
cat nope 2>/dev/null; echo $?
%%
head -n 3 docs/guide.txt
%%
head -2 data/names.csv
%%
head -n -2 data/numbers.txt
%%
tail -n 2 docs/guide.txt
%%
tail -n +4 data/names.csv
%%
head -n 1 README.md notes.txt
%%
wc -l data/numbers.txt
%%
wc data/names.csv
%%
wc -l < data/numbers.txt
%%
wc -w README.md docs/guide.txt
%%
cat data/numbers.txt | wc -c
%%
grep -n TODO src/util.js src/lib/math.js
%%
grep -rn TODO src | sort
%%
grep -ri error docs
%%
grep -c London data/names.csv
%%
grep -l function -r src | sort
%%
grep -v London data/names.csv
%%
grep -E '^[0-9]+,(Ada|Alan),' data/names.csv
%%
grep -F '...' src/app.js
%%
grep 'a\(d\|l\)a' data/names.csv
%%
grep -w log src/util.js
%%
grep -o '[0-9][0-9]*' data/names.csv | head -5
%%
grep nothing-here README.md; echo "status $?"
%%
grep -x beta notes.txt; echo $?
%%
grep -rl mean . | sort
%%
grep -c '' notes.txt
%%
find . -name '*.js' | sort
%%
find src -type d | sort
%%
find . -type f -path '*lib*'
%%
find . -maxdepth 1 -type f | sort
%%
find docs data -name '*.txt' | sort
%%
sed -n '2,4p' data/names.csv
%%
sed 's/London/Paris/g' data/names.csv
%%
sed '/^$/d' docs/guide.txt
%%
sed -n '/Error/,/E1/p' docs/guide.txt
%%
sed '1d;$d' data/numbers.txt
%%
sed -E 's/([a-z]+)\.js/\1.ts/' <<< 'app.js util.js'
%%
sed 's/a/A/2' notes.txt
%%
sed -i 's/TODO/DONE/' src/util.js && cat src/util.js
%%
sed -n '$p' README.md
%%
sed '3q' docs/guide.txt
%%
echo hello world
%%
echo -n no newline; echo
%%
echo -e 'tab\there\nline2'
%%
echo "quoted   spaces" 'single $HOME' \$escaped
%%
printf '%s=%d\n' a 1 b 2
%%
printf '%5s|%-5s|%03d\n' x y 7
%%
printf 'no newline'
%%
X=42; echo "x is $X and ${X}0"
%%
echo "${UNSET:-default} ${#X}"
%%
f=archive.tar.gz; echo ${f%.gz} ${f%%.*} ${f#*.} ${f##*.}
%%
false; echo "status $?"
%%
true && echo yes || echo no
%%
false && echo yes || echo no
%%
false || true; echo $?
%%
echo one; echo two; echo three
%%
echo a > out.txt; echo b >> out.txt; cat out.txt
%%
ls nope 2> err.txt; cat err.txt | wc -l
%%
ls nope README.md 2>&1 | wc -l
%%
cat < notes.txt | head -n 2
%%
cat <<EOF
home is $X and $((1+2))
EOF
%%
cat <<'EOF'
home is $HOME
EOF
%%
echo src/*.js
%%
echo */
%%
echo data/*.txt data/*.csv
%%
echo nomatch*
%%
cd src && pwd | sed 's#.*/##' && ls
%%
cd src/lib; cat math.js | grep -c function
%%
mkdir -p a/b/c && touch a/b/c/d.txt && find a | sort
%%
mkdir x; mkdir x 2>/dev/null; echo $?
%%
rm -r src && ls
%%
rm nope 2>/dev/null; echo $?
%%
rm -f nope; echo $?
%%
mv notes.txt renamed.txt && ls
%%
cp -r src copy && find copy -type f | sort
%%
cp README.md docs/ && ls docs
%%
sort data/numbers.txt
%%
sort -n data/numbers.txt
%%
sort -rn data/numbers.txt | head -3
%%
sort -u data/numbers.txt
%%
sort -t, -k4 -n data/names.csv
%%
sort data/numbers.txt | uniq -c
%%
sort -n data/numbers.txt | uniq
%%
cut -d, -f2 data/names.csv
%%
cut -d, -f1,3 data/names.csv
%%
cut -c1-5 README.md
%%
tr a-z A-Z < README.md
%%
echo 'hello   world' | tr -s ' '
%%
echo 'hello world' | tr -d lo
%%
nl src/util.js
%%
diff data/numbers.txt data/numbers.txt; echo $?
%%
printf '1\n2\n3\n' > a.txt; printf '1\nX\n3\n4\n' > b.txt; diff a.txt b.txt; echo $?
%%
for f in src/*.js; do echo "file: $f"; done
%%
for i in 1 2 3; do echo $((i * i)); done
%%
i=0; while [ $i -lt 3 ]; do echo $i; i=$((i+1)); done
%%
if [ -f README.md ]; then echo file; else echo none; fi
%%
if test -d nope; then echo dir; elif [ -d src ]; then echo src-dir; fi
%%
while read n; do echo "n=$n"; done < data/numbers.txt
%%
cat data/names.csv | while IFS= read -r line; do echo "> $line"; done | head -2
%%
echo "$(echo nested) and `echo backticks`"
%%
count=$(grep -c , data/names.csv); echo "rows: $count"
%%
nosuchcommand arg 2>/dev/null; echo "code $?"
%%
echo start; exit 3; echo never
%%
(cd src; pwd | sed 's#.*/##'); pwd | grep -c 'src$'
%%
{ echo a; echo b; } | wc -l
%%
echo 'it'\''s' "a \"quote\""
%%
echo $((7 / 2)) $((7 % 3)) $((2 + 3 * 4))
%%
seq 3
%%
seq 2 2 10 | tr '\n' ' '
%%
basename /a/b/c.txt .txt; dirname /a/b/c.txt
%%
! false; echo $?
%%
set -e; false; echo never
%%
test -s README.md && echo nonempty
%%
head -c 10 README.md
%%
tail -c 5 README.md
%%
echo a b c | cut -d' ' -f2-
%%
grep -n '' notes.txt | tail -3
%%
ls src | wc -l; ls -a | head -3
%%
echo "a,b;c" | tr ',;' '  '
%%
grep -rn "require(" --include='*.js' src | sort
%%
cat src/app.js | grep -E "console\.(log|error)" | wc -l
%%
sed -n '/^function/=' src/lib/math.js
%%
find . -name '*.md' -o -name '*.csv' | sort
%%
find . -type f ! -name '*.js' | sort
%%
echo "$X" unset-is-empty; Y=1 Z=2; echo $Y$Z
%%
grep -n -C 1 E1 docs/guide.txt
%%
grep -A1 London data/names.csv
%%
grep -B1 -n function src/lib/math.js src/util.js
%%
grep -c -A2 a data/names.csv
%%
for i in 1 2 3 4; do if [ $i = 3 ]; then break; fi; echo $i; done; echo after
%%
for i in 1 2 3; do [ $i = 2 ] && continue; echo $i; done
%%
for i in a b; do for j in 1 2 3; do [ $j = 2 ] && continue 2; echo $i$j; done; done
%%
n=0; while true; do n=$((n+1)); [ $n -ge 4 ] && break; done; echo $n
%%
find . -name '*.js' | sort | xargs wc -l
%%
ls data | xargs -I{} echo file: {}
%%
echo a b c d e | xargs -n 2 echo
%%
printf 'x\ny\n' | xargs echo
%%
env X=5 bash -c 'echo $X'
%%
grep -rl TODO src | sort | xargs grep -c TODO
%%
sort -t, -k3,3 -k1 data/names.csv
%%
sort -t, -k4,4nr data/names.csv | head -3
%%
printf 'b 2\na 10\nc 1\n' | sort -k2n
%%
printf 'b 2\na 10\nc 1\n' | sort -k1,1r
%%
find src -name '*.js' -exec grep -c require {} \; | sort
%%
find src -type f -exec wc -l {} + | sort
%%
find . -name 'nothing*' -exec echo {} \;; echo $?
%%
sed -i.bak 's/beta/BETA/' notes.txt && cat notes.txt notes.txt.bak | grep -ci beta
%%
mkdir -p new/{a,b}/{x,y} && find new | sort
%%
echo file{1..3}.txt {c..a} pre{,fix} '{a,b}' "{x,y}"
%%
echo a b | read x y; echo "[$x]"
%%
echo start | (exit 4); echo "piped exit $?"; cd src | true; pwd | grep -c src
%%
grep -P '\d{2},' data/names.csv | wc -l
%%
for f in README.md src/app.js data/names.csv x.py; do case "$f" in *.md) echo "doc $f";; *.js|*.ts) echo "code $f";; "data/"*) echo data;; *) echo "other $f";; esac; done
%%
case abc in
  a*c)
    echo matched
    ;;
  *)
    echo no
    ;;
esac
%%
x='*'; case hello in "$x") echo literal;; $x) echo glob;; esac
%%
greet() { echo "hello $1 ($#)"; }; greet world; greet a b
%%
f() { local x=inner; echo "$x"; return 3; }; x=outer; f; echo "$? $x"
%%
count() { n=0; for a in "$@"; do n=$((n+1)); done; echo $n; }; count "a b" c; count
%%
function twice { echo "$1$1"; }; twice ab
%%
printf 'echo "script got $1 and $2"\nshift\necho "now $1"\n' > s.sh; bash s.sh one two
%%
bash -c 'echo "$0 $1"' name arg
%%
fact() { if [ $1 -le 1 ]; then echo 1; else echo $(( $1 * $(fact $(( $1 - 1 ))) )); fi; }; fact 5
%%
[[ -f README.md && -d src ]] && echo both; [[ -f nope || -n x ]] && echo either
%%
f=app.js; [[ $f == *.js ]] && echo js; [[ $f == "*.js" ]] || echo not-literal; [[ $f != *.ts ]] && echo not-ts
%%
[[ abc123 =~ ^[a-z]+[0-9]+$ ]] && echo re; [[ ! -e missing ]] && echo absent; [[ 2 -lt 10 ]] && echo num; [[ b > a ]] && echo str
%%
x=""; if [[ -z $x ]]; then echo empty; fi; [[ ( -f README.md ) && ! ( -f nope ) ]]; echo $?
%%
awk '{print $1}' data/numbers.txt | head -3
%%
awk -F, 'NR>1 {print $2, $4}' data/names.csv
%%
awk -F, '$4 > 85 {print $2}' data/names.csv
%%
awk '/London/' data/names.csv
%%
awk -F, 'NR > 1 {s += $4} END {print s, NR, s/(NR-1)}' data/names.csv
%%
awk 'NR>=2 && NR<=4' docs/guide.txt
%%
awk '{print NF ": " $NF}' README.md
%%
awk 'length($0) > 20 {n++} END {print n+0}' docs/guide.txt
%%
awk -F, -v OFS=';' '{$1=$1; print}' data/names.csv | head -3
%%
awk 'BEGIN {for (i = 1; i <= 3; i++) printf "%d-%s\n", i, "x"}'
%%
awk '{gsub(/a/, "A"); print}' notes.txt
%%
awk '/^Error/,/E1/ {print NR": "$0}' docs/guide.txt
%%
echo "3 4" | awk '{print $1 * $2, $1 / $2, toupper("x") substr("hello", 2, 3), index("hello", "ll")}'
%%
awk -F, '$3 ~ /^L/ {print $2} $3 !~ /o/ {c++} END {print c}' data/names.csv
%%
awk 'BEGIN { x = 5; if (x > 3) print "big"; else print "small"; exit 3 } END { print "end" }'; echo $?
%%
awk -F, 'NR == 1 { next } { print $2 > "/dev/stderr" }' data/names.csv 2>/dev/null; echo $?
%%
printf 'a 1\nb 2\na 3\n' | awk '$1 == "a" { sum += $2 } END { printf "%.2f %5s|\n", sum / 2, "r" }'
%%
awk -F, 'NR > 1 { print $2 > ($3 ".txt") } END { print "split" }' data/names.csv && cat London.txt && ls *.txt | sort
