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
  socket.write("i");
  assert.deepEqual(events.slice(-1), ["sent i"], "a new tick: the first write goes out at once again");
  await tick();
});
