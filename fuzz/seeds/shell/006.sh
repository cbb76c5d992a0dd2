grep -w log src/util.js
