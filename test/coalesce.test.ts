/**
 * The connector's write coalescing, on a recording socket: what leaves at once, what is corked,
 * and where the corked writes are flushed.
 */
import assert from "node:assert/strict";
import type net from "node:net";
import { test } from "node:test";
import { coalesceWrites } from "../src/connector/fencing-connector.js";

/** A socket that records each write with the cork depth at that moment, and each flush. */
function recordingSocket() {
  const events: string[] = [];
  let depth = 0;
  const socket = {
    write(chunk: string) {
      events.push(depth > 0 ? `held ${chunk}` : `sent ${chunk}`);
      return true;
    },
    cork() {
      depth += 1;
    },
    uncork() {
      depth -= 1;
      if (depth === 0) events.push("flush");
    },
  };
  return { socket: socket as unknown as net.Socket, events, depth: () => depth };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

test("a lone write goes out at once; nothing is corked", async () => {
  const { socket, events, depth } = recordingSocket();
  coalesceWrites(socket, 4);
  socket.write("a");
  assert.deepEqual(events, ["sent a"]);
  await tick();
  assert.deepEqual(events, ["sent a"]);
  assert.equal(depth(), 0);
});

test("writes after the first in one tick are held, flushed every `batch` and at the end of the tick", async () => {
  const { socket, events, depth } = recordingSocket();
  coalesceWrites(socket, 3);
  for (const c of ["a", "b", "c", "d", "e", "f", "g"]) socket.write(c);
  assert.deepEqual(events, [
    "sent a",
    "held b",
    "held c",
    "held d",
    "flush",
    "held e",
    "held f",
    "held g",
    "flush",
  ]);
  socket.write("h");
  assert.equal(depth(), 1, "the tick has not ended: h is held");
  await tick();
  assert.deepEqual(events.slice(-2), ["held h", "flush"]);
  assert.equal(depth(), 0);
});

test("after a tick of many writes the next tick's first write is held too; after a lone write, not", async () => {
  const { socket, events } = recordingSocket();
  coalesceWrites(socket, 16);
  socket.write("a");
  socket.write("b");
  await tick();
  assert.deepEqual(events, ["sent a", "held b", "flush"]);
  socket.write("c");
  assert.deepEqual(events.slice(-1), ["held c"], "the last tick wrote two: c waits for the tick's end");
  await tick();
  assert.deepEqual(events.slice(-1), ["flush"]);
  socket.write("d");
  assert.deepEqual(events.slice(-1), ["sent d"], "the last tick wrote one: d goes out at once");
  await tick();
  socket.write("e");
  assert.deepEqual(events.slice(-1), ["sent e"]);
  await tick();
});

test("after a tick of fewer writes than `batch`, the next tick flushes at half that count, so it leaves in two parts", async () => {
  const { socket, events } = recordingSocket();
  coalesceWrites(socket, 16);
  const ten = (tag: string) => Array.from({ length: 10 }, (_, i) => `${tag}${i}`);
  for (const c of ten("a")) socket.write(c);
  await tick();
  // The first tick follows no busy one: its first write leaves alone, the rest are flushed at its end.
  assert.deepEqual(events.splice(0), [
    "sent a0",
    ...ten("a")
      .slice(1)
      .map((c) => `held ${c}`),
    "flush",
  ]);
  for (const c of ten("b")) socket.write(c);
  await tick();
  const held = ten("b").map((c) => `held ${c}`);
  assert.deepEqual(events.splice(0), [...held.slice(0, 5), "flush", ...held.slice(5), "flush"]);
  // A tick of two: the next flushes after two, and a tick of many never waits past `batch`.
  for (const c of ["c0", "c1"]) socket.write(c);
  await tick();
  events.splice(0);
  for (const c of ["d0", "d1", "d2"]) socket.write(c);
  await tick();
  assert.deepEqual(events.splice(0), ["held d0", "held d1", "flush", "held d2", "flush"]);
});
