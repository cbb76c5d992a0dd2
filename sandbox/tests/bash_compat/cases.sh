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
grep -rn log src/util.js
%%
grep -R -c TODO src/util.js src/app.js
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
for i in 1 2; do (break); echo "after $i"; done 2>/dev/null; for i in 1 2; do x=$(continue); echo "sub $i"; done 2>/dev/null; f() { (return 3); echo "returned $?"; x=$(return 4); echo "sub $?"; }; f
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

%%
IFS=, read -r a b c <<< "1,2,3,4"; echo "[$a][$b][$c]"
%%
IFS=, read -r a b c <<< " 1 , 2 ,3"; echo "[$a][$b][$c]"
%%
while IFS=, read -r name age; do echo "$name is $age"; done < data/names.csv
%%
cat data/names.csv | while IFS=, read -r a b; do echo "$b:$a"; done
%%
IFS=: read -ra arr <<< "a:b::c:"; echo ${#arr[@]} "${arr[@]}"
%%
read -d , x <<< "ab,cd"; echo "[$x] $?"
%%
read -n 3 x <<< "abcdef"; echo "[$x] $?"
%%
printf "a b" | { read x y; echo "[$x][$y] $?"; }
%%
read a b <<< "  x   y  z  "; echo "[$a][$b]"
%%
echo 'a\ b c' | { read x y; echo "[$x][$y]"; }
%%
echo $((2**10)) $(( 5>3 ? 10 : 20 )) $((1<<4)) $((~5)) $((7&3|8^1))
%%
echo $((x=3, x+=2, x++ , x))
%%
let x=5 y=x*2; echo $x $y $?
%%
((0)); echo $?; ((5)); echo $?
%%
for ((i=0;i<3;i++)); do echo $i; done
%%
for ((i=10; i>0; i-=3)) { echo $i; }
%%
a=(1 2 3); echo $((a[1]+a[2])) $((a)) ${#a[@]}
%%
x=(a b); x+=(c); x+=d; declare -p x
%%
declare -A m=([a]=1 [b]=2); declare -p m; m+=([c]=3); echo ${#m[@]}
%%
declare -i n=5; n+=3; n=n*2; echo $n; declare -p n
%%
x="a b"; f(){ local y=$x; echo "[$y]"; }; f
%%
declare -a arr=(one "two three"); printf "[%s]" "${arr[@]}"; echo; printf "[%s]" ${arr[@]}; echo; printf "[%s]" "${arr[*]}"; echo
%%
a=(x y z); echo "${a[@]:1}" "${a[@]:1:1}" "${!a[@]}" "${#a[1]}"
%%
IFS=,; a=(x y z); echo "${a[*]}"; echo "$*"
%%
set -- a b c; IFS=-; echo "$*"; echo $*
%%
x="a,,b,"; IFS=,; printf "[%s]" $x; echo
%%
unset a; a[3]=x; a[1]=y; echo "${!a[@]}" ${#a[@]}; unset "a[3]"; echo "${a[@]}"
%%
readonly x=1; x=2; echo after $?
%%
echo $((1/0)); echo after $?
%%
declare -A counts; for w in a b a c b a; do counts[$w]=$((counts[$w]+1)); done; for k in "${!counts[@]}"; do echo "$k ${counts[$k]}"; done
%%
declare -A counts; for w in a b a c b a; do ((counts[$w]++)); done; for k in "${!counts[@]}"; do echo "$k ${counts[$k]}"; done | sort
%%
while read -r line; do echo "got $line"; done < <(head -2 notes.txt)
%%
cat <(echo hi) <(echo there)
%%
echo <(true)
%%
echo hello > >(tr a-z A-Z)
%%
trap 'echo bye' EXIT; echo hi
%%
f() { trap 'echo cleanup' EXIT; echo work; }; f; echo after
%%
(trap 'echo sub' EXIT; echo in); echo out
%%
trap 'echo bye' EXIT; exit 3
%%
printf -v x "%05d" 42; echo $x
%%
x="hello world"; echo ${x//o/0} ${x/o/0} ${x:0:5} ${x: -5} ${x^^} ${x,,} ${x^}
%%
f=path/to/file.tar.gz; echo ${f##*/} ${f%%.*} ${f%.*} ${f#*/}
%%
x=hello; echo ${#x} ${x:1} ${x:1:-1}
%%
mapfile -t lines < notes.txt; echo ${#lines[@]}; echo "${lines[0]}"
%%
readarray -t arr < <(printf 'a\nb\nc\n'); echo "${arr[@]}" ${#arr[@]}
%%
arr=(); echo ${#arr[@]}; arr+=(x); echo ${arr[0]}
%%
files=(*.md); echo "${files[@]}"
%%
nums=($(seq 1 5)); echo ${nums[@]:2}
%%
a=(c b a); IFS=$'\n' sorted=($(sort <<<"${a[*]}")); unset IFS; echo "${sorted[@]}"
%%
echo $RANDOM | grep -c '^[0-9]*$'
%%
x=5; ((x > 3)) && echo big
%%
i=0; while ((i < 3)); do echo $i; ((i++)); done
%%
cat <<< "here string $HOME"
%%
set -- a b c; echo "${@:2}" "${@: -1}" "${#@}"
%%
declare -p nosuch; echo $?
%%
f() { local -a arr=(1 2 3); echo ${#arr[@]}; }; f; echo ${#arr[@]}
%%
x=abc; echo ${x@Q}
%%
v=name; name=val; echo ${!v}
%%
s="a-b-c"; echo "${s//-/ }"
%%
echo $(( 08 ))
%%
echo ${x!}; echo after
%%
set -u; echo $undefined_var; echo after
%%
echo ${undefined_var:?is required}; echo after
%%
x=$(false); echo $?
%%
line="a b  c"; for w in $line; do echo "[$w]"; done
%%
IFS=: ; p="/usr/bin:/bin::/x"; for d in $p; do echo "[$d]"; done
%%
x=" lead trail "; printf "[%s]" $x; echo
%%
IFS= read -r line <<< "   padded   "; echo "[$line]"
%%
printf 'one\ntwo\nthree' | while read -r l; do echo "$l"; done
%%
printf 'k1=v1\nk2=v2\n' | while IFS== read -r k v; do echo "$k -> $v"; done
%%
echo "a:b:c" | { IFS=: read -r -a parts; echo "${parts[1]} ${#parts[@]}"; }
%%
read -r first rest < notes.txt; echo "$first|$rest"
%%
while IFS=, read -r -a f; do echo "${f[1]}"; done < data/names.csv
%%
read x < /dev/null; echo "$? [$x]"
%%
cnt=0; while read -r _; do cnt=$((cnt+1)); done < notes.txt; echo $cnt
%%
echo ${undefined:-a b c} | wc -w
%%
a=(one two three); for i in "${!a[@]}"; do echo "$i=${a[$i]}"; done
%%
a=(one two three); echo ${a[-1]} ${a[@]: -2:1} ${#a[2]}
%%
a=(x y z); unset 'a[1]'; echo ${#a[@]} "${!a[@]}" "${a[@]}"
%%
a=(1 2 3); a[5]=6; echo ${#a[@]} ${!a[*]}; a+=(7); echo ${!a[@]}
%%
declare -A ages=([alice]=30 [bob]=25); echo ${ages[alice]} ${ages[bob]}; [[ -v ages[alice] ]] && echo has
%%
declare -A m; m[x]=1; m[y]=2; unset 'm[x]'; echo ${#m[@]} ${!m[@]}
%%
declare -A h=([one]=1 [two]=2 [three]=3 [four]=4); for k in "${!h[@]}"; do echo "$k=${h[$k]}"; done
%%
declare -A h=([one]=1 [two]=2); echo "${h[@]}"
%%
arr=("a b" c); f() { echo $#; }; f "${arr[@]}"; f ${arr[@]}; f "${arr[*]}"
%%
arr=(b c a); IFS=$'\n' sorted=($(printf '%s\n' "${arr[@]}" | sort)); echo "${sorted[*]}"
%%
s="hello"; for ((i=${#s}-1; i>=0; i--)); do printf %s "${s:i:1}"; done; echo
%%
sum=0; for n in 1 2 3 4; do ((sum += n)); done; echo $sum
%%
echo $(( (3 + 4) * 2 ** 3 % 5 )) $(( -7 / 2 )) $(( -7 % 3 )) $(( 0x10 + 010 + 2#11 ))
%%
x=7; echo $(( x > 5 && x < 10 )) $(( x == 7 ? 1 : 0 )) $(( x++ + ++x )) $x
%%
n=3; echo $((n*=2)) $n; ((n--)); echo $n
%%
let "a = 4 * 2" "b = a + 1"; echo $a $b
%%
(( 2 > 1 )) && echo yes || echo no; (( 0 )) || echo zero
%%
for ((i=0, j=10; i<j; i+=3, j-=3)); do echo $i $j; done
%%
for ((;;)); do echo once; break; done
%%
declare -i count=0; count+=5; count=count*2; echo $count
%%
declare -l lower=HeLLo; declare -u upper=world; echo $lower $upper
%%
readonly PI=3; echo $PI; PI=4 2>/dev/null; echo unreachable
%%
f() { local x=inner; echo $x; }; x=outer; f; echo $x
%%
f() { declare y=local; }; y=global; f; echo $y
%%
f() { declare -g z=set; }; f; echo $z
%%
g() { local -a list=("$@"); echo "${#list[@]}:${list[1]}"; }; g a "b c" d
%%
x=5; declare -p x; export x; declare -p x
%%
unset -v nope; echo $?; unset -f nofunc; echo $?
%%
s="The Quick Fox"; echo "${s,,}" "${s^^}" "${s,}"
%%
file="archive.tar.gz"; echo "${file%.gz}" "${file%%.*}" "${file#*.}" "${file##*.}"
%%
p="a/b/c"; echo "${p//\//_}" "${p/#a/A}" "${p/%c/C}"
%%
s="aaa"; echo "${s/a/b}" "${s//a/b}" "${s//a/}"
%%
v="x"; echo "${v:-d}" "${u:-d}" "${u-d}" "${v:+alt}" "${u:+alt}"; : ${w:=assigned}; echo $w
%%
s="0123456789"; echo ${s:3} ${s:3:2} ${s: -3} ${s: -3:2} ${s:(-4):2}
%%
msg='it'"'"'s'; echo "${msg@Q}"
%%
ref=target; target=value; echo "${!ref}"; arr=(1 2); ref2='arr[1]'; echo "${!ref2}"
%%
x=hello; y=${x^}; echo $y ${#y}
%%
printf -v line '%s-%s' a b; echo "$line"; printf -v n '%d' 42; echo $((n+1))
%%
mapfile -t arr < data/numbers.txt; echo "${#arr[@]} ${arr[0]} ${arr[-1]}"
%%
mapfile arr < notes.txt; printf '%s' "${arr[0]}"
%%
printf 'a,b,c' | mapfile -d , -t parts; echo "${#parts[@]}"
%%
mapfile -t -s 1 -n 2 arr < data/numbers.txt; echo "${arr[@]}"
%%
cat <(sort -u notes.txt) <(sort -r README.md) | head -3
%%
cat <(seq 3) - <(seq 4 6) <<< middle
%%
wc -l < <(cat notes.txt)
%%
sort <(printf 'b\na\n') | head -1
%%
echo data > >(cat >/dev/null); echo $?; echo x | cat > >(sed s/x/y/)
%%
trap 'echo done' EXIT; false; echo still
%%
trap 'echo "exit $?"' EXIT; exit 5
%%
set -e; trap 'echo trapped' EXIT; false; echo nope
%%
trap 'echo err' ERR; false; echo after
%%
tmp=$(mktemp 2>/dev/null || echo /tmp/x); trap 'rm -f "$tmp"' EXIT INT TERM; echo ok
%%
trap - EXIT; trap '' INT; echo fine
%%
x=$(echo a; exit 3); echo $? $x
%%
set -- one two three; echo $# "$2"; shift; echo "$@"; set --; echo $#
%%
set -- "a b" c; for a in "$@"; do echo "[$a]"; done; for a in $*; do echo "<$a>"; done
%%
cat <<< "$(echo multi; echo line)"
%%
grep -c line <<< $'line1\nline2\nother'
%%
words=(apple banana cherry); echo "${words[@]/a/A}" "${words[@]#?}" "${words[@]^}"
%%
a=(3 1 2); max=${a[0]}; for v in "${a[@]}"; do ((v > max)) && max=$v; done; echo $max
%%
i=0; until ((i >= 3)); do echo $i; ((i++)); done
%%
str="k1=v1;k2=v2"; IFS=';' read -ra pairs <<< "$str"; for p in "${pairs[@]}"; do echo "${p%%=*} ${p#*=}"; done
%%
declare -a stack=(); stack+=(a); stack+=(b); echo "${stack[-1]}"; unset 'stack[-1]'; echo "${#stack[@]}"
%%
x=010; echo $((x)) $((10#$x))
%%
echo $(( 1 << 62 )) $(( 9223372036854775807 + 1 ))
%%
[[ "2024-01-02" =~ ^([0-9]+)-([0-9]+)-([0-9]+)$ ]] && echo ${BASH_REMATCH[1]} ${BASH_REMATCH[3]} ${#BASH_REMATCH[@]}
%%
[[ ab =~ ((a))b ]] && echo "${BASH_REMATCH[@]}"; [[ x =~ ^x|y$ ]] && echo alt
%%
[[ "a b" =~ ^(a b)$ ]] && echo spaced; [[ abc =~ z ]]; echo $? ${#BASH_REMATCH[@]}
%%
while read -r line; do [[ $line =~ ^([a-z]+),([0-9]+) ]] && echo "${BASH_REMATCH[2]}"; done < data/names.csv
%%
x=1; [[ -v x ]] && echo set; [[ -v nope ]] || echo unset; a=(1); [[ -v a[0] ]] && echo elem; [[ -v a[3] ]] || echo noelem
%%
n=5; [[ n -gt 3 ]] && echo gt; [[ $((n*2)) -eq 10 ]] && echo ten
%%
for f in src/*.js; do echo "$(basename "$f" .js): $(wc -l < "$f")"; done
%%
find . -name "*.js" | while read -r f; do echo "${f#./}"; done | sort
%%
count=0; for f in $(find src -type f); do count=$((count+1)); done; echo "files: $count"
%%
if [ -f README.md ] && grep -q "#" README.md; then echo "has heading"; fi
%%
echo "Lines: $(cat notes.txt | wc -l)"; echo "Words: $(wc -w < notes.txt)"
%%
total=0; while read -r n; do total=$((total + n)); done < data/numbers.txt; echo "sum=$total avg=$((total / $(wc -l < data/numbers.txt)))"
%%
declare -A seen; while IFS=, read -r name city; do seen[$city]=1; done < data/names.csv; echo "${#seen[@]}"
%%
arr=($(ls src)); echo "${#arr[@]} entries: ${arr[*]}"
%%
set -euo pipefail; x=$(grep -c . notes.txt); echo "$x"
%%
set -euo pipefail; arr=(); echo "${#arr[@]}"; echo "${arr[@]:-empty}"
%%
printf '%s\n' "${PATH//:/$'\n'}" | head -2
%%
str="hello,world,foo"; IFS=',' read -ra parts <<< "$str"; for i in "${!parts[@]}"; do echo "$i: ${parts[$i]}"; done
%%
for i in {1..3}; do for j in {a..b}; do echo -n "$i$j "; done; done; echo
%%
name="World"; cat <<EOF
Hello, ${name}!
Sum: $((2 + 3))
Items: ${#name}
EOF
%%
func() { local result="$1-processed"; echo "$result"; }; out=$(func input); echo "Got: $out"
%%
max=0; for n in $(cat data/numbers.txt); do (( n > max )) && max=$n; done; echo $max
%%
echo "${HOME:-/root}" "${NOPE:-fallback}"
%%
check() { [[ -e "$1" ]] && return 0 || return 1; }; check notes.txt && echo yes; check nope || echo no
%%
x=3; case $x in [0-9]) echo digit;; *) echo other;; esac
%%
exts=(); for f in $(find . -type f -name "*.*"); do exts+=("${f##*.}"); done; printf '%s\n' "${exts[@]}" | sort | uniq -c | sort -rn | head -3
%%
i=0; while true; do ((i++)); [[ $i -ge 5 ]] && break; done; echo $i
%%
a=(5 3 8 1); for ((i=0; i<${#a[@]}; i++)); do for ((j=i+1; j<${#a[@]}; j++)); do if ((a[i] > a[j])); then t=${a[i]}; a[i]=${a[j]}; a[j]=$t; fi; done; done; echo "${a[@]}"
%%
s="racecar"; r=""; for ((i=${#s}-1; i>=0; i--)); do r+="${s:$i:1}"; done; [[ $s == "$r" ]] && echo palindrome
%%
words="one two three"; set -- $words; echo "$# $2"
%%
readonly -a CONST=(a b); echo "${CONST[1]}"
%%
echo $(( $(wc -l < notes.txt) * 2 ))
%%
f() { echo "args: $#"; for a; do echo "- $a"; done; }; f x "y z"
%%
OLDIFS=$IFS; IFS=:; for p in $PATH; do echo "$p"; done; IFS=$OLDIFS
%%
x="  trim me  "; x="${x#"${x%%[![:space:]]*}"}"; x="${x%"${x##*[![:space:]]}"}"; echo "[$x]"
%%
content=$(< notes.txt); echo "${#content}"
%%
case "b" in a) echo a;; b) echo b;& c) echo c;; d) echo d;; esac
%%
case "ab" in a*) echo one;;& *b) echo two;; esac
%%
command -v grep >/dev/null && echo has-grep; command -v nosuch || echo none
%%
type -t cd; type -t ls; f() { :; }; type -t f
%%
getopts_test() { while getopts "ab:" opt; do case $opt in a) echo A;; b) echo "B=$OPTARG";; esac; done; shift $((OPTIND-1)); echo "rest: $*"; }; getopts_test -a -b val x y
%%
{ echo out; echo err >&2; } 2>&1 | sort
%%
x=$[1+2]; echo $x
%%
time_it() { local start=$SECONDS; echo ran; }; time_it
%%
echo -e "a\tb\nc"
%%
wait; echo waited
%%
sleep 0; echo slept
%%
true & wait; echo bg
%%
hash -r; echo hashed
%%
echo $(( 16#ff )) $(( 2#1010 )) $(( 36#z ))
%%
f() { local -r c=1; echo $c; }; f
%%
declare -F | head -1; g() { :; }; declare -F g
%%
: "${X:=default}"; echo "$X"
%%
echo ~ ~/x
%%
arr=(a b c); echo "${arr[@]/#/pre-}" "${arr[@]/%/-post}"
%%
s=abc; echo "${s:1:1}" "${s: -1}" "${s:0:-1}"
%%
n=0; while read -r; do ((n++)); done < notes.txt; echo $n
%%
source /dev/null; echo sourced
%%
out=$( { echo a; echo b; } | wc -l ); echo $out
%%
pushd src >/dev/null && basename "$(pwd)"; popd >/dev/null; [ -d src ] && echo src; dirs | wc -w
%%
f() { OPTIND=1; while getopts ":ab:c" o; do case $o in a|c) echo "flag $o";; b) echo "b=$OPTARG";; :) echo "missing $OPTARG";; \?) echo "bad $OPTARG";; esac; done; shift $((OPTIND - 1)); echo "rest=$*"; }; f -ac -bX -z one two; f -b
%%
exec echo replaced; echo never
%%
command echo via-command; f() { echo fn; }; command -v f; type -t f echo ls if
%%
arr=(x y); echo "${arr[@]/#/-I}"; s=abc; echo "${s/#/>}" "${s/%/<}"
%%
%%
awk -F, 'NR>1 {c[$3]++} END {for (k in c) print k, c[k]}' data/names.csv
%%
awk '{count[$1]++} END {for (w in count) print count[w], w}' data/numbers.txt | sort -rn
%%
awk '{count[$1]++} END {for (w in count) print w, count[w]}' data/numbers.txt
%%
awk -F, 'NR>1 {sum[$3]+=$4; n[$3]++} END {for (c in sum) printf "%s %.1f\n", c, sum[c]/n[c]}' data/names.csv
%%
awk '!seen[$0]++' data/numbers.txt
%%
awk 'NR==FNR {a[$1]; next} ($1 in a)' data/numbers.txt data/numbers.txt | head -3
%%
awk 'FNR==1 {print FILENAME} END {print NR, FNR}' data/numbers.txt notes.txt
%%
awk 'BEGIN { n = split("a,b,c", parts, ","); for (i = 1; i <= n; i++) print i, parts[i] }'
%%
awk 'BEGIN { n = split("2024-01-15", d, "-"); print d[1], d[2]+0, d[3] }'
%%
awk 'function max(a, b) { return a > b ? a : b } { m = max(m, $1) } END { print m }' data/numbers.txt
%%
awk 'function fill(arr, n,   i) { for (i = 1; i <= n; i++) arr[i] = i * i } BEGIN { fill(sq, 4); for (i = 1; i <= 4; i++) printf "%d ", sq[i]; print "" }'
%%
awk 'BEGIN { a["x"] = 1; a["y"] = 2; delete a["x"]; for (k in a) print k; print length(a); delete a; print length(a) }'
%%
awk 'BEGIN { a[1,2] = "p"; for (k in a) { split(k, idx, SUBSEP); print idx[1], idx[2], a[k] } if ((1,2) in a) print "yes" }'
%%
awk '{ for (i = 1; i <= NF; i++) if ($i == "tests") { print NR, i; break } }' docs/guide.txt
%%
awk '{ for (i = 1; i <= NF; i++) { if (length($i) < 4) continue; w++ } } END { print w }' docs/guide.txt
%%
awk 'BEGIN { i = 0; do { i++ } while (i < 5); print i }'
%%
awk 'match($0, /[0-9]+/) { print RSTART, RLENGTH, substr($0, RSTART, RLENGTH) }' data/names.csv
%%
awk 'BEGIN { s = sprintf("%05.1f|%-6s|%x|%o|%e|%c", 3.14159, "ab", 255, 8, 12345.678, 65); print s }'
%%
awk 'BEGIN { printf "%5d|%-5d|%+d|% d|%05d\n", 42, 42, 42, 42, -42 }'
%%
awk 'BEGIN { printf "%.3g %g %G %10.4e\n", 1234.5678, 0.00001234, 1e-10, 6.02e23 }'
%%
awk 'BEGIN { while ((getline line < "data/numbers.txt") > 0) s += line; print s }'
%%
awk 'BEGIN { "echo hello" | getline x; print "got", x }'
%%
awk 'BEGIN { cmd = "sort -n data/numbers.txt"; while ((cmd | getline n) > 0) printf "%s ", n; close(cmd); print "" }'
%%
awk '{ print $1 | "sort -n" }' data/numbers.txt
%%
awk '{ print | "sort -u" } END { close("sort -u"); print "done" }' data/numbers.txt
%%
awk 'NR==1 { getline; print "second:", $0 } ' data/numbers.txt
%%
awk '{ getline nxt; print $0 "+" nxt }' data/numbers.txt
%%
awk -v x=5 'BEGIN { print x * 2 }'
%%
awk -v 's=a\tb' 'BEGIN { print s }'
%%
awk '{ print v, $1 }' v=1 data/numbers.txt | head -2
%%
awk 'BEGIN { print ENVIRON["HOME"] }'
%%
awk 'BEGIN { print length("hello"), length() }' < /dev/null
%%
awk 'BEGIN { print toupper("abc") tolower("DEF"), int(-3.7), int("12abc") }'
%%
awk 'BEGIN { x = "A"; x = x "B" x; print x; print 1 " " 2, 1 2 }'
%%
awk 'BEGIN { print 7 % 3, -7 % 3, 2 ^ 10, 2 ** 3 }'
%%
awk 'BEGIN { print 10 / 4; print 1 / 3 }'
%%
awk 'BEGIN { x; if (x == 0 && x == "") print "both" }'
%%
awk '$1 > 10' data/numbers.txt
%%
awk '$1 == "7"' data/numbers.txt
%%
echo "10 9" | awk '{ print ($1 > $2), ("10" > "9") }'
%%
awk 'BEGIN { OFS = "-" } { $1 = $1 } 1' README.md
%%
awk '{ $3 = "X"; print; print NF }' README.md
%%
awk '{ NF = 2; print }' README.md
%%
awk 'BEGIN { FS = ":" } { print $1 }' /dev/null; echo a:b | awk -F: '{ print $2 }'
%%
printf 'a b\n\nc d\ne f\n\n\ng h\n' | awk 'BEGIN { RS = "" } { print NR ": " $1 "|" $NF }'
%%
printf 'a;b;c' | awk 'BEGIN { RS = ";" } { print NR, $0 }'
%%
awk 'END { print NR, $0 }' data/numbers.txt
%%
awk 'NR % 2 == 0 { next } { print }' data/numbers.txt
%%
awk '{ s = s $1 "," } END { sub(/,$/, "", s); print s }' data/numbers.txt
%%
awk '{ n = gsub(/[aeiou]/, "_"); print n, $0 }' README.md
%%
awk 'BEGIN { s = "hello world"; gsub(/o/, "[&]", s); print s; t = "aaa"; print gsub(/a/, "b", t), t }'
%%
awk 'BEGIN { s = "foo.bar"; sub(/\./, "\\&", s); print s }'
%%
awk 'length > 25' README.md docs/guide.txt
%%
awk '/^[A-Z]/ && !/ing/' docs/guide.txt
%%
awk 'NF' notes.txt
%%
awk 'BEGIN { printf "%s\n", "no newline" > "out.txt"; close("out.txt"); while ((getline l < "out.txt") > 0) print "read:", l }'
%%
awk '{ print > ($1 > 10 ? "big.txt" : "small.txt") } END { close("big.txt"); close("small.txt"); system("cat big.txt") }' data/numbers.txt
%%
awk 'BEGIN { system("echo from system"); print "after" }'
%%
awk 'BEGIN { r = system("false"); print "status", r }'
%%
awk 'BEGIN { exit } END { print "end runs" }'
%%
awk '{ exit $1 }' data/numbers.txt; echo "code $?"
%%
awk 'BEGIN { print index("foobar", "bar"), index("foobar", "z") }'
%%
awk 'BEGIN { print substr("abcdef", 3, 2) substr("xyz", 2) }'
%%
awk 'function fact(n) { return n <= 1 ? 1 : n * fact(n - 1) } BEGIN { print fact(10) }'
%%
awk 'function f(a) { a[1] = "changed" } BEGIN { x[1] = "orig"; f(x); print x[1] }'
%%
awk 'function g(s) { s = "changed"; return s } BEGIN { y = "orig"; g(y); print y }'
%%
awk 'BEGIN { while (i < 3) { i++; if (i == 2) continue; print i } }'
%%
awk -F'\t' '{ print NF }' notes.txt
%%
awk -F '[,:]' '{ print $2 }' data/names.csv | head -2
%%
awk 'BEGIN { FS = "," } NR > 1 { print $NF }' data/names.csv
%%
awk 'BEGIN { x["a"]; if ("a" in x) print "in"; if (!("b" in x)) print "not in"; print length(x) }'
%%
awk 'BEGIN { CONVFMT = "%.2g"; a = 3.14159; b = a ""; print b; OFMT = "%.1f"; print a, 10 }'
%%
awk 'BEGIN { split("b c a", arr); n = 0; for (k in arr) n++; print n, arr[1] arr[2] arr[3] }'
%%
awk -F, 'NR>1 { a[$3] = a[$3] (a[$3] ? ";" : "") $2 } END { for (c in a) print c ": " a[c] }' data/names.csv
%%
awk '{ lines[NR] = $0 } END { for (i = NR; i > 0; i--) print lines[i] }' data/numbers.txt
%%
awk 'BEGIN { printf("%s-%s\n", "a", "b") }'
%%
awk 'BEGIN { print -2^2, 2^3^2, !0 1 }'
%%
awk 'BEGIN { a = "10"; b = 9; print (a > b) }'
%%
awk '{ total += $1 } END { print total, total/NR, NR }' data/numbers.txt
%%
awk 'NR==2, NR==4 { print NR, $0 }' data/numbers.txt
%%
awk '/beta/ { print prev } { prev = $0 }' notes.txt
%%
awk 'BEGIN { getline; print "first: " $0; getline x; print "x=" x }' < data/numbers.txt
%%
awk 'BEGIN { print length(12345), length(1/4) }'
%%
awk 'BEGIN { print 1 == 1.0, "a" < "b", "abc" ~ /b/, "abc" ~ "^a" }'
%%
awk '{ sub(/^ +/, ""); print }' docs/guide.txt | tail -2
%%
awk 'BEGIN { str = "a-b-c"; n = split(str, arr, /-/); print n, arr[3] }'
%%
awk 'BEGIN { n = split("", arr); print n, length(arr) }'
%%
awk 'BEGIN { n = split("abc", chars, ""); print n, chars[1], chars[3] }'
%%
awk 'BEGIN{x="abc"; print x~"b" ? "yes" : "no"}'
%%
awk '{ printf "%-10s|%5.1f\n", $1, $1 / 3 }' data/numbers.txt | head -3
%%
awk 'BEGIN { srand(1); r = rand(); print (r >= 0 && r < 1) }'
%%
awk 'BEGIN { printf "%i|%5.2s|%%|%c\n", 3.9, "hello", "xyz" }'
%%
awk 'BEGIN { x = 1; x += 2; x *= 3; x -= 1; x /= 2; x %= 3; x ^= 2; print x }'
%%
awk 'BEGIN { a = 5; print a++ + ++a, a-- - --a, a }'
%%
awk '{ $2 = ""; print }' README.md | head -2
%%
awk 'BEGIN { print substr("hello", 2, 0) "|" substr("hello", 10) "|" }'
%%
awk -F, '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? OFS : ORS) }' data/names.csv
%%
awk 'BEGIN { printf "%s", "a" "b" > "/dev/stdout"; print "" }'
%%
awk 'nope(' data/numbers.txt; echo $?
%%
awk '{ print $1 }' missing.txt; echo $?
%%
awk 'BEGIN { print sqrt(16), exp(0), log(1), int(sin(0)), cos(0), atan2(0, 1) }'
%%
echo '{"a":{"b":[1,2,{"c":"x"}]},"d":null}' | jq '.a.b[2].c, .d, .a.b[-1], .a.b[1:], .missing'
%%
echo '[{"name":"a","v":3},{"name":"b","v":1}]' | jq -r '.[] | "\(.name)=\(.v)"'
%%
echo '[{"name":"a","v":3},{"name":"b","v":1}]' | jq 'sort_by(.v) | map(.name)'
%%
echo '[{"name":"a","v":3},{"name":"b","v":1}]' | jq -c 'map(select(.v > 2))'
%%
echo '{"b":1,"a":{"d":2,"c":3}}' | jq -S '.'
%%
echo '{"b":1,"a":2}' | jq 'keys, keys_unsorted, length, to_entries[0]'
%%
echo '{"a":1}' | jq '.b = 2 | .a += 10 | .c.d = "x"'
%%
echo '{"a":[1,2,3]}' | jq '.a |= map(. * 10) | del(.a[0])'
%%
echo '[1,[2,[3]]]' | jq -c 'flatten, flatten(1), add'
%%
echo '{"items":[{"id":1,"tags":["x","y"]},{"id":2,"tags":[]}]}' | jq -r '.items[] | select(.tags | length > 0) | .id'
%%
echo '[3,1,2]' | jq -c 'sort, min, max, reverse, (map(tostring) | join(","))'
%%
echo '{"a":"1","b":2}' | jq '(.a | tonumber) + .b, (.b | tostring), type'
%%
echo '"Hello World"' | jq 'ascii_downcase, ascii_upcase, length, split(" "), test("world"; "i"), startswith("Hell")'
%%
echo '[{"k":"x","v":1},{"k":"y","v":2},{"k":"x","v":3}]' | jq -c 'group_by(.k) | map({key: .[0].k, total: (map(.v) | add)})'
%%
echo '{"a":1,"b":null}' | jq -c 'with_entries(select(.value != null)), (to_entries | map(.key)), [paths]'
%%
echo '[1,2,3,4]' | jq -c '[.[] | if . % 2 == 0 then "even" else "odd" end], (map(select(. > 2)) | length), any(. > 3), all(. > 0)'
%%
echo '{"users":[{"n":"a","age":30},{"n":"b","age":20}]}' | jq -r '.users | map("\(.n): \(.age)") | .[]'
%%
echo '[1,2]' | jq -r '@csv, @tsv, @json, @sh'
%%
jq -n '[range(0;10;3)], ([limit(2; range(5))]), (first(range(3;9))), ("a" * 3), (10 / 4), (7 % 3)'
%%
jq -n --arg x 5 --argjson y '{"z":1}' '[$x, $y.z, ($x|tonumber) + 1]' -c
%%
echo '{"a":{"b":1}}' | jq '.a.b? // "none", (.x.y // "fallback"), (try error("boom") catch .)'
%%
echo '{"a":1}' | jq '.a as $v | {v: $v, doubled: ($v * 2)}'
%%
echo '[{"a":1},{"a":2}]' | jq 'reduce .[] as $i (0; . + $i.a), (map(.a) | unique), (.[0] | has("a")), ([.[].a] | index(2))'
%%
echo 'null' | jq '.[0], .a, length'
%%
echo '{"a":"x"}' | jq '.a.b'; echo "rc=$?"
%%
echo '[1,2' | jq '.'; echo "rc=$?"
%%
echo '{}' | jq 'frobnicate'; echo "rc=$?"
%%
echo '{"a":1}' | jq '.a |'; echo "rc=$?"
%%
printf '{"a":1}\n{"a":2}\n' | jq -c '.a' 
%%
printf '{"a":1}\n{"a":2}\n' | jq -s 'map(.a) | add'
%%
printf 'line1\nline2\n' | jq -R 'length'
%%
echo '{"a":[{"b":1},{"b":2}]}' | jq '[.a[].b], [.. | numbers], (.a | map(.b) | @text)'
%%
echo '"2024-01-15T10:00:00Z"' | jq 'split("T")[0] | split("-") | map(tonumber)' -c
%%
echo '{"name":"x","version":"1.2.3","deps":{"a":"^1","b":"~2"}}' | jq -r '.deps | to_entries[] | "\(.key)@\(.value)"'
%%
echo '[{"a":1,"b":2},{"a":3,"b":4}]' | jq -r '.[] | [.a, .b] | @tsv'
%%
echo '{"a":1.5,"b":100000000000,"c":1e100,"d":-0.001}' | jq -c '.'
%%
echo '["a","b"]' | jq 'index("b"), (.[] | ltrimstr("a")), (map(ascii_upcase) | join("-"))'
%%
echo '"abc123def"' | jq -c '[match("[0-9]+") | .string, .offset], sub("[0-9]+"; "-"), gsub("[a-z]"; "X")'
%%
echo 'a.b_c-d e!' | tr -c 'a-zA-Z0-9._-\n' '_'; echo "rc=$?"
%%
echo 'Hello World 123!' | tr -cd 'A-Za-z0-9 !\n'
%%
echo 'ab  cd,,ef' | tr -cs 'a-zA-Z' '\n'
%%
echo 'aabbcc' | tr -s 'a-c'
%%
echo 'a1b2' | tr -cs '0-9' 'X'; echo; echo "aXXb" | tr -cs 'a-z'
%%
echo 'Phone: 555-1234 ext 9' | tr -cd '0-9\n'
%%
echo 'User_ID 42' | tr -cd 'a-zA-Z0-9\n' | tr 'A-Z' 'a-z'
%%
echo 'hello' | tr 'a-y' 'b-z'
%%
echo 'a-b' | tr -d '-'
%%
echo 'x  y' | tr -s ' '
%%
printf '1K\n2M\n500\n1G\n100K\n-2K\n0\n1.5K\n' | sort -h
%%
printf '10K file\n2M other\n1K x\n' | sort -k1,1hr
%%
printf 'file1.10\nfile1.2\nfile1.1\nv2.0~rc1\nv2.0\nfile.tar.gz\nfile.tar\n.hidden\n' | sort -V
%%
printf 'a\nc\nb\n' | sort -c; echo "rc=$?"
%%
printf 'a\nb\nb\n' | sort -cu 2>&1; echo "rc=$?"
%%
printf 'b\na\n' | sort -C; echo "rc=$?"
%%
printf 'b 1\na 1\nc 0\n' | sort -s -k2,2n
%%
sort -o sorted.txt data/numbers.txt && head -3 sorted.txt
%%
printf '1e3\n5\n-inf\n2.5e-1\nx\n' | sort -g
%%
printf 'Mar x\njan y\nDEC z\nfoo\n' | sort -M
%%
printf '  b\n a\nc\n' | sort -b
%%
printf 'a-c\nab\na_b\n' | sort -d
%%
printf 'x12 b\nx03 a\ny01 c\n' | sort -k1.2,1.3n
%%
printf 'b\nB\na\nA\n' | sort -f
%%
printf '3\n1\n2\n' | sort -nr -k1,1 | head -1
%%
sort -n nope.txt 2>&1; echo "rc=$?"
%%
rev notes.txt | head -3
%%
tac notes.txt
%%
printf 'a\nb' | tac; printf 'x\ny\n' | rev
%%
grep beta notes.txt | tee out.txt | wc -l; cat out.txt
%%
echo one | tee -a notes.txt >/dev/null; tail -1 notes.txt
%%
echo x | tee missing/out.txt; echo "rc=$?"
%%
paste -d, notes.txt notes.txt | head -3
%%
seq 7 | paste - - -; seq 4 | paste -sd+
%%
comm -12 <(sort notes.txt) <(printf 'beta\ngamma\n' | sort)
%%
comm notes.txt <(printf 'zz\n'); echo "rc=$?"
%%
grep -m 1 -n a notes.txt; grep -c -m2 a notes.txt
%%
grep -m1 -A1 alpha notes.txt
%%
egrep -n 'alpha|beta' notes.txt; fgrep -c '.' notes.txt
%%
ls -d src docs notes.txt; ls -d */
%%
ls -r src; ls -I '*.md' docs
%%
ls -ld src | cut -c1-12; ls -lh data | head -3 | cut -c1-10
%%
cat -A notes.txt | head -4
%%
cat -sn notes.txt | head -5; printf 'a\tb\n\n\nc' | cat -bT
%%
wc -L notes.txt data/names.csv; cat notes.txt | wc -lL
%%
find . -path ./src/lib -prune -o -type f -print | sort
%%
find . \( -name '*.js' -o -name '*.csv' \) -print0 | tr '\0' '\n' | sort
%%
find src -path '*/lib' -prune -o -name '*.js' -exec echo {} \; | sort
%%
find src -name '*.js' -delete; find src | sort
%%
printf '%q\n' 'a b' "it's" '' '~x' '#y'; printf '%q\n' "$(printf 'x\ty')"
%%
printf 'a\101\0102\n'; printf '%b\n' 'c\0101\101'
%%
expr 6 \* 7; expr length alpha; expr substr notes 2 3; expr 5 / 0; echo "rc=$?"
%%
n=$(wc -l < notes.txt); expr $n + 1; expr notes.txt : '\(.*\)\.txt'; expr 0 \| ''; echo "rc=$?"
%%
yes | head -n 3; echo "${PIPESTATUS[@]}"
%%
yes ab cd | head -2 | tr a-z A-Z
%%
set -o pipefail; yes | head -1; echo $?
%%
yes | while read -r x; do echo "got $x"; break; done
%%
x=$(yes n | head -c 6); echo "[$x]"
%%
tree; tree -L 1 src docs; tree nope README.md; echo "rc=$?"
%%
printf 'a,b\r\nc,d,e\nno delim\n\377,x\nlast,one' | cut -d, -f2 | cat -A; printf 'k:v\n' | cut -s -d: -f3,1
%%
b="a[b]"; echo $((a[b])); echo "rc=$?"
%%
yes -- x | head -1; yes -n | head -1; echo "${PIPESTATUS[@]}"; x=; yes ${x:=1} | head -1; echo "[$x]"
%%
yes | { read -N 10000 v; echo "${#v} $?"; }
