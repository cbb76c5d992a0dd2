// End to end: every value the page takes — typed into a field or given in its URL — is parsed
// once, and one it does not understand is said at its field (aria-invalid, the message it is
// described by) and where the run would start, naming the field and what it takes; nothing is
// sent and nothing runs, an autorun included. Then the slips a new visitor met: one set of
// defaults, Max turns for the long task, the long task's text, Copy link, plurals and labels
// cut short.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launchBrowser, plain, startServer } from "./server.mjs";

let server;
let browser;

before(async () => {
  server = await startServer(["--allow-client-conditions"]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** A page at `path` (as given: no parameters added), recording what it sends. */
async function open(path, viewport = { width: 1280, height: 800 }) {
  const page = await browser.newPage({ viewport });
  const sent = [];
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  page.on("websocket", (ws) => sent.push(`websocket ${ws.url()}`));
  page.on("request", (request) => {
    if (request.method() === "POST") sent.push(`POST ${request.url()}`);
  });
  await page.goto(server.url + path);
  return { page, sent, pageErrors };
}

/** The model list has answered (the profile is a select) and the page had time to start. */
async function settled(page) {
  await page.locator('select[data-testid="profile"]').waitFor();
  await page.waitForTimeout(800);
}

/** `pattern` anywhere in a text, not only as all of it. */
function unanchored(pattern) {
  return new RegExp(pattern.source.replace(/^\^/, "").replace(/\$$/, ""));
}

/** `field`'s control is marked invalid and described by a message matching `message`. */
async function assertInvalid(page, field, message) {
  const control = page.getByTestId(field);
  assert.equal(await control.getAttribute("aria-invalid"), "true", `${field} is marked invalid`);
  const described = await control.getAttribute("aria-describedby");
  const note = await page.locator(`[id="${described}"]`).textContent();
  assert.match(note, message, `${field}'s description`);
}

test("a typed value the page does not understand is said at the field and by Run, and nothing is sent", async () => {
  const { page, sent, pageErrors } = await open(plain("/?transport=ws"));
  await page.getByTestId("tab-agent").click();
  await settled(page);
  const cases = [
    ["rtt-ms", "-5", /^RTT must be a number of milliseconds from 0 to 1000; got "-5"$/],
    ["rtt-ms", "abc", /^RTT must be a number of milliseconds from 0 to 1000; got "abc"$/],
    ["rtt-ms", "1001", /RTT must be .* 0 to 1000; got "1001"/],
    ["up-mbit", "abc", /^Up must be empty or 0 for unlimited, or a number of Mbit\/s from 0\.1 to 100,000; got "abc"$/],
    ["down-mbit", "0.01", /^Down must be .* from 0\.1 to 100,000; got "0\.01"$/],
    ["repetitions", "99", /^Repetitions must be a whole number from 1 to 9; got "99"$/],
    ["repetitions", "abc", /^Repetitions must be a whole number from 1 to 9; got "abc"$/],
    ["max-turns", "0", /^Max turns must be a whole number from 1 to 100; got "0"$/],
    ["max-turns", "2.5", /^Max turns must be a whole number from 1 to 100; got "2\.5"$/],
    // Checked against the scenarios the server says it plays (x-tether-scenarios).
    ["scenario", "nope", /^Scenario must be one this server plays \(fix-sample-project, triage-ci-log\), or empty for the echo generator; got "nope"$/],
    // The long task's scenario reads a file the short task's project lacks, over 41 turns.
    ["scenario", "triage-ci-log", /^Scenario must be one the short task can play: triage-ci-log is the long task's \(it reads logs\/ci\.log, .* over 41 turns\), so choose Task length: long for it; got "triage-ci-log"$/],
  ];
  // The field suggests what the server says it plays that the short task can.
  assert.deepEqual(
    await page.locator("#known-scenarios option").evaluateAll((options) => options.map((o) => o.value)),
    ["fix-sample-project"],
  );
  // The button says how long a run of understood values takes, and nothing while one is not.
  assert.equal(await page.getByTestId("run-estimate").count(), 1, "an estimate");
  for (const [field, typed, message] of cases) {
    await page.getByTestId(field).fill(typed);
    assert.equal(await page.getByTestId(field).inputValue(), typed, "the field keeps what was typed");
    await assertInvalid(page, field, message);
    assert.equal(await page.getByTestId("run-estimate").count(), 0, `no estimate with ${field}=${typed}`);
    // Where the run would start, before anything is pressed.
    assert.match(await page.getByTestId("input-errors").textContent(), unanchored(message));
    await page.getByTestId("run").click();
    await page.waitForTimeout(300);
    assert.deepEqual(sent, [], `${field}=${typed}: nothing was sent`);
    assert.equal(await page.getByTestId("run-status").textContent(), "idle");
    // Run took the focus to the field in error.
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), field);
    // A value that parses replaces the error.
    const good = { repetitions: "1", "max-turns": "20", scenario: "fix-sample-project" };
    await page.getByTestId(field).fill(good[field] ?? "10");
    assert.equal(await page.getByTestId(field).getAttribute("aria-invalid"), "false");
    assert.equal(await page.getByTestId("input-errors").count(), 0);
    assert.equal(await page.getByTestId("run-estimate").count(), 1, "the estimate is back");
  }
  // With every value understood, Run runs.
  await page.getByTestId("run").click();
  await page.waitForFunction(
    () => ["done", "failed"].includes(document.querySelector('[data-testid="run-status"]')?.textContent),
    null,
    { timeout: 30_000 },
  );
  assert.equal(await page.getByTestId("run-status").textContent(), "done");
  assert.ok(sent.length >= 1);
  assert.deepEqual(pageErrors, []);
  await page.close();
});

test("the overview's conditions are checked before its button runs anything", async () => {
  const { page, sent } = await open("/");
  await settled(page);
  await page.getByTestId("rtt-ms").fill("-5");
  await assertInvalid(page, "rtt-ms", /^RTT must be a number of milliseconds from 0 to 1000; got "-5"$/);
  assert.match(await page.getByTestId("input-errors").textContent(), /RTT must be/);
  await page.getByTestId("intro-compare").click();
  await page.waitForTimeout(300);
  assert.equal(await page.getByTestId("tab-overview").getAttribute("aria-selected"), "true", "still here");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "overview-setting-rtt-ms");
  assert.deepEqual(sent, []);
  // The overview's conditions are the Agent tab's: the error is there too, and blocks Run.
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("run").waitFor();
  assert.equal(await page.getByTestId("rtt-ms").inputValue(), "-5");
  await assertInvalid(page, "rtt-ms", /RTT must be/);
  await page.close();
});

test("on the overview, bad values are not described or estimated, and each link number says its own error", async () => {
  const { page, sent } = await open("/");
  await settled(page);
  assert.match(await page.getByTestId("intro-what").textContent(), /over .*40 ms RTT/);
  await page.getByTestId("rtt-ms").fill("-5");
  await page.getByTestId("up-mbit").fill("abc");
  // The note under the link names both numbers in error, not just the first.
  const note = await page.getByTestId("link-note").textContent();
  assert.match(note, /RTT must be .*got "-5"/);
  assert.match(note, /Up must be .*got "abc"/);
  // Each field is described by its own error, not by the first one in the note.
  await assertInvalid(page, "up-mbit", /^Up must be .*got "abc"$/);
  await assertInvalid(page, "rtt-ms", /^RTT must be .*got "-5"$/);
  // A number typed for the link makes it custom, in error or not: no preset's name beside it.
  assert.equal(await page.getByTestId("link").inputValue(), "custom");
  // Nothing describes, or estimates, a run of values the page did not understand.
  assert.doesNotMatch(await page.getByTestId("intro-what").textContent(), /RTT|Mbit/);
  assert.equal(await page.getByTestId("intro-estimate").count(), 0, "no estimate");
  await page.getByTestId("rtt-ms").fill("40");
  await page.getByTestId("up-mbit").fill("20");
  assert.equal(await page.getByTestId("input-errors").count(), 0);
  assert.match(await page.getByTestId("intro-estimate").textContent(), /^ · (about \d|a few)/);
  assert.deepEqual(sent, []);
  await page.close();
});

test("a URL value in error whose field is on the Agent tab leads there from the overview", async () => {
  const { page, sent } = await open("/?repetitions=99");
  await settled(page);
  assert.match(await page.getByTestId("input-errors").textContent(), /The URL's repetitions: Repetitions must be/);
  const lead = page.getByTestId("input-error-elsewhere");
  assert.match(await lead.textContent(), /Repetitions is on the Agent tab/);
  await lead.click();
  assert.equal(await page.getByTestId("tab-agent").getAttribute("aria-selected"), "true");
  // The field itself, in view, has the focus.
  await page.waitForFunction(() => document.activeElement?.id === "setting-repetitions");
  await assertInvalid(page, "repetitions", /Repetitions must be/);
  assert.deepEqual(sent, []);
  await page.close();
});

// The overview's button replaces the transport with a comparison: a transport the URL gave
// in error still stops it, as any value the page did not understand does.
for (const [bad, id] of [
  ["transport=carrier", "setting-transport"],
  ["repetitions=99", "setting-repetitions"],
]) {
  test(`the overview's button with ${bad} runs nothing and leads to the field`, async () => {
    const { page, sent, pageErrors } = await open(`/?task_length=short&profile=instant&link=loopback&${bad}`);
    await settled(page);
    assert.equal(await page.getByTestId("intro-estimate").count(), 0, "no estimate");
    await page.getByTestId("intro-compare").click();
    assert.equal(await page.getByTestId("tab-agent").getAttribute("aria-selected"), "true");
    await page.waitForFunction((id) => document.activeElement?.id === id, id);
    await page.waitForTimeout(500);
    assert.equal(await page.getByTestId("run-status").textContent(), "idle", "nothing started");
    assert.deepEqual(sent, [], "nothing was sent");
    // The value in error stays as the URL gave it, still in error.
    assert.equal(await page.locator(`#${id}`).getAttribute("aria-invalid"), "true");
    assert.deepEqual(pageErrors, []);
    await page.close();
  });
}

/** URL values the page does not understand, each with what its field says of it. */
const BAD_URLS = [
  ["profile=bogus", "profile", /The URL's profile: Model speed \(profile\) must be one this server offers: .*tether-sim.*; got "bogus"/],
  ["link=mars", "link", /The URL's link: Network link must be one of loopback, same-region, home-uplink, other-continent, or custom; got "mars"/],
  ["repetitions=99", "repetitions", /The URL's repetitions: Repetitions must be a whole number from 1 to 9; got "99"/],
  ["link=loopback&rtt_ms=5", "link", /The URL's link: Network link must be custom or left out when the URL also gives the link's numbers \(rtt_ms\); got "loopback"/],
  ["rtt_ms=-3", "rtt-ms", /The URL's rtt_ms: RTT must be a number of milliseconds from 0 to 1000; got "-3"/],
  ["up_mbit=abc", "up-mbit", /The URL's up_mbit: Up must be .*; got "abc"/],
  ["max_turns=abc", "max-turns", /The URL's max_turns: Max turns must be a whole number from 1 to 100; got "abc"/],
  ["task_length=huge", "task-length", /The URL's task_length: Task length must be short or long; got "huge"/],
  ["api_costs=free", "api-costs", /The URL's api_costs: API costs must be one of server, local, or hosted; got "free"/],
  ["transport=pigeon", "transport", /The URL's transport: Transport must be one of http, ws, .*; got "pigeon"/],
  ["scenario=nope", "scenario", /The URL's scenario: Scenario must be one this server plays \(fix-sample-project, triage-ci-log\), or empty for the echo generator; got "nope"/],
];

for (const [bad, field, message] of BAD_URLS) {
  test(`${bad} in an autorun link is said at its field and by Run, and nothing runs`, async () => {
    // The short task, so that every field counts (the long one locks Max turns).
    const { page, sent, pageErrors } = await open(
      `/?transport=compare&task_length=short&profile=instant&${bad}&autorun=1`,
    );
    await page.getByTestId("run").waitFor();
    await settled(page);
    assert.match(await page.getByTestId("input-errors").textContent(), message);
    await assertInvalid(page, field, message);
    assert.equal(await page.getByTestId("run-status").textContent(), "idle", "the autorun did not start");
    assert.deepEqual(sent, [], "nothing was sent");
    if (field === "profile") {
      // Said whole at the field, what was given last included: the note is not cut to two lines.
      const note = page.locator('[data-testid="profile-note"]').first();
      const cut = await note.evaluate((el) => el.scrollHeight - el.clientHeight);
      assert.ok(cut <= 1, `the profile's error is cut by ${cut}px`);
    }
    if (/^(rtt_ms|up_mbit)=/.test(bad)) {
      // A link's number in error makes the link custom: no preset's name beside it.
      assert.equal(await page.locator('select[data-testid="link"]').inputValue(), "custom");
    }
    assert.deepEqual(pageErrors, []);
    await page.close();
  });
}

// A parameter the page does not have (a typo of one it has) or a flag's value that is not one
// is not guessed at: the page says so at its top, and the autorun starts nothing.
for (const [bad, said] of [
  ["repetition=1", /repetition=1: not a parameter of this page/],
  ["long_running=maybe", /long_running=maybe: takes 1 or 0 \(true or false\)/],
]) {
  test(`${bad} in an autorun link is said, and nothing runs`, async () => {
    const { page, sent, pageErrors } = await open(
      `/?transport=compare&task_length=short&profile=instant&link=loopback&${bad}&autorun=1`,
    );
    await settled(page);
    const notices = await page.getByTestId("notices").textContent();
    assert.match(notices, /^The URL gave what this page does not read — /);
    assert.match(notices, said);
    assert.match(notices, /The autorun started nothing: the form shows what a run would use\.$/);
    assert.equal(await page.getByTestId("tab-overview").getAttribute("aria-selected"), "true");
    assert.deepEqual(sent, [], "nothing was sent");
    assert.deepEqual(pageErrors, []);
    await page.close();
  });
}

test("autorun=yes is not a flag's value: nothing runs", async () => {
  const { page, sent, pageErrors } = await open("/?task_length=short&profile=instant&link=loopback&autorun=yes");
  await settled(page);
  assert.match(await page.getByTestId("notices").textContent(), /autorun=yes: takes 1 or 0/);
  assert.deepEqual(sent, [], "nothing was sent");
  assert.deepEqual(pageErrors, []);
  await page.close();
});

test("a link's bad values at fields the long task does not use still stop its run", async () => {
  const { page, sent, pageErrors } = await open(
    "/?transport=compare&task_length=long&profile=instant&max_turns=999&scenario=nope&autorun=1",
  );
  await page.getByTestId("run").waitFor();
  await settled(page);
  const said = await page.getByTestId("input-errors").textContent();
  assert.match(said, /The URL's scenario: Scenario must be one this server plays .*; got "nope"/);
  assert.match(said, /The URL's max_turns: Max turns must be a whole number from 1 to 100; got "999"/);
  assert.equal(await page.getByTestId("run-status").textContent(), "idle", "the autorun did not start");
  assert.deepEqual(sent, [], "nothing was sent");
  // The fields stay open with the URL's values until they are corrected.
  assert.equal(await page.getByTestId("max-turns").inputValue(), "999");
  assert.equal(await page.getByTestId("max-turns").isDisabled(), false);
  await page.getByTestId("max-turns").fill("30");
  assert.equal(await page.getByTestId("max-turns").isDisabled(), true, "locked again once corrected");
  assert.deepEqual(pageErrors, []);
  await page.close();
});

test("an embedded demo with a bad URL value says so where its run would start, and does not run", async () => {
  const { page, sent } = await open("/?embed=1&transport=compare&rtt_ms=-3&repetitions=99&autorun=1", {
    width: 720,
    height: 520,
  });
  await page.getByTestId("run").waitFor();
  await page.waitForTimeout(1500);
  const said = await page.getByTestId("input-errors").textContent();
  assert.match(said, /The URL's rtt_ms: RTT must be .*; got "-3"/);
  assert.match(said, /The URL's repetitions: Repetitions must be .*; got "99"/);
  assert.equal(await page.getByTestId("run-status").textContent(), "idle");
  // Run is there, and refuses the same way.
  await page.getByTestId("run").click();
  await page.waitForTimeout(300);
  assert.equal(await page.getByTestId("run-status").textContent(), "idle");
  assert.deepEqual(sent, []);
  await page.close();
});

test("the overview and the Agent tab start from the same defaults", async () => {
  const { page } = await open("/");
  await settled(page);
  const conditions = async () => ({
    task: await page.getByTestId("task-length").inputValue(),
    profile: await page.getByTestId("profile").inputValue(),
    link: await page.getByTestId("link").inputValue(),
    costs: await page.getByTestId("api-costs").inputValue(),
  });
  const overview = await conditions();
  assert.deepEqual(overview, { task: "long", profile: "spark", link: "home-uplink", costs: "hosted" });
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("run").waitFor();
  await settled(page);
  assert.deepEqual(await conditions(), overview);
  await page.close();
});

test("the long task fixes its own turns and its text, and says so", async () => {
  const { page } = await open("/?task_length=long&max_turns=3");
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("run").waitFor();
  assert.equal(await page.getByTestId("max-turns").isDisabled(), true);
  assert.match(await page.getByTestId("max-turns-note").textContent(), /The long rollout takes its own 41 turns/);
  const task = await page.getByTestId("task").inputValue();
  assert.match(task, /find which tests fail and why/);
  assert.doesNotMatch(task, / {2}/, "no run of spaces");
  // The short task takes the limit again.
  await page.getByTestId("task-length").selectOption("short");
  assert.equal(await page.getByTestId("max-turns").isDisabled(), false);
  assert.equal(await page.getByTestId("max-turns").inputValue(), "3");
  await page.close();
});

test("Copy link opens the same settings with the button, and starts nothing", async () => {
  const { page } = await open(plain("/?transport=compare&repetitions=1&link=same-region"));
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("copy-link").click();
  const link = await page.getByTestId("share-link").inputValue();
  assert.doesNotMatch(link, /autorun/);
  assert.match(link, /transport=compare/);
  assert.match(link, /repetitions=1/);
  assert.match(link, /task_length=short&link=same-region&api_costs=server/);
  await page.close();

  const shared = await browser.newPage();
  const sockets = [];
  shared.on("websocket", (ws) => sockets.push(ws.url()));
  await shared.goto(link);
  await shared.getByTestId("overview").waitFor();
  await shared.waitForTimeout(1500);
  assert.equal(await shared.getByTestId("tab-overview").getAttribute("aria-selected"), "true");
  assert.equal(await shared.getByTestId("link").inputValue(), "same-region");
  assert.match(await shared.getByTestId("intro-what").textContent(), /short demo.*10 ms RTT.*then 1 repetition\. You get its saving, why/);
  assert.ok(await shared.getByTestId("intro-compare").isVisible());
  assert.deepEqual(sockets, [], "nothing ran");
  await shared.close();
});

test("no dropdown option's label is cut, on the first screen and the Agent tab, at 1280×800 and 390×844", async () => {
  for (const [viewport, tab] of [
    [{ width: 1280, height: 800 }, "overview"],
    [{ width: 390, height: 844 }, "overview"],
    [{ width: 1280, height: 800 }, "agent"],
    [{ width: 390, height: 844 }, "agent"],
  ]) {
    const { page } = await open("/", viewport);
    await settled(page);
    if (tab === "agent") {
      await page.getByTestId("tab-agent").click();
      await page.getByTestId("run").waitFor();
    }
    const cut = await page.evaluate(() => {
      const canvas = document.createElement("canvas").getContext("2d");
      const found = [];
      for (const select of document.querySelectorAll("select")) {
        if (select.offsetParent === null) continue; // not shown on this tab
        const style = getComputedStyle(select);
        canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        // Every option, since any may be chosen: its text, the padding and the arrow.
        const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
        for (const option of select.options) {
          const width = canvas.measureText(option.text).width;
          if (width > room) found.push(`${select.dataset.testid}: "${option.text}" needs ${Math.ceil(width)}px of ${Math.floor(room)}px`);
        }
      }
      return found;
    });
    assert.deepEqual(cut, [], `${tab}, ${viewport.width}×${viewport.height}`);
    await page.close();
  }
});
