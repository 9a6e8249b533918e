/**
 * Brands a module node: `EMQ.INSTALL 1 <version>` (the brand key) on a one-off socket (the connection's
 * boot commands — TLS, AUTH, SELECT — and its timeout, but no fence, since the install is what
 * sets the brand). On a cluster (`nodes`) it goes to the first seed and follows `MOVED` to the
 * node that owns the record's slot (the module declares the key, so the server redirects it).
 * Returns 1 when it wrote the brand, 0 when the record already had it; the module's `EMQWIRE`
 * refusal becomes a `VersionFenceError`.
 */
import { ServerError, VersionFenceError } from "../errors.js";
import { VERSION_KEY } from "../keyspace.js";
import { WIRE6_BRAND } from "../engine/fence.js";
import { FencingConnector } from "./fencing-connector.js";
import { resolveConnectForms } from "./forms.js";
import { type ConnectOptions, checkConnectOptions, dialOf } from "./options.js";
import { RespError } from "../resp.js";

const MAX_REDIRECTS = 16;

export async function installModuleBrand(input: string | ConnectOptions = {}): Promise<0 | 1> {
  const options: ConnectOptions = { ...resolveConnectForms(input), wire: 6 };
  const { host, port, nodes, timeoutMs } = checkConnectOptions(options);
  const noFence = async () => {};
  let target = nodes?.[0] ?? { host, port };
  for (let redirects = 0; ; redirects++) {
    const connector = new FencingConnector(
      { ...target, tls: options.tls },
      { username: options.username, password: options.password, db: options.db, name: options.name },
      noFence,
      timeoutMs,
    );
    const reply = await connector.once((send) => send(["EMQ.INSTALL", 1, VERSION_KEY]));
    if (!(reply instanceof RespError)) return reply === 1 ? 1 : 0;
    const moved = /^MOVED \d+ (\S+)$/.exec(reply.message);
    if (moved && nodes && redirects < MAX_REDIRECTS) {
      target = dialOf(moved[1]!, options.natMap);
      continue;
    }
    const found = /^EMQWIRE expected \S+ found (.*)$/.exec(reply.message);
    const node = nodes ? `${target.host}:${target.port}` : undefined;
    if (found) throw new VersionFenceError(WIRE6_BRAND, found[1]!, "EMQ.INSTALL refused", node);
    throw new ServerError(reply.message);
  }
}
