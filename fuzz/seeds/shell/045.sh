greet() { echo "hello $1 ($#)"; }; greet world; greet a b
