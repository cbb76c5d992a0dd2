grep -B1 -n function src/lib/math.js src/util.js
