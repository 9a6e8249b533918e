/**
 * Brands a module node: `EMQ.INSTALL 1 {emq}:version` on a one-off socket (boot commands, no
 * fence, since the install is what sets the brand). Returns 1 when it wrote the brand, 0 when the
 * node already had it; the module's `EMQWIRE` refusal becomes a `VersionFenceError`.
 */
import net from "node:net";
import { ConnectionError, ServerError, VersionFenceError } from "../errors.js";
import { VERSION_KEY } from "../keyspace.js";
import type { ConnectOptions } from "./connection.js";
import { WIRE6_BRAND } from "./fence.js";
import { RawSession, RespError } from "./resp.js";

export async function installModuleBrand(options: ConnectOptions = {}): Promise<0 | 1> {
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? 6379;
  const socket = net.connect({ host, port });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", (err) =>
      reject(new ConnectionError(`cannot reach valkey at ${host}:${port}: ${err.message}`, err)),
    );
  });
  const session = new RawSession(socket);
  try {
    if (options.password !== undefined) {
      const auth = options.username
        ? ["AUTH", options.username, options.password]
        : ["AUTH", options.password];
      const reply = await session.send(auth);
      if (reply instanceof RespError) throw new ServerError(reply.message);
    }
    if (options.db) await session.send(["SELECT", options.db]);
    const reply = await session.send(["EMQ.INSTALL", 1, VERSION_KEY]);
    if (reply instanceof RespError) {
      const found = /^EMQWIRE expected \S+ found (.*)$/.exec(reply.message);
      if (found) throw new VersionFenceError(WIRE6_BRAND, found[1]!, "EMQ.INSTALL refused");
      throw new ServerError(reply.message);
    }
    return reply === 1 ? 1 : 0;
  } finally {
    session.detach();
    socket.destroy();
  }
}
