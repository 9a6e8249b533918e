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
