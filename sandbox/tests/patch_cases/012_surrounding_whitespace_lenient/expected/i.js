if (x) {
    other();
}
