/**
 * The package as a user gets it: `npm pack` of the repository (its built dist/) into a new temp
 * dir, and the tarball installed into a scratch project there (dependencies from the npm cache
 * when there, else the registry; the optional platform packages npm skips when unpublished).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const run = promisify(execFile);
export const REPO = fileURLToPath(new URL("../..", import.meta.url));

export interface Scratch {
  /** The temp dir: the tarball and `app/`. */
  dir: string;
  /** The scratch project, the package installed in its node_modules. */
  app: string;
  /** The tarball's files. */
  packed: string[];
}

/** `npm install` of tarballs (or folders) in the scratch project, as offline as the cache allows. */
export async function npmInstall(app: string, specs: string[]): Promise<void> {
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...specs], {
    cwd: app,
    timeout: 120_000,
  });
}

export async function packAndInstall(prefix: string): Promise<Scratch> {
  assert.ok(existsSync(join(REPO, "dist", "src")), "dist/ is missing: run `npm run build` first");
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: REPO });
  const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  const app = join(dir, "app");
  await mkdir(app);
  await writeFile(join(app, "package.json"), JSON.stringify({ name: "scratch", private: true }));
  await npmInstall(app, [join(dir, info!.filename)]);
  return { dir, app, packed: info!.files.map((file) => file.path) };
}
