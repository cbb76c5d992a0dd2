for i in a b; do for j in 1 2 3; do [ $j = 2 ] && continue 2; echo $i$j; done; done
