sed -n '/^function/=' src/lib/math.js
