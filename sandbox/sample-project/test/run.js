// Runs every test suite and exits 1 if any test fails. Suites are listed explicitly (no `fs`),
// so the runner works wherever `require` can resolve project files.

const suites = {
  paginate: require('./paginate.test'),
};

let passed = 0;
let failed = 0;

for (const [suite, tests] of Object.entries(suites)) {
  console.log(suite);
  for (const test of tests) {
    try {
      test.fn();
      passed += 1;
      console.log(`  ok   ${test.name}`);
    } catch (error) {
      failed += 1;
      console.log(`  FAIL ${test.name}`);
      console.log(`       ${error.message}`);
    }
  }
}

console.log(`\n${passed} passing, ${failed} failing`);
if (failed > 0) {
  process.exitCode = 1;
}
