/** HTTP helpers of the dashboard's tests: GET and JSON POST against a running dashboard. */

export async function get(
  base: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(new URL(path, base), init);
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

export const post = (base: string, path: string, body: unknown = {}, headers: Record<string, string> = {}) =>
  get(base, path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
