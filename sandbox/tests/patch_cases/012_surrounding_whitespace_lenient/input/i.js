if (x) {
    call();
}
