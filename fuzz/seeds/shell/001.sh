ls README.md src/util.js
