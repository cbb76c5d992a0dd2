x='*'; case hello in "$x") echo literal;; $x) echo glob;; esac
