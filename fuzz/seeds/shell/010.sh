sed -i 's/TODO/DONE/' src/util.js && cat src/util.js
