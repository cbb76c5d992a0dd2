! false; echo $?
