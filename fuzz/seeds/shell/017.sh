cd src/lib; cat math.js | grep -c function
