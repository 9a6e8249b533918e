/**
 * `ECHOMQ_SCREENSHOTS=<dir>`: the dashboard's views shot there as `dashboard-<name>.png` (wire 6
 * only, one picture per view), as `docs/` holds them: `ECHOMQ_SCREENSHOTS=docs` refreshes them.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";

export async function shot(page: Page, name: string, wire: number): Promise<void> {
  const shots = process.env.ECHOMQ_SCREENSHOTS;
  if (!shots || wire !== 6) return;
  await mkdir(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `dashboard-${name}.png`), fullPage: true });
}
