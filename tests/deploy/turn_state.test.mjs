// Turn-state routing through nginx (docs/deployment.md#a-turn-goes-back-where-it-began): the
// first answer of a turn hands the client a token naming the replica that served it
// (`x-codex-turn-state: t1.<replica>.…`); the client sends it back on the turn's later requests
// and nginx routes them to that replica — whose engine prompt cache holds the turn's prompt —
// over HTTP and for WebSocket reconnects alike. When that replica is gone the requests go to
// another one, and once it is back, to it again.
//
// Environment (set by `cargo xtask deploy --test`): TETHER_BASE_URL (nginx),
// TETHER_REPLICA_URLS (replica i runs with --replica-id r<i>), TETHER_DEPLOYMENT_FILE.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import WebSocket from "ws";

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through \`cargo xtask deploy --test\``);
  return value;
}

const NGINX = required("TETHER_BASE_URL");
const REPLICAS = required("TETHER_REPLICA_URLS").split(",");
const TIMEOUT_MS = 10_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A prompt long enough for the engine's prompt cache (well past its minimum). */
const LONG_INPUT = Array.from({ length: 600 }, (_, i) => `line ${i} of the turn's context.`).join("\n");

/** The replica that answered, from nginx's `X-Tether-Upstream` (the last one tried). */
function answeredBy(upstream) {
  assert.ok(upstream, "nginx names the replica that answered");
  const last = upstream.split(",").pop().trim();
  const replica = REPLICAS.find((url) => url.endsWith(`//${last}`));
  assert.ok(replica, `${last} is one of the replicas ${REPLICAS}`);
  return replica;
}

/** The replica a token names (`t1.r<i>.…`). */
function namedBy(token) {
  const match = /^t1\.r(\d+)\./.exec(token ?? "");
  assert.ok(match, `a turn-state token: ${token}`);
  return REPLICAS[Number(match[1])];
}

/** `POST /v1/responses` through nginx, with the turn's token when given. */
async function post(body, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers["x-codex-turn-state"] = token;
  const response = await fetch(`${NGINX}/v1/responses`, {
    method: "POST",
    headers,
    body: JSON.stringify({ model: "spark", store: false, ...body }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const json = await response.json();
  assert.equal(response.status, 200, JSON.stringify(json));
  return {
    json,
    replica: answeredBy(response.headers.get("x-tether-upstream")),
    token: response.headers.get("x-codex-turn-state"),
  };
}

/** A WebSocket upgrade through nginx with `token`: the replica that took it and the token it answered. */
function upgrade(token) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${NGINX.replace(/^http/, "ws")}/v1/responses`, {
      headers: token ? { "x-codex-turn-state": token } : {},
    });
    const timer = setTimeout(() => reject(new Error("no upgrade in time")), TIMEOUT_MS);
    let answer = null;
    socket.on("upgrade", (response) => (answer = response.headers));
    socket.once("open", () => {
      clearTimeout(timer);
      socket.close();
      resolve({ replica: answeredBy(answer["x-tether-upstream"]), token: answer["x-codex-turn-state"] });
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

async function ready(url) {
  for (let i = 0; i < 200; i++) {
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(50);
  }
  throw new Error(`${url} did not come back`);
}

test("a turn's token brings its later requests back to the replica that began it, over HTTP and WebSocket", async () => {
  // Without a token nothing is sticky: round-robin reaches every replica. (A replica killed by
  // an earlier test is skipped for nginx's 2 s fail_timeout, so this waits that long at most.)
  const spread = new Set();
  for (let i = 0; i < 40 && spread.size < REPLICAS.length; i++) {
    spread.add((await post({ input: "hi" })).replica);
    if (spread.size < REPLICAS.length) await sleep(100);
  }
  assert.equal(spread.size, REPLICAS.length, "requests without a token are spread");

  // The turn's first request: its answer's token names the replica that served it.
  const first = await post({ input: LONG_INPUT });
  const home = namedBy(first.token);
  assert.equal(first.replica, home, "the token names the replica that answered");

  // Its later requests (an HTTP fallback resends the whole conversation each time): every one
  // on that replica, the token echoed unchanged, the prompt read from that replica's cache.
  for (let i = 0; i < 4; i++) {
    const later = await post({ input: LONG_INPUT }, first.token);
    assert.equal(later.replica, home, `request ${i + 2} of the turn`);
    assert.equal(later.token, first.token);
    assert.ok(later.json.usage.input_tokens_details.cached_tokens > 0, JSON.stringify(later.json.usage));
  }

  // A WebSocket reconnect of the turn goes there too, and gets the same token back.
  for (let i = 0; i < 3; i++) {
    const reconnect = await upgrade(first.token);
    assert.equal(reconnect.replica, home, `reconnect ${i + 1}`);
    assert.equal(reconnect.token, first.token);
  }
  // A fresh upgrade starts a turn of its own: a new token, naming whichever replica took it.
  const fresh = await upgrade(null);
  assert.notEqual(fresh.token, first.token);
  assert.equal(namedBy(fresh.token), fresh.replica);
});

test("when the turn's replica is gone its requests go to another replica, and once it is back to it again", async () => {
  const first = await post({ input: LONG_INPUT });
  const home = namedBy(first.token);
  const index = REPLICAS.indexOf(home);
  const deploymentFile = required("TETHER_DEPLOYMENT_FILE");
  const pid = JSON.parse(readFileSync(deploymentFile, "utf8")).replicas[index].pid;
  process.kill(pid, "SIGKILL");
  // Gone (its port refuses): nginx takes the turn's reconnect to a backup (an upgrade is a GET,
  // which nginx may send on), and for the next 2 s (fail_timeout) skips the replica for the
  // turn's POSTs too. (The deployment restarts a killed replica after 200 ms; one that was back
  // before nginx tried it takes the turn again, which is the last case.)
  const during = await upgrade(first.token);
  assert.equal(during.token, first.token, "the turn keeps its token");
  const restarted = () => JSON.parse(readFileSync(deploymentFile, "utf8")).replicas[index].pid !== pid;
  if (during.replica !== home) {
    const meanwhile = await post({ input: LONG_INPUT }, first.token);
    assert.notEqual(meanwhile.replica, home, "another replica serves the turn meanwhile");
    assert.equal(meanwhile.token, first.token);
  } else {
    assert.ok(restarted(), "only a restarted replica can have taken the reconnect");
  }
  // Back (restarted, ready, past nginx's 2 s fail_timeout): the turn returns to it. nginx marks
  // the replica down again if one of its tries lands while the restart is still binding, so on
  // a loaded machine the return can take another fail_timeout: ask until it comes back, for 10 s.
  await ready(home);
  await sleep(2200);
  let back = await post({ input: "and again" }, first.token);
  for (let i = 0; i < 40 && back.replica !== home; i++) {
    await sleep(250);
    back = await post({ input: "and again" }, first.token);
  }
  assert.equal(back.replica, home, "the turn returns to its replica once it is back");
  assert.equal(back.token, first.token);
});
