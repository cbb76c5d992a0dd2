// Cross-replica tests against a real deployment: PostgreSQL, Tether replicas sharing it, nginx in
// front (`cargo xtask deploy --test` starts it, runs these, and stops it). They talk to each
// replica directly as well as through nginx, and SIGKILL replicas mid-run.
//
// Environment (set by `cargo xtask deploy --test`):
//   TETHER_BASE_URL         nginx
//   TETHER_REPLICA_URLS     the replicas, comma-separated
//   TETHER_DEPLOYMENT_FILE  deployment.json: the replicas' current PIDs (a killed replica is
//                           restarted on its port with a new PID)
//   TETHER_POSTGRES_URL     the database, read with psql for the ledger
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
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
const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete"]);

const wsUrl = (base) => `${base.replace(/^http/, "ws")}/v1/responses`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function deployment() {
  return JSON.parse(readFileSync(required("TETHER_DEPLOYMENT_FILE"), "utf8"));
}

/** `METHOD url` with an optional JSON body: { status, body, upstream }. */
async function call(method, url, body) {
  const response = await fetch(url, {
    method,
    headers: body ? { "content-type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await response.text();
  let parsed = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (health endpoints).
  }
  return { status: response.status, body: parsed, upstream: response.headers.get("x-tether-upstream") };
}

async function create(base, body) {
  const { status, body: response, upstream } = await call("POST", `${base}/v1/responses`, { model: "m", ...body });
  assert.equal(status, 200, JSON.stringify(response));
  return { response, upstream };
}

/** A WebSocket to `base`; resolves once open, with the replica that took it (through nginx). */
function connect(base) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl(base));
    let upstream = null;
    const timer = setTimeout(() => reject(new Error(`no upgrade from ${base} within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    socket.on("upgrade", (response) => (upstream = response.headers["x-tether-upstream"] ?? null));
    socket.once("open", () => {
      clearTimeout(timer);
      resolve({ socket, upstream });
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** Sends a response.create on `socket`; resolves to the terminal event's response, rejects on an
 * error frame or a closed connection. */
function turn(socket, body) {
  return new Promise((resolve, reject) => {
    if (socket.readyState !== WebSocket.OPEN) {
      reject(Object.assign(new Error("connection closed"), { closed: true }));
      return;
    }
    const finish = (fn) => {
      clearTimeout(timer);
      socket.off("message", onMessage);
      socket.off("close", onClose);
      fn();
    };
    const timer = setTimeout(() => finish(() => reject(new Error("no terminal event in time"))), TIMEOUT_MS);
    const onMessage = (data) => {
      const event = JSON.parse(data.toString());
      if (TERMINAL.has(event.type)) {
        finish(() =>
          event.type === "response.completed"
            ? resolve(event.response)
            : reject(new Error(`${event.type}: ${JSON.stringify(event.response?.error)}`)),
        );
      } else if (event.type === "error") {
        finish(() => reject(Object.assign(new Error(`error frame ${JSON.stringify(event)}`), { frame: event })));
      }
    };
    const onClose = () => finish(() => reject(Object.assign(new Error("connection closed"), { closed: true })));
    socket.on("message", onMessage);
    socket.on("close", onClose);
    socket.send(JSON.stringify({ type: "response.create", model: "m", store: true, ...body }));
  });
}

/** A series of /metrics, summed over the replicas. */
async function metricSum(series) {
  let total = 0;
  for (const replica of REPLICAS) {
    const { status, body } = await call("GET", `${replica}/metrics`);
    assert.equal(status, 200);
    const line = body.split("\n").find((l) => l.startsWith(`${series} `));
    total += line ? Number(line.split(" ")[1]) : 0;
  }
  return total;
}

function psql(query) {
  return execFileSync("psql", [required("TETHER_POSTGRES_URL"), "-At", "-c", query], { encoding: "utf8" }).trim();
}

/** The replica listening at `url`, from deployment.json. */
function replicaAt(url) {
  const found = deployment().replicas.find((replica) => replica.url === url);
  assert.ok(found, `${url} is not in deployment.json`);
  return found;
}

/** SIGKILLs the replica at `url`, then waits until the deployment has restarted it. */
async function killAndAwaitRestart(url, during = async () => {}) {
  const before = replicaAt(url);
  process.kill(before.pid, "SIGKILL");
  await during();
  const deadline = Date.now() + 30_000;
  for (;;) {
    const now = replicaAt(url);
    if (now.restarts > before.restarts && now.pid !== before.pid) {
      const ready = await call("GET", `${url}/readyz`).catch(() => ({ status: 0 }));
      if (ready.status === 200) return;
    }
    assert.ok(Date.now() < deadline, `${url} was not restarted within 30 s`);
    await sleep(100);
  }
}

test("every replica is ready, and nginx spreads requests over all of them", async () => {
  for (const replica of REPLICAS) {
    assert.equal((await call("GET", `${replica}/readyz`)).status, 200, replica);
    assert.equal((await call("GET", `${replica}/healthz`)).status, 200, replica);
  }
  const seen = new Set();
  for (let i = 0; i < 4 * REPLICAS.length; i++) {
    const { status, upstream } = await call("GET", `${NGINX}/readyz`);
    assert.equal(status, 200);
    seen.add(upstream);
  }
  assert.equal(seen.size, REPLICAS.length, `upstreams seen: ${[...seen].join(", ")}`);
});

test("HTTP: stored through one replica, read, continued and deleted through the others", async () => {
  const [a, b] = [REPLICAS[0], REPLICAS[1 % REPLICAS.length]];
  const { response: first } = await create(a, { input: "one" });
  const read = await call("GET", `${b}/v1/responses/${first.id}`);
  assert.equal(read.status, 200);
  assert.deepEqual(read.body.output, first.output);
  const { response: second } = await create(b, { input: "two", previous_response_id: first.id });
  // Then through nginx, whichever replica it picks, several times.
  let previous = second.id;
  const upstreams = new Set();
  for (let i = 0; i < 2 * REPLICAS.length; i++) {
    const { response, upstream } = await create(NGINX, { input: `more ${i}`, previous_response_id: previous });
    upstreams.add(upstream);
    previous = response.id;
  }
  assert.equal(upstreams.size, REPLICAS.length, "the chain went through every replica");
  const items = await call("GET", `${NGINX}/v1/responses/${previous}/input_items?order=asc&limit=100`);
  assert.equal(items.status, 200);
  // Every turn's input and output before the last one's output: nothing of the chain is lost.
  assert.equal(items.body.data.length, 2 * (2 + 2 * REPLICAS.length) - 1);
  // A delete through one replica is seen by the others at once.
  assert.equal((await call("DELETE", `${b}/v1/responses/${second.id}`)).status, 200);
  for (const replica of REPLICAS) {
    assert.equal((await call("GET", `${replica}/v1/responses/${second.id}`)).status, 404, replica);
  }
  const refused = await call("POST", `${a}/v1/responses`, { model: "m", input: "x", previous_response_id: second.id });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.code, "previous_response_not_found");
});

test("HTTP: an item_reference resolves on another replica", async () => {
  const tools = [{ type: "function", name: "shell", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } }];
  const { response: first } = await create(REPLICAS[0], { input: "hi", tools });
  const call0 = first.output[0];
  assert.equal(call0.type, "function_call");
  for (const replica of REPLICAS) {
    const { response } = await create(replica, {
      tools,
      store: false,
      input: [
        { type: "message", role: "user", content: "hi" },
        { type: "item_reference", id: call0.id },
        { type: "function_call_output", call_id: call0.call_id, output: "done" },
      ],
    });
    assert.equal(response.status, "completed");
  }
});

test("WebSocket: a conversation hops from replica to replica, hydrating from the store each time", async () => {
  const hydrated = await metricSum('tether_cache_lookups_total{result="store"}');
  let previous = null;
  const hops = 2 * REPLICAS.length;
  for (let i = 0; i < hops; i++) {
    // A new connection each turn, to the next replica directly: its cache is empty.
    const { socket } = await connect(REPLICAS[i % REPLICAS.length]);
    try {
      const response = await turn(socket, { input: `hop ${i}`, ...(previous ? { previous_response_id: previous } : {}) });
      previous = response.id;
    } finally {
      socket.close();
    }
  }
  assert.equal(await metricSum('tether_cache_lookups_total{result="store"}'), hydrated + hops - 1);
  // Through nginx: two connections in a row, wherever they land, continue the same chain.
  for (let i = 0; i < 2; i++) {
    const { socket, upstream } = await connect(NGINX);
    assert.ok(upstream, "nginx names the replica on the upgrade");
    try {
      previous = (await turn(socket, { input: `via nginx ${i}`, previous_response_id: previous })).id;
    } finally {
      socket.close();
    }
  }
  const items = await call("GET", `${NGINX}/v1/responses/${previous}/input_items?order=asc&limit=100`);
  assert.equal(items.body.data.length, 2 * (hops + 2) - 1);
});

test("the usage ledger has exactly one line per response, whichever replica served it", async () => {
  const [lines, distinct] = psql("SELECT count(*), count(DISTINCT response_id) FROM usage_ledger").split("|").map(Number);
  assert.ok(lines > 0);
  assert.equal(lines, distinct);
  // Every stored response that completed or ended incomplete was billed (a background response
  // is stored from the moment it is queued; one cancelled or failed is billed nothing).
  const unbilled = Number(psql(
    "SELECT count(*) FROM responses r WHERE r.response_json::jsonb->>'status' IN ('completed', 'incomplete') " +
      "AND NOT EXISTS (SELECT 1 FROM usage_ledger l WHERE l.response_id = r.id)",
  ));
  assert.equal(unbilled, 0);
});

test("SIGKILL right after response.completed: the response is in the store, and another replica continues it", async () => {
  const [victim, survivor] = [REPLICAS[0], REPLICAS[1 % REPLICAS.length]];
  assert.notEqual(victim, survivor, "needs two replicas");
  const { socket } = await connect(victim);
  const response = await turn(socket, { input: "remember this" });
  // Killed the moment `completed` arrived: had the write been queued behind it, it would be lost.
  await killAndAwaitRestart(victim, async () => {
    const { socket: other } = await connect(survivor);
    try {
      const next = await turn(other, { input: "go on", previous_response_id: response.id });
      assert.equal(next.status, "completed");
    } finally {
      other.close();
    }
  });
  socket.terminate();
  assert.equal(Number(psql(`SELECT count(*) FROM usage_ledger WHERE response_id = '${response.id}'`)), 1);
});

test("a replica SIGKILLed mid-run: the others keep serving, and clients that reconnect continue from the store", async () => {
  const agents = 2 * REPLICAS.length;
  const turns = 12;
  const victim = REPLICAS[0];
  const victimPort = new URL(victim).port;
  let killed = false;
  let reconnects = 0;
  const failedHttp = [];

  /** One agent: a chained loop of `turns` store:true turns over one WebSocket through nginx; on
   * a lost connection it reconnects (nginx picks a live replica) and continues from its last
   * completed response. */
  async function agent(n) {
    let previous = null;
    let done = 0;
    let connection = await connect(NGINX);
    const landed = [connection.upstream];
    while (done < turns) {
      try {
        const body = { input: `agent ${n} turn ${done}`, ...(previous ? { previous_response_id: previous } : {}) };
        previous = (await turn(connection.socket, body)).id;
        done++;
        await sleep(20);
      } catch (error) {
        assert.ok(error.closed, `agent ${n}: ${error.message}`);
        reconnects++;
        connection = await connect(NGINX);
        landed.push(connection.upstream);
      }
    }
    connection.socket.close();
    return { previous, landed };
  }

  // Plain HTTP through nginx during the kill: nginx skips the dead replica.
  async function httpTraffic(until) {
    while (!until()) {
      const result = await call("POST", `${NGINX}/v1/responses`, { model: "m", input: "ping", store: false }).catch((e) => ({ status: String(e) }));
      if (result.status !== 200) failedHttp.push(result.status);
      await sleep(10);
    }
  }

  let finished = false;
  const running = Promise.all(Array.from({ length: agents }, (_, n) => agent(n)));
  const http = httpTraffic(() => finished);
  await sleep(150);
  await killAndAwaitRestart(victim, async () => {
    killed = true;
  });
  const results = await running;
  finished = true;
  await http;
  assert.ok(killed);
  assert.ok(
    results.some(({ landed }) => landed[0]?.endsWith(`:${victimPort}`)),
    `no agent was on the killed replica: ${JSON.stringify(results.map((r) => r.landed))}`,
  );
  assert.ok(reconnects > 0, "the agents on the killed replica reconnected");
  // At most the requests in flight on the replica when it died fail (502: nginx never resends a
  // POST that reached a replica); every other one was served by the others.
  assert.ok(failedHttp.length <= 2 && failedHttp.every((status) => status === 502), `failed: ${failedHttp}`);
  // Every agent's chain is whole: each turn's input and output, nothing lost to the kill.
  for (const { previous } of results) {
    const items = await call("GET", `${NGINX}/v1/responses/${previous}/input_items?order=asc&limit=100`);
    assert.equal(items.status, 200);
    assert.equal(items.body.data.length, 2 * turns - 1);
  }
});
