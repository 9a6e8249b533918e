/**
 * Checks that every relative link in README.md, docs/*.md and bench/README.md reaches a file that
 * exists and, for a link into a Markdown file, a heading it holds (GitHub's anchors), and that
 * README.md stays a front door (at most 300 lines).
 *
 *   npx tsx scripts/doc-links.ts    # exit 1 naming every broken link
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const README_MAX_LINES = 300;

/** The Markdown files whose links are checked, relative to the root. */
function docFiles(root = ROOT): string[] {
  const docs = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md"));
  return ["README.md", "bench/README.md", ...docs.map((f) => `docs/${f}`)];
}

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchors for the headings of a Markdown text (a repeated one gets `-1`, `-2`, …). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6} (.*)$/gm)) {
    const slug = (m[1] ?? "")
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Every broken relative link of `file`, as `file: target (why)`. */
function brokenLinks(file: string, root = ROOT): string[] {
  const path = join(root, file);
  const text = readFileSync(path, "utf8");
  const broken: string[] = [];
  for (const m of prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1] ?? "";
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [pathPart = "", anchor] = target.split("#", 2);
    const dest = pathPart === "" ? path : resolve(dirname(path), decodeURIComponent(pathPart));
    if (!existsSync(dest)) {
      broken.push(`${file}: ${target} (no file ${relative(root, dest)})`);
      continue;
    }
    if (anchor !== undefined && dest.endsWith(".md") && !anchors(readFileSync(dest, "utf8")).has(anchor)) {
      broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(root, dest)})`);
    }
  }
  return broken;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = docFiles();
  const broken = files.flatMap((f) => brokenLinks(f));
  const readmeLines = readFileSync(join(ROOT, "README.md"), "utf8").split("\n").length - 1;
  if (readmeLines > README_MAX_LINES) {
    broken.push(
      `README.md: ${readmeLines} lines, over ${README_MAX_LINES}: move the detail into a guide in docs/`,
    );
  }
  if (broken.length > 0) {
    console.error(`broken documentation links:\n${broken.join("\n")}`);
    process.exit(1);
  }
  console.log(`doc links: ${files.length} files, every relative link reaches its file and heading`);
}
