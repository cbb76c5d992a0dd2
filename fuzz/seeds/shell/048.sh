function twice { echo "$1$1"; }; twice ab
