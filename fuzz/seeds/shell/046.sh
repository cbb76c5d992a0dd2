f() { local x=inner; echo "$x"; return 3; }; x=outer; f; echo "$? $x"
