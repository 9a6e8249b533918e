/**
 * Brands a module node: `EMQ.INSTALL 1 {emq}:version` on a one-off socket (the connection's
 * boot commands — TLS, AUTH, SELECT — and its timeout, but no fence, since the install is what
 * sets the brand). Returns 1 when it wrote the brand, 0 when the node already had it; the
 * module's `EMQWIRE` refusal becomes a `VersionFenceError`.
 */
import { ServerError, VersionFenceError } from "../errors.js";
import { VERSION_KEY } from "../keyspace.js";
import { type ConnectOptions, checkConnectOptions } from "./connection.js";
import { WIRE6_BRAND } from "./fence.js";
import { FencingConnector } from "./fencing-connector.js";
import { RespError } from "./resp.js";

export async function installModuleBrand(options: ConnectOptions = {}): Promise<0 | 1> {
  const { host, port, timeoutMs } = checkConnectOptions({ ...options, wire: 6 });
  const noFence = async () => {};
  const connector = new FencingConnector(
    { host, port, tls: options.tls },
    { username: options.username, password: options.password, db: options.db, name: options.name },
    noFence,
    timeoutMs,
  );
  const reply = await connector.once((send) => send(["EMQ.INSTALL", 1, VERSION_KEY]));
  if (reply instanceof RespError) {
    const found = /^EMQWIRE expected \S+ found (.*)$/.exec(reply.message);
    if (found) throw new VersionFenceError(WIRE6_BRAND, found[1]!, "EMQ.INSTALL refused");
    throw new ServerError(reply.message);
  }
  return reply === 1 ? 1 : 0;
}
