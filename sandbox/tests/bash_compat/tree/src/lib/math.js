function add(...xs) {
  return xs.reduce((a, b) => a + b, 0);
}

function mean(xs) {
  if (xs.length === 0) return 0; // TODO: decide on NaN
  return add(...xs) / xs.length;
}

module.exports = { add, mean };
