const assert = require("assert");

describe("routes", () => {
  it("has three routes", () => {
    assert.strictEqual(3, 3);
  });
  it.skip("remembers the last route", () => {});
});
