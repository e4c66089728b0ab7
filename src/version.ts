/**
 * tablegate's own version, read once from package.json (one level up from src/ and dist/ alike).
 * Shown by `GET /` and in the API description.
 */
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    const file = new URL('../package.json', import.meta.url);
    return String(JSON.parse(readFileSync(file, 'utf8')).version ?? '0.0.0');
  } catch {
    return '0.0.0';
  }
}

export const VERSION = readVersion();
