/**
 * Pinned script bodies. `harness/pins.json` names a commit of this repository and, for each
 * script, the SHA-1 and SHA-256 of its assembled body at that commit: the script with the pieces
 * it includes (src/scripts/assemble.ts), every file read from the commit (`git show
 * <commit>:src/scripts/<name>.lua`, `…/lib/<piece>.lua`, `protocol/verbs/*.json`). The harness
 * checks both digests, and refuses to measure when any differs, or when a pinned body is not the
 * working tree's assembled body.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { assemble, type PieceReader, type ScriptData } from "../src/scripts/assemble.js";
import { parseProtocol, type ProtocolFiles, readProtocolFiles } from "../src/verbs/index.js";

const SCRIPTS_DIR = "src/scripts";

interface ScriptPin {
  sha1: string;
  sha256: string;
}

interface Pins {
  commit: string;
  scripts: Record<string, ScriptPin>;
}

/** The harness refuses to measure: a pin is missing, a digest differs, or a body is not the tree's. */
export class PinError extends Error {
  override readonly name = "PinError";
}

export function digests(body: Buffer): ScriptPin {
  return {
    sha1: createHash("sha1").update(body).digest("hex"),
    sha256: createHash("sha256").update(body).digest("hex"),
  };
}

function git(repo: string, args: string[]): Buffer {
  try {
    return execFileSync("git", ["-C", repo, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 1 << 28,
    });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new PinError(`git ${args.join(" ")} failed in ${repo}: ${stderr || String(err)}`);
  }
}

/** The protocol data (loaded by the one reader, `parseProtocol`), by the script each verb names. */
function byScript(files: ProtocolFiles): Map<string, ScriptData> {
  const { protocol, verbs } = parseProtocol(files);
  const data = new Map<string, ScriptData>();
  for (const spec of verbs.values())
    if (spec.script) data.set(spec.script, { spec, grammars: protocol.grammars });
  return data;
}

/** The protocol data at `commit`, by script. */
const dataAt = new Map<string, Map<string, ScriptData>>();
function scriptDataAt(repo: string, commit: string): Map<string, ScriptData> {
  const key = `${repo}\0${commit}`;
  let data = dataAt.get(key);
  if (!data) {
    const files = git(repo, ["ls-tree", "--name-only", `${commit}`, "protocol/verbs/"])
      .toString()
      .split("\n")
      .filter((f) => f.endsWith(".json"));
    // The data as committed then, unchecked: the schema of that commit need not be this one's.
    data = byScript({
      protocol: git(repo, ["show", `${commit}:protocol/protocol.json`]).toString(),
      verbs: new Map(
        files.map((f) => [f.slice(f.lastIndexOf("/") + 1), git(repo, ["show", `${commit}:${f}`]).toString()]),
      ),
    });
    dataAt.set(key, data);
  }
  return data;
}

/** The scripts folder's files at a commit (path → text once read). */
const filesAt = new Map<string, Map<string, string | undefined>>();

/** A script's assembled body, every file read as committed at `commit`. */
function bodyAt(repo: string, commit: string, name: string): Buffer {
  const key = `${repo}\0${commit}`;
  let files = filesAt.get(key);
  if (!files) {
    files = new Map();
    const listed = git(repo, ["ls-tree", "-r", "--name-only", commit, `${SCRIPTS_DIR}/`]).toString();
    for (const file of listed.split("\n").filter((f) => f.endsWith(".lua"))) files.set(file, undefined);
    filesAt.set(key, files);
  }
  const held = files;
  const read: PieceReader = (path) => {
    const file = `${SCRIPTS_DIR}/${path}`;
    if (!held.has(file)) return undefined;
    let text = held.get(file);
    if (text === undefined) {
      text = git(repo, ["show", `${commit}:${file}`]).toString();
      held.set(file, text);
    }
    return text;
  };
  return Buffer.from(assemble(name, read, scriptDataAt(repo, commit).get(name)));
}

/** A script's assembled body as the working tree holds it (its pieces and protocol data too). */
export function bodyInTree(repo: string, name: string): Buffer {
  const read: PieceReader = (path) => {
    const file = join(repo, SCRIPTS_DIR, path);
    return existsSync(file) ? readFileSync(file, "utf8") : undefined;
  };
  const data = byScript(readProtocolFiles(pathToFileURL(join(repo, "protocol") + "/")));
  return Buffer.from(assemble(name, read, data.get(name)));
}

