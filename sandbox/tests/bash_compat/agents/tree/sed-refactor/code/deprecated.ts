// @deprecated Use newFunc instead
function oldFunc() {
  return 1;
}

// @deprecated Will be removed in v2
function anotherOldFunc() {
  return 2;
}

function activeFunc() {
  return 3;
}