import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Headless Chromium: CHROMIUM_BIN when set (only it), else Debian's `chromium` on PATH; null when there is none. */
export function findChromium(): string | null {
  const candidates = process.env.CHROMIUM_BIN ? [process.env.CHROMIUM_BIN] : ['chromium', 'chromium-browser', 'google-chrome'];
  for (const c of candidates) {
    try {
      execFileSync(c, ['--version'], { stdio: 'ignore', timeout: 20_000 });
      return c;
    } catch {
      // next
    }
  }
  return null;
}

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--hide-scrollbars', '--mute-audio'];

/**
 * One Chromium run with a fresh profile folder, removed afterwards. On timeout the whole
 * process group we started is killed (Chromium forks helpers).
 */
export function chromium(bin: string, args: string[], timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const profile = mkdtempSync(join(tmpdir(), 'rj-chromium-'));
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [...FLAGS, `--user-data-dir=${profile}`, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    });
  });
}
