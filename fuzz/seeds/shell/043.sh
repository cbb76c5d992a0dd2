case abc in
  a*c)
    echo matched
    ;;
  *)
    echo no
    ;;
esac
