/** The Prometheus text format, read back in tests. */

/** `name{a="x",b="y"} value` lines → a map from `name{a="x",b="y"}` to the number. */
export function parseSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}
