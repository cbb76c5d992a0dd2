echo src/*.js
