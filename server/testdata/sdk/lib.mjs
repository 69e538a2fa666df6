// Helpers of the LangGraph SDK scripts (driven by server/sdk_test.go):
// the pinned client, assertions that throw naming what failed, and the
// test-only endpoints that start and end the Sleepy workflow's naps.
import { Client } from "../../../test/langgraph-sdk/index.mjs";

export const url = process.env.WEFT_URL;
if (!url) {
  console.error("WEFT_URL is not set: run these scripts through go test ./server/ -run SDK");
  process.exit(2);
}

/** client is an unmodified LangGraph client of the server under test,
 * sending apiKey as x-api-key when given. */
export function client(apiKey = null) {
  return new Client({ apiUrl: url, apiKey });
}

const show = (v) => JSON.stringify(v);

/** ok throws "what" when cond is false, showing got. */
export function ok(cond, what, got) {
  if (!cond) throw new Error(`${what}${got === undefined ? "" : `: got ${show(got)}`}`);
}

/** canon is v with object keys sorted, for comparisons. */
function canon(v) {
  if (Array.isArray(v)) return v.map(canon);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]));
  }
  return v;
}

/** eq throws unless got and want are the same JSON values. */
export function eq(got, want, what) {
  if (show(canon(got)) !== show(canon(want))) {
    throw new Error(`${what}:\n  got  ${show(got)}\n  want ${show(want)}`);
  }
}

/** fails awaits p and checks it throws the SDK's HTTPError of status
 * (whose body contains text, when given); it returns the error. */
export async function fails(p, status, what, text) {
  let res;
  try {
    res = await p;
  } catch (e) {
    ok(e.status === status, `${what}: want HTTP ${status}, got ${e.status ?? e}`, e.message);
    if (text !== undefined) ok(String(e.text).includes(text), `${what}: the error body names ${show(text)}`, e.text);
    return e;
  }
  throw new Error(`${what}: want HTTP ${status}, it succeeded with ${show(res)}`);
}

/** events reads a stream of the SDK to its end. */
export async function events(stream) {
  const out = [];
  for await (const part of stream) out.push(part);
  return out;
}

/** started waits for the next nap of Sleepy to start; it returns its text. */
export async function started() {
  const r = await fetch(`${url}/__test/started`);
  ok(r.ok, "a nap starts", await r.clone().text());
  return r.json();
}

/** release lets one nap of Sleepy end. */
export async function release() {
  const r = await fetch(`${url}/__test/release`, { method: "POST" });
  ok(r.ok, "a nap is released", await r.text());
}

// A request started earlier and not awaited yet that fails is a failure
// of the script too, said as such.
process.on("unhandledRejection", (e) => {
  console.error(`FAIL: a request not awaited yet failed: ${e?.stack ?? e}`);
  process.exit(1);
});

/** main runs fn, and exits 1 with the failure when it throws. */
export async function main(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
  } catch (e) {
    console.error(`FAIL ${name}: ${e.stack ?? e}`);
    process.exit(1);
  }
  console.log(`${name}: ok (${Date.now() - t0} ms)`);
}

/** step logs what a script checks next, so a failure shows where it was. */
export function step(what) {
  console.log(`- ${what}`);
}
