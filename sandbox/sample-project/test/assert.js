// A minimal assertion helper, so the tests need no Node built-ins (the browser sandbox
// resolves only files from the project).

function format(value) {
  return JSON.stringify(value);
}

function equal(actual, expected, message) {
  if (actual !== expected) {
    throw new Error(`${message || 'values differ'}: expected ${format(expected)}, got ${format(actual)}`);
  }
}

function deepEqual(actual, expected, message) {
  if (format(actual) !== format(expected)) {
    throw new Error(`${message || 'values differ'}: expected ${format(expected)}, got ${format(actual)}`);
  }
}

function throws(fn, message) {
  try {
    fn();
  } catch (error) {
    return;
  }
  throw new Error(message || 'expected an exception');
}

module.exports = { equal, deepEqual, throws };