/** The script names (`<name>.lua`) in the working tree's scripts folder, sorted. */
export function treeScripts(repo: string): string[] {
  return readdirSync(join(repo, SCRIPTS_DIR))
    .filter((f) => f.endsWith(".lua"))
    .map((f) => f.slice(0, -4))
    .sort();
}

export function readPins(file: string): Pins {
  if (!existsSync(file)) {
    throw new PinError(`no pin file at ${file}: run 'npm run harness:pin' (see harness/README.md)`);
  }
  const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<Pins>;
  if (typeof parsed.commit !== "string" || !/^[0-9a-f]{40}$/.test(parsed.commit)) {
    throw new PinError(`${file}: "commit" must be a full 40-hex commit id`);
  }
  if (typeof parsed.scripts !== "object" || parsed.scripts === null) {
    throw new PinError(`${file}: "scripts" must map each script to its sha1 and sha256`);
  }
  return parsed as Pins;
}

/**
 * Reads every pinned body from the pinned commit and checks it against its two digests, then
 * against the working tree. Returns the bodies (name → bytes). Throws `PinError` naming the script
 * and both digests (expected vs got) on the first mismatch.
 */
export function verifyPins(repo: string, pins: Pins): Map<string, Buffer> {
  const bodies = new Map<string, Buffer>();
  const pinned = Object.keys(pins.scripts).sort();
  const inTree = treeScripts(repo);
  const unpinned = inTree.filter((name) => !pinned.includes(name));
  if (unpinned.length > 0) {
    throw new PinError(
      `script(s) without a pin: ${unpinned.map((n) => `${SCRIPTS_DIR}/${n}.lua`).join(", ")}; ` +
        "commit them, then run 'npm run harness:pin' and commit harness/pins.json",
    );
  }
  for (const name of pinned) {
    const pin = pins.scripts[name]!;
    const body = bodyAt(repo, pins.commit, name);
    const got = digests(body);
    for (const alg of ["sha1", "sha256"] as const) {
      if (got[alg] !== pin[alg]) {
        throw new PinError(
          `refusing to measure: ${SCRIPTS_DIR}/${name}.lua at pinned commit ${pins.commit.slice(0, 12)} ` +
            `does not match its pin: sha1 expected ${pin.sha1} got ${got.sha1}; ` +
            `sha256 expected ${pin.sha256} got ${got.sha256}`,
        );
      }
    }
    const treeFile = join(repo, SCRIPTS_DIR, `${name}.lua`);
    if (!existsSync(treeFile)) {
      throw new PinError(`pinned script ${name} is not in the working tree (${treeFile}); re-pin`);
    }
    const tree = digests(bodyInTree(repo, name));
    if (tree.sha1 !== got.sha1 || tree.sha256 !== got.sha256) {
      throw new PinError(
        `refusing to measure: ${SCRIPTS_DIR}/${name}.lua in the working tree differs from its pinned body: ` +
          `sha1 pinned ${got.sha1} tree ${tree.sha1}; sha256 pinned ${got.sha256} tree ${tree.sha256}. ` +
          "Commit the script change, run 'npm run harness:pin', commit harness/pins.json",
      );
    }
    bodies.set(name, body);
  }
  return bodies;
}

/**
 * Pins HEAD: every script of the working tree, read from HEAD. Refuses when a script has
 * uncommitted changes (the pinned commit must contain the scripts being measured).
 */
export function pinHead(repo: string): Pins {
  const commit = git(repo, ["rev-parse", "HEAD"]).toString().trim();
  const scripts: Record<string, ScriptPin> = {};
  for (const name of treeScripts(repo)) {
    const body = bodyAt(repo, commit, name);
    const tree = bodyInTree(repo, name);
    if (!tree.equals(body)) {
      throw new PinError(
        `${SCRIPTS_DIR}/${name}.lua has changes HEAD does not contain (the script, a piece it includes or ` +
          "its protocol data): commit them first, then re-pin",
      );
    }
    scripts[name] = digests(body);
  }
  return { commit, scripts };
}

export function writePins(file: string, pins: Pins): void {
  writeFileSync(file, `${JSON.stringify(pins, null, 2)}\n`);
}
